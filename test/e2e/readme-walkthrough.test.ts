// The README's walk-through, run exactly as written (the fenced block under its heading, through
// bash) against the compiled binary, in a scratch directory where `./dist/svc-ext` is ours. Only
// the port differs: the environment gives the server a free one (SVC_SETTING_http__port) and the
// block reads the address from $SVC, as the README allows.
import { afterAll, expect, test } from 'bun:test'
import { readmeBlock, runReadmeBlock, stopReadmeBlocks } from '../helpers/readme-block'

const HEADING = '### Walk-through'

afterAll(stopReadmeBlocks)

test('the README walk-through works on a machine without the Engine', async () => {
  const block = readmeBlock(HEADING)
  // The block names the trial setting and no Engine socket: the server it starts has none.
  expect(block).toContain('SVC_SETTING_plugins__content_manager__engine__mock=true')
  const { lines, err } = await runReadmeBlock(block, { tmpPrefix: 'svc-readme-', log: 'trial.log' })

  // The session, the decoder, two promotions, the event, the detector run, the finding: each answer in order.
  expect(lines[0]).toMatch(/^\{"id":"[^"]+","title":"First steps",.*"version":"\d+:\d+"\}$/)
  expect(lines[1]).toMatch(/^\{"message":"[0-9a-f-]{36}","status":201\}$/)
  expect(lines.filter((l) => l === '{"message":"Promotion completed successfully.","status":200}')).toHaveLength(2)
  expect(lines.some((l) => /"result":"created"/.test(l) && l.includes('.ds-svc-events-v5-applications-'))).toBe(true)
  const detectorRun = lines[lines.length - 2]
  expect(detectorRun).toMatch(
    /^\{"monitor_name":"my-app-detector",.*"input_results":\{"results":\[\{"[0-9a-f-]{36}":\["[^"]+\|\.ds-svc-events-v5-applications-/,
  )
  const finding = lines[lines.length - 1]
  expect(finding).toMatch(/^\{"total_findings":1,"findings":\[/)
  expect(finding).toContain('my-app login failure')
  expect(err).toBe('')
}, 120_000)

// The README's rule-preview walk-through, run exactly as written (the fenced block under its
// heading, through bash) against the compiled binary, in a scratch directory where `./dist/svc-ext`
// is ours: an inline Sigma rule and a threat-intel match previewed over four stored events.
import { afterAll, expect, test } from 'bun:test'
import { readmeBlock, runReadmeBlock, stopReadmeBlocks } from '../helpers/readme-block'

const HEADING = '### Walk-through: a rule preview'

afterAll(() => stopReadmeBlocks())

test('the README rule-preview walk-through answers the matches, per hour, of a Sigma rule and of the IoCs', async () => {
  const { lines, err } = await runReadmeBlock(readmeBlock(HEADING), { tmpPrefix: 'svc-readme-preview-', log: 'preview.log' })
  const answers = lines.filter((l) => l.startsWith('{"took"')).map((l) => JSON.parse(l))
  expect({ lines, answers: answers.length }).toMatchObject({ answers: 2 })
  const [sigma, ti] = answers
  expect(sigma).toMatchObject({ timed_out: false, terminated_early: false, events_scanned: 4, total_matches: 4 })
  expect(sigma.matches).toEqual([expect.objectContaining({ rule: { id: 'preview', title: 'Reverse shell port' } })])
  expect(sigma.per_hour.map((h: any) => h.doc_count)).toEqual([1, 2, 1])
  expect(ti.total_matches).toBe(4)
  expect(ti.matches[0].ioc).toMatchObject({ type: 'ipv4-addr', value: '203.0.113.5', field: 'destination.ip' })
  expect(err).toBe('')
}, 120_000)

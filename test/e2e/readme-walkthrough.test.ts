// The README's walk-through, run exactly as written (the fenced block under its heading, through
// bash) against the compiled binary, in a scratch directory where `./dist/svc-ext` is ours. Only
// the port differs: the environment gives the server a free one (SVC_SETTING_http__port) and the
// block reads the address from $SVC, as the README allows.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { binaryPath, repoRoot } from '../helpers/spawn-binary'

const HEADING = '### Walk-through'

/** The first ```sh block after the walk-through heading. */
export function walkthroughBlock(readme: string): string {
  const from = readme.indexOf(HEADING)
  if (from === -1) throw new Error(`README has no "${HEADING}" section`)
  const block = /```sh\n([\s\S]*?)```/.exec(readme.slice(from))
  if (!block) throw new Error('the walk-through has no ```sh block')
  return block[1]
}

const freePort = () => {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

let group: number | undefined
afterAll(() => {
  // Whatever happened, nothing the block started outlives the test (it runs in its own process group).
  if (group !== undefined)
    try {
      process.kill(-group, 'SIGTERM')
    } catch {
      // Already gone: the block ended with `kill %1`.
    }
})

test('the README walk-through works on a machine without the Engine', async () => {
  if (!existsSync(binaryPath)) throw new Error('dist/svc-ext is missing: run `npm run build` (npm test does it)')
  const block = walkthroughBlock(readFileSync(join(repoRoot, 'README.md'), 'utf8'))
  // The block names the trial setting and no Engine socket: the server it starts has none.
  expect(block).toContain('SVC_SETTING_plugins__content_manager__engine__mock=true')

  const cwd = mkdtempSync(join(tmpdir(), 'svc-readme-'))
  symlinkSync(join(repoRoot, 'dist'), join(cwd, 'dist'))
  const port = freePort()
  const run = Bun.spawn(['setsid', 'bash', '-c', block], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, SVC: `http://127.0.0.1:${port}`, SVC_SETTING_http__port: String(port) },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  group = run.pid
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  const failed = () => `stdout:\n${out}\nstderr:\n${err}\nserver log:\n${readFileSync(join(cwd, 'trial.log'), 'utf8').slice(-3000)}`
  if (code !== 0) throw new Error(`the walk-through exited ${code}\n${failed()}`)

  const lines = out.trim().split('\n')
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

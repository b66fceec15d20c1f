// The README's threat-intelligence walk-through, run exactly as written (the ```sh block under its
// heading, through bash) against the compiled binary in a scratch directory; only the port differs
// (SVC_SETTING_http__port and $SVC, as the README allows). The packaged sample IoCs are the feed.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, readmeBlock } from '../helpers/readme-block'
import { repoRoot, requireBinary } from '../helpers/spawn-binary'

const HEADING = '### Walk-through: an IoC match arriving as a finding'

let group: number | undefined
afterAll(() => {
  if (group !== undefined)
    try {
      process.kill(-group, 'SIGTERM')
    } catch {
      // Already gone: the block ended with `kill %1`.
    }
})

test('the README threat-intelligence walk-through: an IoC match arrives as a finding', async () => {
  requireBinary()
  const cwd = mkdtempSync(join(tmpdir(), 'svc-readme-ti-'))
  symlinkSync(join(repoRoot, 'dist'), join(cwd, 'dist'))
  const port = freePort()
  const run = Bun.spawn(['setsid', 'bash', '-c', readmeBlock(HEADING)], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: cwd, SVC: `http://127.0.0.1:${port}`, SVC_SETTING_http__port: String(port) },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  group = run.pid
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  const failed = () => `stdout:\n${out}\nstderr:\n${err}\nserver log:\n${readFileSync(join(cwd, 'threat-intel.log'), 'utf8').slice(-3000)}`
  if (code !== 0) throw new Error(`the walk-through exited ${code}\n${failed()}`)
  const lines = out.trim().split('\n')
  expect(lines[0]).toBe('{"hits":{"hits":[{"_source":{"document":{"name":"203.0.113.5","type":"ip"}}}]}}')
  const event = JSON.parse(lines[1])
  expect(event.result).toBe('created')
  const found = JSON.parse(lines[lines.length - 1])
  expect(found.total_findings).toBe(1)
  expect(found.ioc_findings[0]).toMatchObject({
    related_doc_ids: [`${event._id}:${event._index}`],
    ioc_value: '203.0.113.5',
    ioc_type: 'ipv4-addr',
    monitor_name: 'network-ti',
    ioc_feed_ids: [{ ioc_id: '3', feed_id: 'svc-cti-iocs', feed_name: 'svc-ext-sample', index: '' }],
  })
  expect(err).toBe('')
}, 120_000)

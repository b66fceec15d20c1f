// The README's alerts walk-through, run exactly as written (the fenced block under its heading,
// through bash) against the compiled binary and a local webhook receiver (given as $HOOK, as the
// README allows), in a scratch directory where `./dist/svc-ext` is ours.
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { binaryPath, repoRoot } from '../helpers/spawn-binary'

const HEADING = '### Walk-through: a webhook channel, a detector trigger, an alert'

function block(readme: string): string {
  const from = readme.indexOf(HEADING)
  if (from === -1) throw new Error(`README has no "${HEADING}" section`)
  const found = /```sh\n([\s\S]*?)```/.exec(readme.slice(from))
  if (!found) throw new Error('the alerts walk-through has no ```sh block')
  return found[1]
}

const freePort = () => {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = probe.port!
  probe.stop(true)
  return port
}

let group: number | undefined
let receiver: Receiver | undefined
afterAll(async () => {
  if (group !== undefined)
    try {
      process.kill(-group, 'SIGTERM')
    } catch {
      // Already gone: the block ended with `kill %1`.
    }
  await receiver?.stop()
})

test('the README alerts walk-through delivers the alert to the webhook and acknowledges it', async () => {
  if (!existsSync(binaryPath)) throw new Error('dist/svc-ext is missing: run `npm run build` (npm test does it)')
  receiver = startReceiver()
  const script = block(readFileSync(join(repoRoot, 'README.md'), 'utf8'))
  const cwd = mkdtempSync(join(tmpdir(), 'svc-readme-alerts-'))
  symlinkSync(join(repoRoot, 'dist'), join(cwd, 'dist'))
  const port = freePort()
  const run = Bun.spawn(['setsid', 'bash', '-c', script], {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      SVC: `http://127.0.0.1:${port}`,
      HOOK: `${receiver.url}/hook`,
      SVC_SETTING_http__port: String(port),
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  group = run.pid
  const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
  const failed = () => `stdout:\n${out}\nstderr:\n${err}\nserver log:\n${readFileSync(join(cwd, 'alerts.log'), 'utf8').slice(-3000)}`
  if (code !== 0) throw new Error(`the walk-through exited ${code}\n${failed()}`)

  const lines = out.trim().split('\n')
  expect(lines[0]).toBe('{"config_id":"my-hook"}')
  expect(lines[1]).toContain('"delivery_status":{"status_code":"200"')
  const alerts = JSON.parse(lines.find((l) => l.startsWith('{"alerts":'))!)
  expect(alerts.total_alerts).toBe(1)
  const [alert] = alerts.alerts
  expect(alert).toMatchObject({ state: 'ACTIVE', trigger_name: 'high matches', severity: '1' })
  expect(alert.action_execution_results).toEqual([expect.objectContaining({ action_id: 'tell-me', delivery_state: 'delivered' })])
  const ack = JSON.parse(lines[lines.length - 1])
  expect(ack.acknowledged.map((a: any) => [a.id, a.state])).toEqual([[alert.id, 'ACKNOWLEDGED']])
  expect(ack).toMatchObject({ failed: [], missing: [] })

  const hook = receiver.received.filter((r) => r.path === '/hook')
  expect(hook[0].body).toBe('Test message content body for config id my-hook')
  expect(hook[1].body).toBe(`high matches on ${alert.related_doc_ids[0]}`)
  expect(hook[1].key).toBe(`${alert.id}:tell-me`)
  expect(err).toBe('')
}, 120_000)

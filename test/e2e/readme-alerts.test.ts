// The README's alerts walk-through, run exactly as written (the fenced block under its heading,
// through bash) against the compiled binary and a local webhook receiver (given as $HOOK, as the
// README allows), in a scratch directory where `./dist/svc-ext` is ours.
import { afterAll, expect, test } from 'bun:test'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { readmeBlock, runReadmeBlock, stopReadmeBlocks } from '../helpers/readme-block'

const HEADING = '### Walk-through: a webhook channel, a detector trigger, an alert'

let receiver: Receiver | undefined
afterAll(async () => {
  stopReadmeBlocks()
  await receiver?.stop()
})

test('the README alerts walk-through delivers the alert to the webhook and acknowledges it', async () => {
  receiver = startReceiver()
  const { lines, err } = await runReadmeBlock(readmeBlock(HEADING), {
    tmpPrefix: 'svc-readme-alerts-',
    log: 'alerts.log',
    env: { HOOK: `${receiver.url}/hook` },
  })

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

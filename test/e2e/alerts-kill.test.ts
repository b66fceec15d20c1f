// End to end: alerts delivered at least once through faults, with the compiled binary killed
// (kill -9) while a delivery is in flight. The receiver holds the first request unanswered, the
// node is killed, the receiver then answers nothing for a while (down), and 500s the next ones.
// The restarted node takes the lost attempt over once its claim runs out and every alert reaches
// the receiver, each answered 2xx exactly once under its idempotency key, none lost.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startEngineServer, type EngineServer } from '../fixtures/engine/server'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { customRulesDetector, draftRules, pluginCaller } from './detection-client'
import { EVENTS, SA } from '../helpers/calls'
import { actionRule } from '../helpers/sigma-rules'
import { waitFor } from '../helpers/wait'
import { DELIVERY_CONCURRENCY } from '../../src/notifications/outbox'

const RULE = actionRule({ title: 'Alert kill', name: 'alert_kill', level: 'high', product: 'alertkill', action: 'deliver_me' })
const ALERTS = 6

let engine: EngineServer
let receiver: Receiver
let node: SpawnedServer | undefined
const dataDir = mkdtempSync(join(tmpdir(), 'svc-alerts-kill-'))
// Fast retries; an attempt is deemed lost 2 + 0.5 + 1 s after it was claimed.
const start = () =>
  spawnBinary({
    dataDir,
    env: {
      SVC_SETTING_plugins__content_manager__engine__socket_path: engine.socketPath,
      SVC_SETTING_plugins__notifications__delivery__backoff_base_millis: '100',
      SVC_SETTING_plugins__notifications__delivery__poll_interval_millis: '100',
      SVC_SETTING_plugins__notifications__delivery__max_retries: '30',
      SVC_SETTING_opensearch__notifications__core__http__socket_timeout: '2000',
      SVC_SETTING_opensearch__notifications__core__http__connection_timeout: '500',
    },
  })
const call = pluginCaller(() => node!)

beforeAll(async () => {
  requireBinary()
  engine = startEngineServer()
  receiver = startReceiver()
  node = await start()
})
afterAll(async () => {
  await node?.stop('SIGKILL')
  await receiver?.stop()
  await engine?.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

const until = <T>(probe: () => Promise<T | undefined>, ms: number, what: string) =>
  waitFor(() => probe().catch(() => undefined), { timeoutMs: ms, what, intervalMs: 50 })

test('every alert is delivered at least once across a kill -9 mid-delivery, a receiver down and 500s', async () => {
  const [rule] = await draftRules(call, 'alertkill', [RULE])
  const channel = await call('POST', '/_plugins/_notifications/configs', {
    config: { name: 'e2e', config_type: 'webhook', webhook: { url: `${receiver.url}/e2e` } },
  })
  expect(channel.status).toBe(200)
  const detector = await call('POST', `${SA}/detectors`, {
    ...customRulesDetector('e2e-alerts', 'alertkill', EVENTS, [rule]),
    triggers: [
      {
        id: 'deliver',
        name: 'deliver',
        severity: '1',
        sev_levels: ['high'],
        detection_types: ['rules'],
        actions: [
          {
            id: 'hook',
            name: 'hook',
            destination_id: channel.body.config_id,
            message_template: { source: 'alert {{#ctx.alerts}}{{id}}{{/ctx.alerts}}' },
          },
        ],
      },
    ],
  })
  expect(detector.status).toBe(201)
  const detectorId = detector.body._id
  const execute = `/_plugins/_alerting/monitors/${detector.body.detector.monitor_id[0]}/_execute`

  // The first delivery hangs at the receiver: the node is killed while it is in flight.
  receiver.fail({ hang: true })
  const bulk = await fetch(`${node!.url}/${EVENTS}/_bulk?refresh=true`, {
    method: 'POST',
    headers: { authorization: node!.auth, 'content-type': 'application/x-ndjson' },
    body:
      Array.from({ length: ALERTS }, () => ({ event: { action: 'deliver_me' } }))
        .flatMap((e) => [JSON.stringify({ create: {} }), JSON.stringify({ '@timestamp': new Date().toISOString(), ...e })])
        .join('\n') + '\n',
  })
  expect(((await bulk.json()) as any).errors).toBe(false)
  expect((await call('POST', execute)).status).toBe(200)
  await until(async () => (receiver.received.some((r) => r.path === '/e2e') ? true : undefined), 10_000, 'the first delivery in flight')
  expect(await node!.stop('SIGKILL')).not.toBe(0)
  const inFlight = receiver.received.find((r) => r.path === '/e2e')!.key!

  // Away for a while, then failing twice before it recovers.
  await receiver.down()
  node = await start()
  await Bun.sleep(1500)
  receiver.heal()
  receiver.fail({ status: 500 }, { status: 500 })
  receiver.up()

  const alerts = await until(
    async () => {
      const r = await call('GET', `${SA}/alerts?detector_id=${detectorId}&size=100`)
      const list = r.body.alerts as any[]
      return list.length === ALERTS && list.every((a) => a.action_execution_results[0].delivery_state === 'delivered') ? list : undefined
    },
    40_000,
    'every alert delivered',
  )
  const keys = alerts.map((a) => `${a.id}:hook`)
  expect(keys).toContain(inFlight)
  // At least once, none lost: a kill -9 may leave a sent delivery unrecorded, which is then sent
  // again under the same key (the receiver's to drop). Exactly once in normal operation is
  // notifications/delivery.test.ts's.
  for (const key of keys) expect({ key, delivered: Math.min(receiver.deliveries(key), 1) }).toEqual({ key, delivered: 1 })
  // Only deliveries in flight at the kill (at most the dispatcher's concurrency) can come twice.
  expect(keys.filter((key) => receiver.deliveries(key) > 1).length).toBeLessThanOrEqual(DELIVERY_CONCURRENCY)
  // The attempt lost with the killed node was sent again under the same key.
  expect(receiver.received.filter((r) => r.key === inFlight).length).toBeGreaterThanOrEqual(2)
  const metrics = await fetch(`${node!.url}/_prometheus/metrics`, { headers: { authorization: node!.auth } })
  expect(await metrics.text()).toMatch(/svc_notification_delivery_attempts_total\{outcome="delivered",channel_type="webhook"\} [1-9]/)
}, 90_000)

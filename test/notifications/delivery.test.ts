// Alert notifications delivered over real HTTP to a local webhook receiver with faults injected:
// the rendered message and headers, retries with back-off through 500s, hung and slow answers and
// a receiver that is down for a while, the dead letter after the last retry (alert, log, metric),
// throttling, and every alert delivered at least once with one idempotency key per delivery.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { Registry } from 'prom-client'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { type AlertingServer, detectorWith, eventually, linuxRules, SA, startAlertingServer, webhook } from './harness'

let s: AlertingServer
let receiver: Receiver

beforeAll(async () => {
  s = await startAlertingServer()
  receiver = startReceiver()
  await linuxRules(s, [
    { action: 'sudo', level: 'high' },
    { action: 'ssh', level: 'low' },
  ])
})
afterAll(async () => {
  await s.stop()
  await receiver.stop()
})
afterEach(() => {
  receiver.heal()
  receiver.up()
})

/** Runs `body` with a webhook channel whose receiver holds every request unanswered, stopped after. */
async function withHungChannel(body: (stuck: Receiver, channel: string) => Promise<void>): Promise<void> {
  const stuck = startReceiver()
  stuck.failAll({ hang: true })
  try {
    await body(stuck, await webhook(s, `${stuck.url}/stuck`))
  } finally {
    await stuck.stop()
  }
}

const trigger = (channel: string, action: Record<string, unknown> = {}) => ({
  id: 't',
  name: 'sudo seen',
  severity: '2',
  ids: ['r-sudo'],
  detection_types: ['rules'],
  actions: [
    {
      id: 'notify',
      name: 'notify',
      destination_id: channel,
      subject_template: { source: 'Alert on {{ctx.detector.name}}', lang: 'mustache' },
      message_template: {
        source:
          '{{ctx.monitor.name}}/{{ctx.trigger.name}}/{{ctx.trigger.severity}}/{{#ctx.alerts}}{{finding_ids}}|{{related_doc_ids}}{{/ctx.alerts}}',
      },
      ...action,
    },
  ],
})

const alertsOf = async (detector: string) => (await s.request('GET', `${SA}/alerts?detector_id=${detector}&size=100`)).body.alerts as any[]
const settled = (detector: string, n: number, states = ['delivered', 'dead_letter', 'throttled']) =>
  eventually(
    async () => {
      const alerts = await alertsOf(detector)
      const done = alerts.filter((a) => a.action_execution_results.every((r: any) => states.includes(r.delivery_state)))
      return alerts.length === n && done.length === n ? alerts : undefined
    },
    15_000,
    `${n} alerts settled`,
  )

describe('delivery', () => {
  test('the message is rendered with the peer context and sent once with its idempotency key', async () => {
    const channel = await webhook(s, `${receiver.url}/render`, { header_params: { 'X-Token': 'tok-1', 'Content-Type': 'text/plain' } })
    const d = await detectorWith(s, ['r-sudo', 'r-ssh'], [trigger(channel)], 'render')
    const [doc] = await s.index([{ event: { action: 'sudo' } }, { event: { action: 'ssh' } }])
    const before = receiver.received.length
    await s.run(d)
    const [alert] = await settled(d, 1)
    const got = receiver.received.slice(before).filter((r) => r.path === '/render')
    expect(got).toHaveLength(1)
    expect(got[0].body).toBe(`render/sudo seen/2/${alert.finding_ids[0]}|${doc._id}|${doc._index}`)
    expect(got[0].headers['x-token']).toBe('tok-1')
    expect(got[0].headers['content-type']).toBe('text/plain')
    expect(got[0].key).toBe(`${alert.id}:notify`)
    expect(alert.action_execution_results).toEqual([
      expect.objectContaining({
        action_id: 'notify',
        throttled_count: 0,
        delivery_state: 'delivered',
        attempts: [expect.objectContaining({ status_code: '200' })],
      }),
    ])
    expect(alert.last_notification_time).not.toBeNull()
  }, 30_000)

  test('slack and chime get the peer bodies', async () => {
    for (const [type, expected] of [
      ['slack', { text: 'Alert on wrapped\n\nhello' }],
      ['chime', { Content: 'Alert on wrapped\n\nhello' }],
    ] as const) {
      const r = await s.request('POST', '/_plugins/_notifications/configs', {
        body: { config: { name: type, config_type: type, [type]: { url: `${receiver.url}/${type}` } } },
      })
      const d = await detectorWith(s, ['r-sudo'], [trigger(r.body.config_id, { message_template: 'hello' })], `wrapped`)
      await s.index([{ event: { action: 'sudo' } }])
      await s.run(d)
      await settled(d, 1)
      const got = receiver.received.filter((x) => x.path === `/${type}`)
      expect(got).toHaveLength(1)
      expect(JSON.parse(got[0].body)).toEqual(expected)
      expect(got[0].headers['content-type']).toBe('application/json')
      await s.request('DELETE', `${SA}/detectors/${d}`)
    }
  }, 30_000)

  test('500s, a hung answer and a slow one are retried with back-off until delivered; each attempt is recorded', async () => {
    const channel = await webhook(s, `${receiver.url}/flaky`)
    const d = await detectorWith(s, ['r-sudo'], [trigger(channel)], 'flaky')
    receiver.fail({ status: 500 }, { hang: true }, { status: 503 }, { delayMs: 300 })
    await s.index([{ event: { action: 'sudo' } }])
    await s.run(d)
    const [alert] = await settled(d, 1)
    const result = alert.action_execution_results[0]
    expect(result.delivery_state).toBe('delivered')
    expect(result.attempts.map((a: any) => a.status_code)).toEqual(['500', '500', '500', '200'])
    expect(result.attempts[1].status_text).toContain('did not answer within 1500 ms')
    const times = result.attempts.map((a: any) => Date.parse(a.time))
    // Back-off: base 50 ms doubling (with jitter of up to half); the hung attempt waited its timeout.
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(1500)
    const sent = receiver.received.filter((r) => r.path === '/flaky')
    expect(sent).toHaveLength(4)
    expect(new Set(sent.map((r) => r.key))).toEqual(new Set([`${alert.id}:notify`]))
    expect(sent[2].at - sent[1].at).toBeGreaterThanOrEqual(50)
  }, 30_000)

  test('after the last retry the delivery is a dead letter: on the alert, in the log and in the metrics', async () => {
    const channel = await webhook(s, `${receiver.url}/dead`)
    const d = await detectorWith(s, ['r-sudo'], [trigger(channel)], 'dead')
    receiver.failAll({ status: 500 })
    const lines: string[] = []
    const log = s.deps.log
    const original = log.error
    log.error = (msg, fields) => {
      lines.push(JSON.stringify({ msg, ...fields }))
      original(msg, fields)
    }
    try {
      await s.index([{ event: { action: 'sudo' } }])
      await s.run(d)
      const [alert] = await settled(d, 1)
      const result = alert.action_execution_results[0]
      expect(result.delivery_state).toBe('dead_letter')
      // max_retries 6: the first attempt and six retries.
      expect(result.attempts).toHaveLength(7)
      expect(receiver.received.filter((r) => r.path === '/dead')).toHaveLength(7)
      expect(lines.some((l) => l.includes('notification dead-lettered') && l.includes(alert.id))).toBe(true)
      const registry = new Registry()
      s.notifications.metrics.register(registry)
      const text = await registry.metrics()
      expect(text).toMatch(/svc_notification_delivery_attempts_total\{outcome="dead_letter",channel_type="any"\} [1-9]/)
      expect(text).toMatch(/svc_notification_delivery_attempts_total\{outcome="failed",channel_type="webhook"\} [1-9]/)
    } finally {
      log.error = original
    }
  }, 30_000)

  test('a receiver down for a while gets every alert once it is back, none twice', async () => {
    const channel = await webhook(s, `${receiver.url}/away`)
    const d = await detectorWith(s, ['r-sudo'], [trigger(channel)], 'away')
    await s.notifications.channels.update(channel, {
      config: { name: 'hook', config_type: 'webhook', webhook: { url: `${receiver.url}/away` } },
    })
    await receiver.down()
    await s.index(Array.from({ length: 8 }, () => ({ event: { action: 'sudo' } })))
    await s.run(d)
    await Bun.sleep(300)
    const pending = await alertsOf(d)
    expect(pending).toHaveLength(8)
    expect(pending.every((a) => a.action_execution_results[0].delivery_state === 'pending')).toBe(true)
    expect(pending.some((a) => a.action_execution_results[0].attempts.length > 0)).toBe(true)
    receiver.up()
    const alerts = await settled(d, 8, ['delivered'])
    const keys = receiver.received.filter((r) => r.path === '/away').map((r) => r.key)
    expect(new Set(keys)).toEqual(new Set(alerts.map((a) => `${a.id}:notify`)))
    expect(keys).toHaveLength(8)
  }, 30_000)

  test('a channel that hangs does not hold up deliveries to another channel', async () => {
    await withHungChannel(async (stuck, hung) => {
      const fine = await webhook(s, `${receiver.url}/fine`)
      const d1 = await detectorWith(s, ['r-sudo'], [trigger(hung)], 'stuck')
      await s.index([{ event: { action: 'sudo' } }])
      await s.run(d1)
      await eventually(async () => (stuck.received.length > 0 ? true : undefined), 5000, 'hung delivery in flight')
      const d2 = await detectorWith(s, ['r-sudo'], [trigger(fine)], 'fine')
      await s.index([{ event: { action: 'sudo' } }])
      const started = Date.now()
      await s.run(d2)
      await eventually(async () => receiver.received.find((r) => r.path === '/fine'), 5000, 'delivery to the healthy channel')
      // Well before the hung attempt's 1.5 s socket timeout ends.
      expect(Date.now() - started).toBeLessThan(1000)
      await s.request('DELETE', `${SA}/detectors/${d1}`)
    })
  }, 30_000)

  test('with every delivery slot held by a hung channel, the dispatcher waits instead of searching in a loop', async () => {
    await withHungChannel(async (stuck, hung) => {
      const d = await detectorWith(s, ['r-sudo'], [trigger(hung)], 'all-stuck')
      await s.index(Array.from({ length: 12 }, () => ({ event: { action: 'sudo' } })))
      await s.run(d)
      await eventually(async () => (stuck.received.length >= 8 ? true : undefined), 5000, 'eight deliveries in flight')
      const before = s.notifications.dispatcher.passes
      await Bun.sleep(500)
      // One pass per 50 ms poll at most (10), not a search after every other.
      expect(s.notifications.dispatcher.passes - before).toBeLessThanOrEqual(12)
      expect(stuck.received).toHaveLength(8)
      await s.request('DELETE', `${SA}/detectors/${d}`)
    })
  }, 30_000)

  test('a throttled action sends once per throttle period and counts the rest', async () => {
    const channel = await webhook(s, `${receiver.url}/throttled`)
    const d = await detectorWith(
      s,
      ['r-sudo'],
      [trigger(channel, { throttle_enabled: true, throttle: { value: 10, unit: 'MINUTES' } })],
      'throttle',
    )
    // Alerts of one run are sent at once: only the first passes the throttle.
    await s.index([{ event: { action: 'sudo' } }, { event: { action: 'sudo' } }, { event: { action: 'sudo' } }])
    await s.run(d)
    await settled(d, 3)
    await s.index([{ event: { action: 'sudo' } }])
    await s.run(d)
    const alerts = await settled(d, 4)
    expect(receiver.received.filter((r) => r.path === '/throttled')).toHaveLength(1)
    const states = alerts.map((a) => a.action_execution_results[0]).map((r) => [r.delivery_state, r.throttled_count])
    expect(states.sort()).toEqual([
      ['delivered', 0],
      ['throttled', 1],
      ['throttled', 1],
      ['throttled', 1],
    ])
  }, 30_000)

  test('a channel on the deny list is never called; the delivery is dead at once', async () => {
    const other = await startAlertingServer({ 'opensearch.notifications.core.http.host_deny_list': '127.0.0.0/8' })
    try {
      await linuxRules(other, [{ action: 'sudo', level: 'high' }])
      const channel = await webhook(other, `http://localhost:${receiver.port}/denied`)
      const d = await detectorWith(other, ['r-sudo'], [trigger(channel)], 'denied')
      await other.index([{ event: { action: 'sudo' } }])
      await other.run(d)
      const alert = await eventually(async () => {
        const [a] = (await other.request('GET', `${SA}/alerts?detector_id=${d}`)).body.alerts
        return a?.action_execution_results[0].delivery_state === 'dead_letter' ? a : undefined
      })
      expect(alert.action_execution_results[0].attempts).toEqual([expect.objectContaining({ status_code: '403' })])
      expect(alert.action_execution_results[0].attempts[0].status_text).toContain('deny list')
      expect(receiver.received.filter((r) => r.path === '/denied')).toHaveLength(0)
    } finally {
      await other.stop()
    }
  }, 30_000)

  test('a redirect is not followed', async () => {
    const redirector = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.redirect(`${receiver.url}/redirected`, 302) })
    try {
      const channel = await webhook(s, `http://127.0.0.1:${redirector.port}/`)
      const r = await s.request('POST', `/_plugins/_notifications/feature/test/${channel}`)
      expect(r.status).toBe(500)
      expect(r.body.message).toContain('redirect')
      expect(receiver.received.filter((x) => x.path === '/redirected')).toHaveLength(0)
    } finally {
      redirector.stop(true)
    }
  })
})

describe('case updates', () => {
  test('a case update on a finding notifies the configured channel', async () => {
    const channel = await webhook(s, `${receiver.url}/cases`)
    const d = await detectorWith(s, ['r-ssh'], [], 'cases')
    await s.index([{ event: { action: 'ssh' } }])
    await s.run(d)
    await s.deps.settings.update({ persistent: { 'plugins.security_analytics.case_notification.channel_id': channel } })
    try {
      const all = await s.deps.store.search({ index: 'svc-findings-v5-security', body: { size: 1000 } })
      const finding = all.hits.hits.find((h: any) => h._source.svc?.detector?.id === d)!
      expect(finding).toBeDefined()
      const r = await s.request('PUT', `${SA}/findings/_update`, {
        body: { findings: [{ _id: finding._id, _index: finding._index, case: { status: 'acknowledged', user: { name: 'bob' } } }] },
      })
      expect(r.status).toBe(200)
      const got = await eventually(async () => receiver.received.find((x) => x.path === '/cases'), 5000, 'case notification')
      expect(got.body).toContain(finding._id)
      expect(got.body).toContain('status: acknowledged')
      expect(got.body).toContain('assignee: bob')
      expect(got.key).toBeTruthy()
    } finally {
      await s.deps.settings.update({ persistent: { 'plugins.security_analytics.case_notification.channel_id': null } })
    }
  })
})

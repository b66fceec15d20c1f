// Alerts and their outbox on the platform store (platform mode): channel configs, alerts raised
// from findings (a repeat raises none twice), and the dispatcher's claim, retry and record, all
// through the platform adapter against an embedded svc-ext's REST API and against the real
// OpenSearch, delivering to a local webhook receiver.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { silentLogger } from '../../src/http/log'
import { Channels } from '../../src/notifications/configs'
import { DeliveryMetrics } from '../../src/notifications/metrics'
import { Dispatcher } from '../../src/notifications/outbox'
import { AlertRaiser } from '../../src/ruleset/alerts/raise'
import type { StoredDetector } from '../../src/ruleset/model'
import { openPlatformStore, type PlatformStore } from '../../src/store/platform'
import { startReceiver, type Receiver } from '../fixtures/webhook/receiver'
import { FAST } from '../notifications/harness'
import { startBarePlatform, type BarePlatform } from './bare-platform'
import { describeOnOpenSearch, OPENSEARCH_START_MS, realOpenSearch, wipeOpenSearch } from '../helpers/opensearch'

interface Run {
  store: PlatformStore
  receiver: Receiver
  dispatcher?: Dispatcher
}

/** The suite over a platform store: an embedded svc-ext's REST API, and the real OpenSearch. */
function outboxSuite(open: () => Promise<{ store: PlatformStore; stop(): Promise<void> }>): void {
  let run: Run
  let stopPlatform: () => Promise<void>
  const current = () => run
  beforeAll(async () => {
    const opened = await open()
    stopPlatform = opened.stop
    run = { store: opened.store, receiver: startReceiver() }
  }, OPENSEARCH_START_MS)
  afterAll(async () => {
    await run?.dispatcher?.stop()
    await run?.store.close()
    await stopPlatform?.()
    await run?.receiver.stop()
  }, 180_000)

  test('alerts raised on the platform are delivered through faults, each once under its key', async () => {
    const { store, receiver } = current()
    const settings = new ClusterSettings(buildNodeConfig({ ...FAST }, 'test', '/tmp'), memoryPersistence(), Date.now, 0)
    const channels = new Channels({ store, settings, now: Date.now })
    const { config_id } = await channels.create({
      config: { name: 'p', config_type: 'webhook', webhook: { url: `${receiver.url}/platform` } },
    })
    expect((await channels.stored(config_id))?.config.webhook?.url).toBe(`${receiver.url}/platform`)

    const detector = {
      name: 'platform-det',
      detector_type: 'linux',
      enabled: true,
      enabled_time: 1,
      last_update_time: 1,
      schedule: { period: { interval: 1, unit: 'MINUTES' } },
      inputs: [],
      monitor_id: ['m-1'],
      triggers: [
        {
          id: 't',
          name: 'all high',
          severity: '1',
          sev_levels: ['high'],
          detection_types: ['rules'],
          actions: [{ id: 'a', name: 'a', destination_id: config_id, message_template: 'hi {{ctx.monitor.name}}' }],
        },
      ],
    } as unknown as StoredDetector
    const findings = ['e1', 'e2', 'e3'].map((id) => ({
      id: `f-${id}`,
      event: { _id: id, _index: 'events', _source: {} },
      rule: { id: 'r', level: 'high', category: 'linux', tags: [] },
      detector: { id: 'd-1', type: 'linux' },
    }))
    const raiser = new AlertRaiser({ store, log: silentLogger, now: Date.now })
    expect(await raiser.raise('d-1', detector, findings)).toBe(3)
    // A batch repeated after a crash raises nothing twice.
    expect(await raiser.raise('d-1', detector, findings)).toBe(0)

    receiver.fail({ status: 500 }, { status: 503 })
    const dispatcher = (current().dispatcher = new Dispatcher({
      store,
      settings,
      log: silentLogger,
      now: Date.now,
      channels,
      metrics: new DeliveryMetrics(),
    }))
    dispatcher.start()
    const until = Date.now() + 15_000
    let alerts: any[] = []
    for (;;) {
      const r = await store.search({ index: '.opensearch-sap-linux-alerts', body: { size: 10 } })
      alerts = r.hits.hits.map((h) => h._source)
      if (alerts.length === 3 && alerts.every((a) => a.action_execution_results[0].delivery_state === 'delivered')) break
      if (Date.now() > until) throw new Error(`not delivered: ${JSON.stringify(alerts.map((a) => a.action_execution_results))}`)
      await Bun.sleep(50)
    }
    for (const a of alerts) expect(receiver.deliveries(`${a.id}:a`)).toBe(1)
    expect(alerts.flatMap((a) => a.action_execution_results[0].attempts.map((x: any) => x.status_code)).sort()).toEqual([
      '200',
      '200',
      '200',
      '500',
      '500',
    ])
    expect(receiver.received.filter((r) => r.path === '/platform').every((r) => r.body === 'hi platform-det')).toBe(true)
  }, 30_000)
}

describe('on an embedded svc-ext as platform', () =>
  outboxSuite(async () => {
    const platform: BarePlatform = await startBarePlatform()
    const store = openPlatformStore({ url: platform.url, username: platform.admin.name, password: platform.admin.password })
    return { store, stop: () => platform.stop() }
  }))

describeOnOpenSearch('on the real OpenSearch', () =>
  outboxSuite(async () => {
    const os = await realOpenSearch('secure')
    await wipeOpenSearch(os)
    const account = os.serviceAccount ?? os.admin
    const store = openPlatformStore({ url: os.url, username: account.name, password: account.password, ca: os.ca })
    return { store, stop: async () => {} }
  }),
)

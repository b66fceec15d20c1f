// Threat intel on events over real HTTP: the CTI test server feeds IoCs (snapshot, then changes),
// the node's sync keeps its IoC index in step, and a detector with `threat_intel_enabled` on the
// `network` log type (IoC fields `source.ip`, `destination.ip`) turns an event holding a listed
// address into an IoC finding, found by `GET /threat_intel/findings/_search` in the peer's shape.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../../fixtures/cti/server'
import { startTestServer, type TestServer } from '../../helpers/server'
import { feedConsumers } from '../../content/sync/harness'
import { startReceiver } from '../../fixtures/webhook/receiver'
import { consumerState, EVENTS, indexEvents, synced as syncedFeed, until as waitFor, networkTiDetector } from './http-harness'
import { SA } from '../../helpers/calls'

const { IOCS } = feedConsumers('threat-intel-http')
let cti: CtiServer
let feed: FakeConsumer
let s: TestServer
let monitorId: string
let detectorId: string
const lines: string[] = []
const loads = () => lines.filter((l) => l.includes('IoC index loaded')).length

const ioc = (id: string, name: string, type: string, feedName = 'threat-fox') => payloads.ioc(id, { name, type, feed: { name: feedName } })

const state = () => consumerState(s, IOCS.type)

const until = (check: () => Promise<boolean>, what: string) => waitFor(check, what, 30_000, state)
const synced = () => syncedFeed(s, feed, IOCS.type)
const index = (events: Array<Record<string, unknown>>) => indexEvents(s, events)

/** The concrete index an alert's events are in (the stream's backing index). */
const EVENTS_INDEX = (alert: any) => String(alert.related_doc_ids[0]).split('|')[1]
const execute = () => s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
const findings = async (query = '') => (await s.request('GET', `${SA}/threat_intel/findings/_search${query}`)).body

beforeAll(async () => {
  cti = startCtiServer()
  feed = cti.consumer(IOCS.context, IOCS.name)
  feed.create('1', ioc('1', '203.0.113.5', 'ip'))
  feed.create('2', ioc('2', '192.0.2.10:4444', 'ip:port'))
  feed.create('3', ioc('3', '198.51.100.0/24', 'ip', 'abuse-ch'))
  feed.create('4', ioc('4', 'phish.example.net', 'domain'))
  feed.publishSnapshot()
  s = await startTestServer({
    logLines: lines,
    // `analyst` holds every Security Analytics action but the threat-intel ones.
    users: [{ name: 'analyst', password: 'Analyst-pass-1', roles: ['analyst'] }],
    roles: {
      analyst: {
        cluster_permissions: ['cluster:admin/platform/securityanalytics/detector/*', 'cluster:admin/platform/securityanalytics/alerts/*'],
      },
    },
    settings: {
      'log.level': 'info',
      'plugins.content_manager.cti.api': cti.base,
      'plugins.content_manager.catalog.iocs': feed.url,
      'plugins.content_manager.catalog.update_on_start': true,
      'plugins.content_manager.catalog.update_on_schedule': false,
    },
  })
  await until(async () => (await state())?.status === 'ready' && (await state())?.local_offset === feed.lastOffset, 'the snapshot')
  const created = await s.request('POST', `${SA}/detectors`, {
    body: networkTiDetector('network-ti', [
      { id: 'ti', name: 'ioc matches', severity: '2', detection_types: ['threat_intel'], actions: [] },
    ]),
  })
  expect(created.status).toBe(201)
  detectorId = created.body._id
  monitorId = created.body.detector.monitor_id[0]
  // The first run baselines the checkpoint at the current end of the stream.
  await index([{ source: { ip: '10.9.9.9' } }])
  await execute()
})
afterAll(async () => {
  await s?.stop()
  await cti?.stop()
})

describe('threat intel on events', () => {
  test('an event holding a listed address arrives as an IoC finding naming the event, the IoC, its type and feed', async () => {
    const [hit, inNet, clean] = await index([
      { source: { ip: '203.0.113.5' }, destination: { ip: '10.0.0.1' } },
      { source: { ip: '10.0.0.2' }, destination: { ip: '198.51.100.77' } },
      { source: { ip: '10.0.0.3' }, destination: { ip: '10.0.0.4' } },
    ])
    expect((await execute()).status).toBe(200)
    const r = await findings('?sortString=ioc_value')
    expect(r.total_findings).toBe(2)
    // Sorted as keywords: 198.51.100.77 first.
    const [network, exact] = r.ioc_findings
    expect(exact).toMatchObject({
      ioc_value: '203.0.113.5',
      ioc_type: 'ipv4-addr',
      ioc_feed_ids: [{ ioc_id: '1', feed_id: 'svc-cti-iocs', feed_name: 'threat-fox', index: '' }],
      monitor_id: monitorId,
      monitor_name: 'network-ti',
    })
    expect(exact.related_doc_ids[0].startsWith(`${hit}:`)).toBe(true)
    expect(exact.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(typeof exact.timestamp).toBe('number')
    expect(network).toMatchObject({ ioc_value: '198.51.100.77', ioc_feed_ids: [{ ioc_id: '3', feed_name: 'abuse-ch' }] })
    expect(network.related_doc_ids[0].startsWith(`${inNet}:`)).toBe(true)
    expect(JSON.stringify(r.ioc_findings)).not.toContain(clean)
    // The run reports them.
    const got = await s.request('GET', `${SA}/detectors/${detectorId}`)
    expect(got.body.detector.last_run.ioc_findings_written).toBe(2)
  })

  test('the feed changes reach matching without a reload: a new IoC matches, a deleted one no longer does', async () => {
    expect(loads()).toBe(1)
    feed.create('5', ioc('5', '2001:db8::66', 'ip'))
    feed.delete('1')
    await synced()
    const [v6, gone] = await index([{ source: { ip: '2001:db8::66' } }, { destination: { ip: '203.0.113.5' } }])
    await execute()
    const r = await findings('?searchString=ioc_type:ipv6-addr')
    expect(r.ioc_findings.map((f: any) => f.ioc_value)).toEqual(['2001:db8::66'])
    expect(r.ioc_findings[0].related_doc_ids[0].startsWith(`${v6}:`)).toBe(true)
    const all = await findings('?size=100')
    expect(all.total_findings).toBe(3)
    expect(JSON.stringify(all.ioc_findings)).not.toContain(gone)
    // Loaded once, at the first run: the change window was applied to it, not reloaded.
    expect(loads()).toBe(1)
  })

  test('search parameters: iocIds, findingIds, time range, paging and sort', async () => {
    const all = (await findings('?size=100&sortString=timestamp&sortOrder=desc')).ioc_findings
    expect((await findings('?iocIds=3')).ioc_findings.map((f: any) => f.ioc_value)).toEqual(['198.51.100.77'])
    expect((await findings(`?findingIds=${all[0].id}`)).ioc_findings.map((f: any) => f.id)).toEqual([all[0].id])
    expect((await findings('?size=1&startIndex=1')).ioc_findings.length).toBe(1)
    expect((await findings(`?startTime=0&endTime=1`)).total_findings).toBe(0)
    expect((await findings(`?startTime=0&endTime=${Date.now() + 1000}`)).total_findings).toBe(3)
  })

  test("a threat-intel trigger alerts once per IoC value: a later finding of the value joins that value's alert", async () => {
    const alerts = async () =>
      (await s.request('GET', `${SA}/alerts?detector_id=${detectorId}&size=100`)).body.alerts.filter((a: any) => a.trigger_id === 'ti')
    const before = await alerts()
    expect(before.map((a: any) => a.ioc_value).sort()).toEqual(['198.51.100.77', '2001:db8::66', '203.0.113.5'])
    const first = before.find((a: any) => a.ioc_value === '198.51.100.77')
    expect(first).toMatchObject({ state: 'ACTIVE', ioc_type: 'ipv4-addr', trigger_name: 'ioc matches', severity: '2' })
    expect(first.finding_ids.length).toBe(1)
    const [again] = await index([{ source: { ip: '198.51.100.77' } }])
    await execute()
    const after = await alerts()
    expect(after.length).toBe(3)
    const joined = after.find((a: any) => a.ioc_value === '198.51.100.77')
    expect(joined.id).toBe(first.id)
    expect(joined.finding_ids.length).toBe(2)
    expect(joined.related_doc_ids).toContain(`${again}|${EVENTS_INDEX(joined)}`)
  })

  test('GET iocs lists the synced IoCs in the peer shape, with their findings counted', async () => {
    const r = (await s.request('GET', `${SA}/threat_intel/iocs`)).body
    expect(r.total).toBe(4)
    expect(r.iocs.map((i: any) => i.name)).toEqual(['192.0.2.10:4444', '198.51.100.0/24', '2001:db8::66', 'phish.example.net'])
    const net = r.iocs[1]
    expect(net).toMatchObject({
      id: '3',
      type: 'ipv4-addr',
      value: '198.51.100.0/24',
      feed_id: 'svc-cti-iocs',
      feed_name: 'abuse-ch',
      labels: ['Mirai'],
    })
    expect(net.created).toBe('2025-09-17T16:40:05.000Z')
    // 198.51.100.77 was found in two runs; the IPv6 address in one; the rest in none.
    expect(r.iocs.map((i: any) => i.num_findings)).toEqual([0, 2, 1, 0])
    const domains = (await s.request('GET', `${SA}/threat_intel/iocs?ioc_types=domain-name`)).body
    expect(domains.iocs.map((i: any) => [i.id, i.type])).toEqual([['4', 'domain-name']])
    const page = (await s.request('GET', `${SA}/threat_intel/iocs?sortString=name&sortOrder=desc&size=2&startIndex=1`)).body
    expect(page.iocs.map((i: any) => i.id)).toEqual(['5', '3'])
    expect((await s.request('GET', `${SA}/threat_intel/iocs?feed_ids=elsewhere`)).body).toEqual({ total: 0, iocs: [] })
  })

  test('the CTI IoCs are the built-in source: get, search; creating a source is a 400', async () => {
    const got = await s.request('GET', `${SA}/threat_intel/sources/svc-cti-iocs`)
    expect(got.status).toBe(200)
    expect(got.body).toMatchObject({
      _id: 'svc-cti-iocs',
      source_config: { type: 'URL_DOWNLOAD', state: 'AVAILABLE', source: { url_download: { url: feed.url } }, enabled_for_scan: true },
    })
    expect(got.body.source_config.ioc_types).toEqual(['ipv4-addr', 'ipv6-addr', 'domain-name'])
    expect(got.body.source_config.local_offset).toBe(feed.lastOffset)
    const found = await s.request('POST', `${SA}/threat_intel/sources/_search`, { body: { query: { match_all: {} } } })
    expect(found.body.hits.hits.map((h: any) => h._id)).toEqual(['svc-cti-iocs'])
    expect((await s.request('GET', `${SA}/threat_intel/sources/nope`)).status).toBe(404)
    const create = await s.request('POST', `${SA}/threat_intel/sources`, { body: { type: 'URL_DOWNLOAD', name: 'x' } })
    expect(create.status).toBe(400)
    expect(create.body.message).toContain('reserved for internal use')
    expect((await s.request('POST', `${SA}/threat_intel/sources`, { body: { type: 'IOC_UPLOAD', name: 'x' } })).status).toBe(400)
  })

  test("_refresh of the built-in source runs a content sync pass, which brings the feed's new IoCs", async () => {
    feed.create('6', ioc('6', '198.18.7.7', 'ip'))
    const r = await s.request('POST', `${SA}/threat_intel/sources/svc-cti-iocs/_refresh`)
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { acknowledged: true } })
    await until(async () => {
      const st = await state()
      return st?.status === 'ready' && st.local_offset === feed.lastOffset && !st.post_sync_pending
    }, 'the pass the refresh started')
    const listed = (await s.request('GET', `${SA}/threat_intel/iocs?size=100`)).body.iocs.map((i: any) => i.value)
    expect(listed).toContain('198.18.7.7')
    expect((await s.request('POST', `${SA}/threat_intel/sources/nope/_refresh`)).status).toBe(404)
    const analyst = { name: 'analyst', password: 'Analyst-pass-1' }
    expect((await s.request('POST', `${SA}/threat_intel/sources/svc-cti-iocs/_refresh`, { user: analyst })).status).toBe(403)
  })

  test('threat-intel alerts: listed in the peer shape; ACTIVE -> ACKNOWLEDGED -> COMPLETED; a completed value opens a new alert', async () => {
    const list = async (q = '') => (await s.request('GET', `${SA}/threat_intel/alerts${q}`)).body
    const all = await list('?sortString=ioc_value')
    expect(all.total_alerts).toBe(3)
    const alert = all.alerts[0]
    // The peer fills trigger_id with the trigger's name.
    expect(alert).toMatchObject({
      ioc_value: '198.51.100.77',
      ioc_type: 'ipv4-addr',
      state: 'ACTIVE',
      trigger_id: 'ioc matches',
      end_time: null,
    })
    expect(alert.finding_ids.length).toBe(2)
    expect(typeof alert.seq_no).toBe('number')
    const status = (state: string, ids = alert.id) => s.request('PUT', `${SA}/threat_intel/alerts/status?state=${state}&alert_ids=${ids}`)
    const acked = await status('ACKNOWLEDGED')
    expect(acked.status).toBe(200)
    expect(acked.body.updated_alerts[0]).toMatchObject({ id: alert.id, state: 'ACKNOWLEDGED', acknowledged_time: expect.any(Number) })
    expect((await status('ACKNOWLEDGED')).status).toBe(400)
    const done = await status('COMPLETED')
    // COMPLETED takes the old end_time (null) for acknowledged_time, as the peer does.
    expect(done.body.updated_alerts[0]).toMatchObject({ state: 'COMPLETED', end_time: expect.any(Number), acknowledged_time: null })
    expect((await list('?alertState=COMPLETED')).alerts.map((a: any) => a.id)).toEqual([alert.id])
    for (const bad of ['ACTIVE', 'nonsense']) expect((await status(bad)).status).toBe(400)
    expect((await status('ACKNOWLEDGED', 'no-such-alert')).status).toBe(400)
    await index([{ source: { ip: '198.51.100.77' } }])
    await execute()
    const after = (await list('?alertState=ACTIVE&sortString=ioc_value')).alerts
    expect(after.length).toBe(3)
    expect(after[0].ioc_value).toBe('198.51.100.77')
    expect(after[0].id).not.toBe(alert.id)
  })

  test('bad input is a 4xx in the plugin envelope', async () => {
    for (const q of ['?size=-1', '?sortOrder=sideways', '?startIndex=x', '?startTime=a&endTime=b', '?sortString=a%20b']) {
      const r = await s.request('GET', `${SA}/threat_intel/findings/_search${q}`)
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ status: 400, message: expect.any(String) })
    }
    for (const q of ['?ioc_types=email', '?sortString=nope', '?size=x', '?sortOrder=up']) {
      const r = await s.request('GET', `${SA}/threat_intel/iocs${q}`)
      expect(r.status).toBe(400)
      expect(r.body).toMatchObject({ status: 400, message: expect.any(String) })
    }
    for (const q of ['?alertState=SLEEPING', '?sortString=nope', '?sortOrder=up', '?size=-3']) {
      const r = await s.request('GET', `${SA}/threat_intel/alerts${q}`)
      expect(r.status).toBe(400)
      expect(r.body.status).toBe(400)
    }
    expect((await s.request('PUT', `${SA}/threat_intel/alerts/status?state=ACKNOWLEDGED`)).status).toBe(400)
    for (const body of ['[1]', '{"size":-1}', 'not json']) {
      const r = await s.request('POST', `${SA}/threat_intel/sources/_search`, { body })
      expect(r.status).toBe(400)
      expect(r.body.status).toBe(400)
    }
  })

  test("an IoC alert's action is delivered through its notification channel", async () => {
    const receiver = startReceiver()
    try {
      const channel = await s.request('POST', '/_plugins/_notifications/configs', {
        body: { config_id: 'ti-hook', config: { name: 'ti hook', config_type: 'webhook', webhook: { url: `${receiver.url}/ti` } } },
      })
      expect(channel.status).toBe(200)
      const created = await s.request('POST', `${SA}/detectors`, {
        body: {
          type: 'detector',
          name: 'network-ti-notify',
          detector_type: 'network',
          enabled: true,
          threat_intel_enabled: true,
          schedule: { period: { interval: 60, unit: 'MINUTES' } },
          inputs: [{ detector_input: { description: 'ti', indices: [EVENTS], custom_rules: [], pre_packaged_rules: [] } }],
          triggers: [
            {
              id: 'ti-notify',
              name: 'ioc seen',
              severity: '1',
              detection_types: ['threat_intel'],
              actions: [
                {
                  id: 'tell',
                  name: 'tell',
                  destination_id: 'ti-hook',
                  subject_template: { source: 'IoC', lang: 'mustache' },
                  message_template: { source: '{{ctx.trigger.name}}: {{#ctx.alerts}}{{related_doc_ids}}{{/ctx.alerts}}', lang: 'mustache' },
                },
              ],
            },
          ],
        },
      })
      expect(created.status).toBe(201)
      const monitor = created.body.detector.monitor_id[0]
      await s.request('POST', `/_plugins/_alerting/monitors/${monitor}/_execute`)
      const [hit] = await index([{ destination: { ip: '198.51.100.200' } }])
      await s.request('POST', `/_plugins/_alerting/monitors/${monitor}/_execute`)
      const end = Date.now() + 15_000
      while (receiver.received.length === 0 && Date.now() < end) await Bun.sleep(50)
      expect(receiver.received.length).toBe(1)
      expect(receiver.received[0].path).toBe('/ti')
      expect(receiver.received[0].body).toStartWith(`ioc seen: ${hit}|`)
    } finally {
      await receiver.stop()
    }
  })

  test('the route is behind its cluster action: a caller without it gets a 403', async () => {
    const analyst = { name: 'analyst', password: 'Analyst-pass-1' }
    expect((await s.request('GET', `${SA}/alerts?detector_id=${detectorId}`, { user: analyst })).status).toBe(200)
    for (const [method, path] of [
      ['GET', 'findings/_search'],
      ['GET', 'iocs'],
      ['GET', 'alerts'],
      ['GET', 'sources/svc-cti-iocs'],
    ]) {
      const r = await s.request(method, `${SA}/threat_intel/${path}`, { user: analyst })
      expect(r.status).toBe(403)
    }
  })
})

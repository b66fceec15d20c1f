// Retro-hunt over real HTTP: the CTI test server delivers a new IoC by sync into a node that
// already holds events; the node searches the last `lookback_days` of stored events of its
// threat-intel detectors for it, up to where each detector's live runs had read, and writes IoC
// findings like live ones: an older event is found, one beyond the look-back is not, one after
// the checkpoint is left to the live run (found once, not twice). A hunt stopped by a restart
// carries on from its saved cursor.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../../fixtures/cti/server'
import { startTestServer, type TestServer } from '../../helpers/server'
import { feedConsumers } from '../../content/sync/harness'
import { consumerState, EVENTS, indexEvents, synced as syncedFeed, until as waitFor, networkTiDetector } from './http-harness'
import { SA } from '../../helpers/calls'

const { IOCS } = feedConsumers('retro-hunt-http')
const JOBS = '.platform-sap-threat-intel-retro-hunt'
const DAY = 86_400_000
let cti: CtiServer
let feed: FakeConsumer
let s: TestServer
let dataDir: string
let monitorId: string
const lines: string[] = []

const ioc = (id: string, name: string) => payloads.ioc(id, { name, type: 'ip', feed: { name: 'threat-fox' } })
const state = () => consumerState(s, IOCS.type)

const until = (check: () => Promise<boolean>, what: string, ms = 60_000) => waitFor(check, what, ms)
const synced = () => syncedFeed(s, feed, IOCS.type)
const index = (events: Array<Record<string, unknown>>) => indexEvents(s, events)
const ago = (ms: number) => new Date(Date.now() - ms).toISOString()
const findingsOf = async (value: string) =>
  (await s.request('GET', `${SA}/threat_intel/findings/_search?size=100&searchString=ioc_value:${encodeURIComponent(value)}`)).body
    .ioc_findings ?? []
const docsOf = (findings: any[]) => findings.flatMap((f: any) => f.related_doc_ids.map((d: string) => d.split(':')[0])).sort()
const jobs = async () => (await s.request('POST', `/${JOBS}/_search`, { body: { size: 10 } })).body.hits?.hits ?? []

const settings = () => ({
  'log.level': 'info',
  'plugins.content_manager.cti.api': cti.base,
  'plugins.content_manager.catalog.iocs': feed.url,
  'plugins.content_manager.catalog.update_on_start': true,
  'plugins.content_manager.catalog.update_on_schedule': false,
  'plugins.security_analytics.threat_intel.retro_hunt.lookback_days': 7,
})

beforeAll(async () => {
  cti = startCtiServer()
  feed = cti.consumer(IOCS.context, IOCS.name)
  feed.create('1', ioc('1', '192.0.2.1'))
  feed.publishSnapshot()
  s = await startTestServer({ logLines: lines, settings: settings() })
  dataDir = s.dataDir
  await until(async () => (await state())?.status === 'ready' && (await state())?.local_offset === feed.lastOffset, 'the snapshot')
}, 90_000)
afterAll(async () => {
  await s?.stop()
  await cti?.stop()
})

describe('retro-hunt', () => {
  let old: string, tooOld: string
  test('a new IoC from the sync is found in stored events of the look-back, not beyond it, and not twice', async () => {
    ;[old, tooOld] = await index([
      { '@timestamp': ago(2 * DAY), source: { ip: '198.51.100.9' } },
      { '@timestamp': ago(10 * DAY), source: { ip: '198.51.100.9' } },
      { '@timestamp': ago(DAY), source: { ip: '10.0.0.1' } },
    ])
    const created = await s.request('POST', `${SA}/detectors`, {
      body: networkTiDetector('retro-ti', [
        { id: 'ti', name: 'ioc matches', severity: '2', detection_types: ['threat_intel'], actions: [] },
      ]),
    })
    expect(created.status).toBe(201)
    monitorId = created.body.detector.monitor_id[0]
    await s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
    // After the detector's checkpoint: its next live run reads it.
    const [recent] = await index([{ '@timestamp': ago(0), destination: { ip: '198.51.100.9' } }])
    feed.create('2', ioc('2', '198.51.100.9'))
    await synced()
    await until(async () => (await findingsOf('198.51.100.9')).length > 0 && (await jobs()).length === 0, 'the retro-hunt')
    const hunted = await findingsOf('198.51.100.9')
    expect(hunted.length).toBe(1)
    expect(hunted[0]).toMatchObject({
      ioc_type: 'ipv4-addr',
      ioc_feed_ids: [{ ioc_id: '2', feed_id: 'svc-cti-iocs', feed_name: 'threat-fox', index: '' }],
      monitor_id: monitorId,
      monitor_name: 'retro-ti',
    })
    expect(docsOf(hunted)).toEqual([old])
    // The live run finds the recent event; no event is in two findings.
    await s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
    const all = await findingsOf('198.51.100.9')
    expect(docsOf(all)).toEqual([old, recent].sort())
    expect(docsOf(all)).not.toContain(tooOld)
    // Its alert: one for the value, both findings in it.
    const alerts = (await s.request('GET', `${SA}/threat_intel/alerts`)).body.alerts.filter((a: any) => a.ioc_value === '198.51.100.9')
    expect(alerts.length).toBe(1)
    expect(alerts[0].finding_ids.length).toBe(2)
  }, 90_000)

  test('a hunt stopped by a restart carries on from its cursor', async () => {
    // A slow pace (100 events a second, a page a second) over 400 stored events: a hunt of about four seconds.
    await s.request('PUT', '/_cluster/settings', {
      body: { persistent: { 'plugins.security_analytics.threat_intel.retro_hunt.events_per_second': 100 } },
    })
    // Older than the detector's checkpoint: the hunt's to read. Written straight after the live run.
    const filler = Array.from({ length: 398 }, (_, i) => ({
      '@timestamp': ago(DAY + i * 1000),
      source: { ip: `10.1.${i >> 8}.${i & 255}` },
    }))
    const [first] = await index([{ '@timestamp': ago(DAY), source: { ip: '203.0.113.77' } }])
    await index(filler)
    const [last] = await index([{ '@timestamp': ago(DAY), source: { ip: '203.0.113.77' } }])
    await s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
    feed.create('3', ioc('3', '203.0.113.77'))
    await synced()
    // Stopped once the cursor has moved past the first page.
    await until(async () => {
      const cursor = (await jobs()).find((h: any) => h._id.startsWith('cursor:'))
      return (cursor?._source.events ?? 0) >= 100
    }, 'the hunt to read a page')
    await s.stop({ keepData: true })
    const before = lines.length
    s = await startTestServer({ logLines: lines, settings: settings(), dataDir })
    await until(async () => (await jobs()).length === 0, 'the hunt to finish after the restart')
    const done = lines.slice(before).find((l) => l.includes('retro-hunt done'))
    expect(done).toBeDefined()
    // Every stored event read once across the restart: the cursor was kept.
    const events = JSON.parse(done!).events ?? JSON.parse(done!).fields?.events
    expect(events).toBe(403)
    expect(docsOf(await findingsOf('203.0.113.77'))).toEqual([first, last].sort())
  }, 120_000)
})

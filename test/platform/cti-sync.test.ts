/**
 * CTI sync at volume in platform mode, on an embedded svc-ext as platform and on the real
 * OpenSearch: a node syncs the IoC and vulnerability feeds of the CTI test server (a snapshot of
 * tens of thousands of entries, then a window of creates, updates and deletes) into the platform;
 * both consumers end `ready` at the feed's last offset with exactly the feed's documents, and the
 * metrics route reports the consumers' offsets.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../fixtures/cti/server'
import type { TestServer } from '../helpers/server'
import { feedConsumers } from '../content/sync/harness'
import { forEachPlatform, startNode, type PlatformUnderTest } from './cluster-helpers'

const { IOCS, VULNS } = feedConsumers('plat')
/** Entries in the IoC snapshot, vulnerabilities in theirs, and changes after the snapshots. */
const SNAPSHOT_IOCS = 20_000
const SNAPSHOT_VULNS = 3_000
const CHANGES = 600

let cti: CtiServer
let iocs: FakeConsumer
let vulns: FakeConsumer
beforeAll(() => {
  cti = startCtiServer()
  iocs = cti.consumer(IOCS.context, IOCS.name)
  vulns = cti.consumer(VULNS.context, VULNS.name)
  for (let n = 1; n <= SNAPSHOT_IOCS; n++) iocs.create(String(n), payloads.ioc(String(n)))
  for (let n = 1; n <= SNAPSHOT_VULNS; n++) vulns.create(`CVE-2024-${n}`, payloads.cve(`CVE-2024-${n}`))
  iocs.publishSnapshot({ linesPerEntry: 5000 })
  vulns.publishSnapshot({ linesPerEntry: 5000 })
  for (let n = 0; n < CHANGES; n++) {
    if (n % 3 === 0) iocs.create(`new-${n}`, payloads.ioc(`new-${n}`))
    else if (n % 3 === 1) iocs.update(String(1 + n), [{ op: 'replace', path: '/document/confidence', value: n % 100 }])
    else iocs.delete(String(SNAPSHOT_IOCS - n))
  }
  for (let n = 0; n < CHANGES / 3; n++) vulns.create(`CVE-2025-${n}`, payloads.cve(`CVE-2025-${n}`))
})
afterAll(() => cti?.stop())

forEachPlatform({}, (current) => {
  let platform: PlatformUnderTest
  let node: TestServer

  beforeAll(async () => {
    platform = current()
    node = await startNode(platform, {
      settings: {
        'plugins.content_manager.cti.api': cti.base,
        'plugins.content_manager.catalog.iocs': iocs.url,
        'plugins.content_manager.catalog.vulnerabilities': vulns.url,
        'plugins.content_manager.catalog.update_on_start': true,
        'plugins.content_manager.catalog.update_on_schedule': false,
        'plugins.content_manager.engine.mock': true,
        // The IoC export for the Engine goes next to its socket: a directory of this test's own.
        'plugins.content_manager.engine.socket_path': join(mkdtempSync(join(tmpdir(), 'svc-cti-plat-')), 'sockets', 'engine.sock'),
      },
    })
  }, 300_000)
  afterAll(() => node?.stop(), 60_000)

  const consumer = async (type: string) => {
    const r = await platform.request('GET', `/.svc-cti-consumers/_doc/${encodeURIComponent(type)}`)
    return r.status === 200 ? r.body._source : undefined
  }
  const synced = (c: any, f: FakeConsumer) => c?.status === 'ready' && c.local_offset === f.lastOffset && !c.post_sync_pending
  const count = async (alias: string) => {
    await platform.request('POST', `/${alias}/_refresh?expand_wildcards=all`)
    const r = await platform.request('POST', `/${alias}/_count?expand_wildcards=all`, { body: { query: { match_all: {} } } })
    expect(r.status).toBe(200)
    return r.body.count as number
  }

  test('both consumers end ready at the feed’s last offset with exactly its documents', async () => {
    let states: any[] = []
    for (const until = Date.now() + 400_000; Date.now() < until; await Bun.sleep(500)) {
      states = [await consumer(IOCS.type), await consumer(VULNS.type)]
      if (synced(states[0], iocs) && synced(states[1], vulns)) break
      if (states.some((s) => s?.status === 'error')) break
    }
    expect(synced(states[0], iocs)).toBe(true)
    expect(synced(states[1], vulns)).toBe(true)
    // The IoC index also holds its type summary document.
    expect(await count(IOCS.alias)).toBe(iocs.state.size + 1)
    expect(await count(VULNS.alias)).toBe(vulns.state.size)
    // A deleted entry is gone, an updated one carries its change.
    const deleted = await platform.request('POST', `/${IOCS.alias}/_search?expand_wildcards=all`, {
      body: { query: { ids: { values: [String(SNAPSHOT_IOCS - 2)] } } },
    })
    expect(deleted.body.hits.hits).toEqual([])
  }, 420_000)

  test('the metrics route reports the consumers’ offsets from the platform', async () => {
    const r = await node.request('GET', '/_prometheus/metrics', { user: platform.admin })
    expect(r.status).toBe(200)
    expect(r.text).toContain(`svc_consumer_local_offset{consumer="iocs"} ${iocs.lastOffset}\n`)
    expect(r.text).toContain(`svc_consumer_local_offset{consumer="vulnerabilities"} ${vulns.lastOffset}\n`)
    expect(r.text).toContain('svc_consumer_status{consumer="iocs",status="ready"} 1\n')
  })
})

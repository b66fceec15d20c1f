// A fresh node whose first IoC snapshot download is reset mid-way (issue 29 item 2), over real HTTP:
// it falls back to the packaged sample IoCs, records that it holds sample content and does not
// continue the sample with the feed's change stream (whose offsets mean other documents); the next
// pass loads the feed's snapshot as soon as it downloads, and the sample is gone.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { payloads, startCtiServer, type CtiServer, type FakeConsumer } from '../../fixtures/cti/server'
import { startTestServer, type TestServer } from '../../helpers/server'
import { feedConsumers } from './harness'
import { waitFor } from '../../helpers/wait'

const { IOCS } = feedConsumers('sample-fallback')
let cti: CtiServer
let feed: FakeConsumer
let s: TestServer

beforeAll(async () => {
  cti = startCtiServer()
  feed = cti.consumer(IOCS.context, IOCS.name)
  for (let n = 1; n <= 20; n++) feed.create(String(n), payloads.ioc(String(n)))
  feed.publishSnapshot()
  for (let n = 21; n <= 30; n++) feed.create(String(n), payloads.ioc(String(n)))
  // Every download of the snapshot is reset after 100 bytes until the fault is cleared.
  cti.inject({ path: /^\/store\//, status: 200, resetAfterBytes: 100, times: 1000 })
  s = await startTestServer({
    logLines: [],
    settings: {
      'plugins.content_manager.cti.api': cti.base,
      'plugins.content_manager.catalog.iocs': feed.url,
      'plugins.content_manager.catalog.update_on_start': true,
      'plugins.content_manager.catalog.update_on_schedule': false,
    },
  })
})
afterAll(async () => {
  await s?.stop()
  await cti?.stop()
})

const state = async () => {
  const r = await s.request('GET', `/.svc-cti-consumers/_doc/${encodeURIComponent(IOCS.type)}`)
  return r.status === 200 ? r.body._source : undefined
}

/** IoC name by id (the summary document left out). */
async function iocs(): Promise<Map<string, string>> {
  await s.request('POST', `/${IOCS.alias}/_refresh?expand_wildcards=all`)
  const r = await s.request('POST', `/${IOCS.alias}/_search?expand_wildcards=all`, { body: { size: 1000 } })
  return new Map(
    r.body.hits.hits.filter((h: any) => !h._id.startsWith('__')).map((h: any) => [h._id, h._source.document?.name ?? h._source.name]),
  )
}

/** Waits until no pass runs (POST update answers 202, starting one) when `start`, else until `ready`. */
const until = (check: () => Promise<boolean>, what: string, ms = 30_000) =>
  waitFor(check, { timeoutMs: ms, what, intervalMs: 100 }).catch(async (e: Error) => {
    throw new Error(`${e.message}: ${JSON.stringify(await state())}`)
  })

const passOver = () =>
  until(async () => (await s.request('POST', '/_plugins/_content_manager/update')).status === 202, 'a new pass to start')

describe('a failed first IoC snapshot download', () => {
  test('leaves the sample marked as such, never continued with the feed; the next pass loads the feed', async () => {
    await until(async () => (await state())?.status === 'ready' && cti.requestsTo(/^\/store\//).length >= 1, 'the first pass')
    // Let the first pass (and its immediate retry) finish: POST update is refused (409) meanwhile.
    await passOver()
    await until(async () => (await state())?.status === 'ready', 'the pass started by the update')
    const first = await state()
    expect(first.foreign_content).toBe(true)
    const held = await iocs()
    // The sample's five IoCs, none of the feed's (whose ids 1..5 the sample shares).
    expect(held.size).toBe(5)
    expect([...held.values()].some((name) => name.startsWith('10.0.0.'))).toBe(false)
    expect(first.local_offset).toBeLessThan(feed.lastOffset)
    expect(cti.requestsTo(/\/changes$/)).toHaveLength(0)

    cti.clear()
    await passOver()
    await until(async () => {
      const st = await state()
      return st?.status === 'ready' && st.local_offset === feed.lastOffset && !st.post_sync_pending
    }, 'the feed to be loaded')
    const after = await state()
    expect(after.foreign_content).toBeUndefined()
    const loaded = await iocs()
    expect(loaded.size).toBe(30)
    for (let n = 1; n <= 30; n++) expect(loaded.get(String(n))).toBe(`10.0.0.${n % 250}:80`)
  }, 90_000)
})

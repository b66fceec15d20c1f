/**
 * Retention in platform mode. Where the platform runs no ISM (the real cluster here: the plugin is
 * not on Maven Central), the node applies the lifecycle policies its bootstrap wrote itself; the
 * pass below is that job's, run over the platform adapter on the real OpenSearch and on an
 * embedded svc-ext as platform: each stream keeps what is younger than its policy's delete age.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eventsStream, RAW_EVENTS_STREAM } from '../../src/setup/indices'
import { applyRetention } from '../../src/setup/retention'
import { createLogger } from '../../src/http/log'
import type { TestServer } from '../helpers/server'
import { forEachPlatform, startNode, type PlatformUnderTest } from './cluster-helpers'

const MIN = 60_000
const quiet = () => createLogger({ write: () => {} })

forEachPlatform({}, (current) => {
  let platform: PlatformUnderTest
  let node: TestServer

  beforeAll(async () => {
    platform = current()
    // The node's bootstrap writes the six lifecycle policies and the streams' templates to the platform.
    node = await startNode(platform)
  }, 300_000)
  afterAll(() => node?.stop(), 60_000)

  const put = async (stream: string, ageMillis: number, tag: string, now: number) => {
    await platform.store.index({
      index: stream,
      op_type: 'create',
      refresh: true,
      body: { '@timestamp': new Date(now - ageMillis).toISOString(), tags: [tag] },
    })
  }
  const remaining = async (stream: string) =>
    (await platform.store.search({ index: stream, body: { size: 100 } })).hits.hits.map((h) => (h._source!.tags as string[])[0]).sort()

  test("each stream keeps what is younger than its policy's delete age, the policies read from the platform", async () => {
    const now = Date.now()
    const events = eventsStream('security')
    await put(events, 30 * MIN, 'fresh', now)
    await put(events, 61 * MIN, 'old', now)
    await put(RAW_EVENTS_STREAM, 9 * MIN, 'fresh', now)
    await put(RAW_EVENTS_STREAM, 11 * MIN, 'old', now)
    const out = await applyRetention({ store: platform.store, now: () => now, log: quiet() })
    expect(await remaining(events)).toEqual(['fresh'])
    expect(await remaining(RAW_EVENTS_STREAM)).toEqual(['fresh'])
    expect(out.find((o) => o.stream === events)).toMatchObject({ policy: 'stream-events-policy', deleted: 1 })
    expect(out.find((o) => o.stream === RAW_EVENTS_STREAM)).toMatchObject({ deleted: 1 })
  })
})

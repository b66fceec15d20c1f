import { describe, expect, test } from 'bun:test'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { runBootstrap } from '../../src/setup/bootstrap'
import { eventsStream, FINDINGS_SECURITY_STREAM, RAW_EVENTS_STREAM, SESSIONS_STREAM } from '../../src/setup/indices'
import { startSetup } from '../../src/setup'
import { applyRetention, deleteAge, startRetentionJob } from '../../src/setup/retention'
import type { IsmPolicy } from '../../src/store/port'
import { openEmbeddedStore } from '../../src/store/embedded'
import { quietLog } from './harness'

const MIN = 60_000
const DAY = 24 * 60 * MIN
const NOW = Date.parse('2026-10-01T12:00:00.000Z')

async function bootstrapped() {
  const store = openEmbeddedStore(':memory:')
  const settings = new ClusterSettings(buildNodeConfig({}, 'test', '.'), memoryPersistence())
  await runBootstrap({ store, settings, log: quietLog(), now: () => NOW })
  return store
}

async function put(
  store: Awaited<ReturnType<typeof bootstrapped>>,
  stream: string,
  ageMillis: number,
  tag: string,
  extra: Record<string, unknown> = {},
) {
  const at = new Date(NOW - ageMillis).toISOString()
  await store.index({
    index: stream,
    op_type: 'create',
    refresh: true,
    body: {
      '@timestamp': at,
      ...extra,
      ...(stream === SESSIONS_STREAM ? { title: tag, user: 'u', messages: [], created_at: at, updated_at: at } : { tags: [tag] }),
    },
  })
}

const remaining = async (store: Awaited<ReturnType<typeof bootstrapped>>, stream: string) =>
  (await store.search({ index: stream, body: { size: 100 } })).hits.hits
    .map((h) => (stream === SESSIONS_STREAM ? h._source!.title : (h._source!.tags as string[])[0]))
    .sort()

describe('embedded retention', () => {
  test("each stream keeps what is younger than its policy's delete age", async () => {
    const store = await bootstrapped()
    const events = eventsStream('security')
    await put(store, events, 30 * MIN, 'fresh')
    await put(store, events, 61 * MIN, 'old')
    await put(store, RAW_EVENTS_STREAM, 9 * MIN, 'fresh')
    await put(store, RAW_EVENTS_STREAM, 11 * MIN, 'old')
    await put(store, FINDINGS_SECURITY_STREAM, 89 * DAY, 'fresh')
    await put(store, FINDINGS_SECURITY_STREAM, 91 * DAY, 'old')
    await put(store, SESSIONS_STREAM, 6 * DAY, 'fresh')
    await put(store, SESSIONS_STREAM, 8 * DAY, 'old')
    const out = await applyRetention({ store, now: () => NOW, log: quietLog() })
    for (const s of [events, RAW_EVENTS_STREAM, FINDINGS_SECURITY_STREAM, SESSIONS_STREAM])
      expect(await remaining(store, s)).toEqual(['fresh'])
    expect(out.find((o) => o.stream === SESSIONS_STREAM)).toEqual({
      stream: SESSIONS_STREAM,
      policy: 'ai-assistant-sessions-policy',
      deleted: 1,
      held: 0,
    })
    expect(out.find((o) => o.stream === events)?.policy).toBe('stream-events-policy')
    expect(out.reduce((n, o) => n + o.deleted, 0)).toBe(4)
  })

  test('more expired documents than one page are all removed', async () => {
    const store = await bootstrapped()
    const body = []
    for (let i = 0; i < 2500; i++) body.push({ create: {} }, { '@timestamp': new Date(NOW - 2 * 60 * MIN).toISOString(), tags: ['old'] })
    await store.bulk({ index: RAW_EVENTS_STREAM, body, refresh: true })
    await put(store, RAW_EVENTS_STREAM, MIN, 'fresh')
    const out = await applyRetention({ store, now: () => NOW, log: quietLog() })
    expect(out.find((o) => o.stream === RAW_EVENTS_STREAM)?.deleted).toBe(2500)
    expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual(['fresh'])
  })

  test("held documents (past a reader's checkpoint) stay, across pages, and the rest go", async () => {
    const store = await bootstrapped()
    const old = new Date(NOW - 2 * 60 * MIN).toISOString()
    const body = []
    for (let i = 0; i < 2500; i++) body.push({ create: { _id: `d${i}` } }, { '@timestamp': old, tags: ['read'] })
    const written = await store.bulk({ index: RAW_EVENTS_STREAM, body, refresh: true })
    const backing = written.items[0].create!._index
    const read = Math.max(...written.items.map((i) => i.create!._seq_no!))
    // Rewritten after the reader's checkpoint: the first 1,500 in document order are unread now.
    const again = []
    for (let i = 0; i < 1500; i++)
      again.push({ index: { _index: backing, _id: `d${i}`, if_seq_no: i, if_primary_term: 1 } }, { '@timestamp': old, tags: ['unread'] })
    expect((await store.bulk({ body: again, refresh: true })).errors).toBe(false)
    const out = await applyRetention({ store, now: () => NOW, log: quietLog(), holds: async () => new Map([[backing, read]]) })
    expect(out.find((o) => o.stream === RAW_EVENTS_STREAM)).toMatchObject({ deleted: 1000, held: 1500 })
    const left = (await store.search({ index: RAW_EVENTS_STREAM, body: { size: 2500 } })).hits.hits
    expect(new Set(left.map((h) => (h._source!.tags as string[])[0]))).toEqual(new Set(['unread']))
    expect(left).toHaveLength(1500)
  })

  test('the scheduled job runs the pass and stops', async () => {
    const store = await bootstrapped()
    await put(store, RAW_EVENTS_STREAM, 20 * MIN, 'old')
    const job = startRetentionJob({ store, now: () => NOW, log: quietLog() }, '* * * * * *')
    try {
      for (let i = 0; i < 30 && (await remaining(store, RAW_EVENTS_STREAM)).length > 0; i++) await Bun.sleep(100)
      expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual([])
    } finally {
      job.stop()
    }
  })
})

describe('retention follows the stored policies', () => {
  /** Sets the delete age of a stored policy, as an operator would through the ISM API. */
  async function setAge(store: Awaited<ReturnType<typeof bootstrapped>>, id: string, age: string) {
    const current = await store.getLifecyclePolicy({ id })
    const policy = structuredClone(current.policy)
    policy.states.find((s) => s.name === 'hot')!.transitions![0].conditions = { min_index_age: age }
    await store.putLifecyclePolicy({ id, body: { policy }, if_seq_no: current._seq_no, if_primary_term: current._primary_term })
  }

  test("an edited policy's age is the one applied", async () => {
    const store = await bootstrapped()
    await setAge(store, 'stream-raw-events-policy', '1h')
    await setAge(store, 'ai-assistant-sessions-policy', '1d')
    await put(store, RAW_EVENTS_STREAM, 30 * MIN, 'kept-longer')
    await put(store, RAW_EVENTS_STREAM, 61 * MIN, 'old')
    await put(store, SESSIONS_STREAM, 12 * 60 * MIN, 'fresh')
    await put(store, SESSIONS_STREAM, 2 * DAY, 'expired-sooner')
    await applyRetention({ store, now: () => NOW, log: quietLog() })
    expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual(['kept-longer'])
    expect(await remaining(store, SESSIONS_STREAM)).toEqual(['fresh'])
  })

  test("an operator's own policy with a higher template priority takes a stream over", async () => {
    const store = await bootstrapped()
    const shipped = (await store.getLifecyclePolicy({ id: 'stream-raw-events-policy' })).policy
    const own: IsmPolicy = { ...structuredClone(shipped), ism_template: [{ index_patterns: [RAW_EVENTS_STREAM], priority: 100 }] }
    own.states[0].transitions![0].conditions = { min_index_age: '1d' }
    await store.putLifecyclePolicy({ id: 'keep-raw-a-day', body: { policy: own } })
    await put(store, RAW_EVENTS_STREAM, 5 * 60 * MIN, 'kept')
    await put(store, RAW_EVENTS_STREAM, 2 * DAY, 'old')
    const out = await applyRetention({ store, now: () => NOW, log: quietLog() })
    expect(out.find((o) => o.stream === RAW_EVENTS_STREAM)).toEqual({
      stream: RAW_EVENTS_STREAM,
      policy: 'keep-raw-a-day',
      deleted: 1,
      held: 0,
    })
    expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual(['kept'])
  })

  test('a stream whose policy is gone, or never deletes, keeps its documents', async () => {
    const store = await bootstrapped()
    await store.deleteLifecyclePolicy({ id: 'stream-raw-events-policy' })
    const current = await store.getLifecyclePolicy({ id: 'ai-assistant-sessions-policy' })
    const keepForever = structuredClone(current.policy)
    keepForever.states = [{ name: 'hot', actions: [], transitions: [] }]
    await store.putLifecyclePolicy({
      id: 'ai-assistant-sessions-policy',
      body: { policy: keepForever },
      if_seq_no: current._seq_no,
      if_primary_term: current._primary_term,
    })
    await put(store, RAW_EVENTS_STREAM, 2 * DAY, 'old')
    await put(store, SESSIONS_STREAM, 30 * DAY, 'old')
    await put(store, eventsStream('security'), 2 * 60 * MIN, 'old')
    const out = await applyRetention({ store, now: () => NOW, log: quietLog() })
    expect(out.map((o) => o.stream)).not.toContain(RAW_EVENTS_STREAM)
    expect(out.map((o) => o.stream)).not.toContain(SESSIONS_STREAM)
    expect(await remaining(store, RAW_EVENTS_STREAM)).toEqual(['old'])
    expect(await remaining(store, SESSIONS_STREAM)).toEqual(['old'])
    // The other policies still apply.
    expect(await remaining(store, eventsStream('security'))).toEqual([])
  })

  test('without any stored policy nothing is deleted', async () => {
    const store = openEmbeddedStore(':memory:')
    await store.putIndexTemplate({ name: 't', body: { index_patterns: ['svc-events-raw-v5*'], data_stream: {} } })
    await store.createDataStream({ name: RAW_EVENTS_STREAM })
    await put(store as Awaited<ReturnType<typeof bootstrapped>>, RAW_EVENTS_STREAM, 30 * DAY, 'old')
    expect(await applyRetention({ store, now: () => NOW, log: quietLog() })).toEqual([])
    expect(await remaining(store as Awaited<ReturnType<typeof bootstrapped>>, RAW_EVENTS_STREAM)).toEqual(['old'])
  })

  test('deleteAge: the smallest min_index_age into a deleting state; none when nothing deletes by age', () => {
    const base = (states: IsmPolicy['states'], default_state = 'a'): IsmPolicy => ({ description: '', default_state, states })
    const del = { name: 'gone', actions: [{ delete: {} }], transitions: [] }
    expect(
      deleteAge(
        base([
          { name: 'a', transitions: [{ state_name: 'b', conditions: { min_index_age: '1d' } }] },
          { name: 'b', transitions: [{ state_name: 'gone', conditions: { min_index_age: '30d' } }] },
          del,
        ]),
      ),
    ).toBe(30 * DAY)
    expect(
      deleteAge(
        base([
          {
            name: 'a',
            transitions: [
              { state_name: 'gone', conditions: { min_index_age: '2h' } },
              { state_name: 'gone', conditions: { min_index_age: '90m' } },
            ],
          },
          del,
        ]),
      ),
    ).toBe(90 * MIN)
    expect(deleteAge(base([{ name: 'a', transitions: [{ state_name: 'gone' }] }, del]))).toBe(0)
    expect(deleteAge(base([del], 'gone'))).toBe(0)
    expect(deleteAge(base([{ name: 'a', transitions: [{ state_name: 'gone', conditions: { min_doc_count: 5 } }] }, del]))).toBeUndefined()
    expect(deleteAge(base([{ name: 'a', transitions: [] }]))).toBeUndefined()
  })
})

describe('where the job runs', () => {
  const startDeps = () => ({
    store: openEmbeddedStore(':memory:'),
    settings: new ClusterSettings(buildNodeConfig({}, 'test', '.'), memoryPersistence()),
    log: quietLog(),
    now: Date.now,
  })

  test("embedded mode (or a platform without ISM) schedules it; a platform's ISM keeps retention", async () => {
    const embedded = startSetup(startDeps(), { ownRetention: async () => true })
    const platform = startSetup(startDeps(), { ownRetention: async () => false })
    try {
      expect(await embedded.retention).toBeDefined()
      expect(await platform.retention).toBeUndefined()
      expect((await embedded.ready).status).toBe('ready')
      expect((await platform.ready).status).toBe('ready')
    } finally {
      embedded.stop()
      platform.stop()
    }
  })
})

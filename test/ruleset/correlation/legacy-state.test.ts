// An upgrade from a version storing windows per (detector, rule) in the old layout: the first run
// converts them, so a correlation in progress across the upgrade fires once with the events from
// both sides, the old documents go, and converting again (a second node, a repeated run, an old
// document surviving a crash) counts nothing twice.
import { afterAll, describe, expect, test } from 'bun:test'
import {
  type CorrelationInput,
  correlationRule,
  Correlator,
  parseCorrelationDocument,
  type ResolvedCorrelation,
  StoreGroups,
} from '../../../src/ruleset/correlation'
import { LEGACY_PAGE } from '../../../src/ruleset/correlation/legacy-state'
import { unpackWindows } from '../../../src/ruleset/correlation/state'
import { CORRELATION_STATE_INDEX } from '../../../src/ruleset/indices'
import { openEmbeddedStore } from '../../../src/store/embedded'
import type { Store } from '../../../src/store/port'
import { oldWindow, writeOldState } from './legacy-format'

const T0 = Date.UTC(2026, 0, 1)
const opened: Array<ReturnType<typeof openEmbeddedStore>> = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => {})
})
const fresh = () => {
  const s = openEmbeddedStore(':memory:')
  opened.push(s)
  return s
}

const FAILURES = {
  ...correlationRule(
    parseCorrelationDocument(
      'title: f\ncorrelation: {type: event_count, rules: [failed], group-by: [user, host], timespan: 10m, condition: {gte: 5}}',
    ),
    'c-failures',
  ),
  sources: ['failed'],
} satisfies ResolvedCorrelation

/** A run of the current code: the detector's own state client, as a detector run builds it. */
const run = (store: Store, scope: string, inputs: CorrelationInput[], rules = [FAILURES]) =>
  new Correlator(scope, rules, new StoreGroups(store, { scope, rules })).ingest(inputs)

const failed = (id: string, t: number, user = 'alice', host = 'h1'): CorrelationInput => ({
  ruleId: 'failed',
  time: T0 + t,
  index: 'logs',
  id,
  source: { user, host },
})

/** The three failures an old node saw for (alice, h1). */
const writeOldAlice = (store: Store, scope: string) =>
  writeOldState(
    store,
    scope,
    'c-failures',
    ['user', 'host'],
    [
      {
        group: { user: 'alice', host: 'h1' },
        window: oldWindow([
          ['o1', T0 + 1_000],
          ['o2', T0 + 2_000],
          ['o3', T0 + 3_000],
        ]),
      },
    ],
  )

async function stateDocs(store: Store, scope: string) {
  const r = await store.search({ index: CORRELATION_STATE_INDEX, body: { size: 1000, query: { term: { scope } } } })
  return r.hits.hits.map((h) => ({ id: h._id, ...(h._source as Record<string, any>) }))
}
const oldDocs = async (store: Store, scope: string) => (await stateDocs(store, scope)).filter((d) => 'groups' in d)
/** Event ids kept in the current-format windows of `scope`. */
const storedEvents = async (store: Store, scope: string) =>
  (await stateDocs(store, scope))
    .filter((d) => 'windows' in d)
    .flatMap((d) => unpackWindows(d.windows as string).flatMap(([, , , w]) => w.events.map((e) => e[3])))
    .sort()

describe('windows stored by the version before the bucket-per-detector layout', () => {
  test('3 failures before the upgrade and 2 after fire once, with all five; the old documents go', async () => {
    const store = fresh()
    expect(await writeOldAlice(store, 'det')).toHaveLength(1)
    const found = await run(store, 'det', [failed('n4', 4_000), failed('n5', 5_000)])
    expect(found).toHaveLength(1)
    expect(found[0].events.map((e) => e.id)).toEqual(['o1', 'o2', 'o3', 'n4', 'n5'])
    expect(found[0].group).toEqual({ user: 'alice', host: 'h1' })
    expect(await oldDocs(store, 'det')).toHaveLength(0)
    expect(await storedEvents(store, 'det')).toEqual(['n4', 'n5', 'o1', 'o2', 'o3'])
    // A second run replaying the page, and one with a sixth failure in the same burst: nothing new.
    expect(await run(store, 'det', [failed('n4', 4_000), failed('n5', 5_000)])).toHaveLength(0)
    expect(await run(store, 'det', [failed('n6', 6_000)])).toHaveLength(0)
    expect(await storedEvents(store, 'det')).toEqual(['n4', 'n5', 'n6', 'o1', 'o2', 'o3'])
  })

  test('an old document converted again (it outlived a crash, or an old node rewrote it) counts nothing twice', async () => {
    const store = fresh()
    await writeOldAlice(store, 'det')
    expect(await run(store, 'det', [failed('n4', 4_000)])).toHaveLength(0)
    await writeOldAlice(store, 'det')
    const found = await run(store, 'det', [failed('n5', 5_000)])
    expect(found.map((f) => f.events.length)).toEqual([5])
    expect(await oldDocs(store, 'det')).toHaveLength(0)
    expect(await storedEvents(store, 'det')).toEqual(['n4', 'n5', 'o1', 'o2', 'o3'])
  })

  test('two nodes converting at once: both succeed, the window holds each event once', async () => {
    const store = fresh()
    // Another group's window already in the new layout, so a converted bucket may meet a stored one.
    await run(store, 'det', [failed('b1', 1_000, 'bob')])
    await writeOldAlice(store, 'det')
    const rules = [FAILURES]
    const nodes = [new StoreGroups(store, { scope: 'det', rules }), new StoreGroups(store, { scope: 'det', rules })]
    await Promise.all(nodes.map((n) => n.load([])))
    expect(await oldDocs(store, 'det')).toHaveLength(0)
    expect(await storedEvents(store, 'det')).toEqual(['b1', 'o1', 'o2', 'o3'])
    const found = await run(store, 'det', [failed('n4', 4_000), failed('n5', 5_000)])
    expect(found.map((f) => f.events.map((e) => e.id))).toEqual([['o1', 'o2', 'o3', 'n4', 'n5']])
  })

  test('more old documents than one page: all converted, every group completes', async () => {
    const store = fresh()
    const hosts = Array.from({ length: 300 }, (_, i) => `h${i}`)
    const groups = hosts.map((host) => ({
      group: { user: 'alice', host },
      window: oldWindow([1, 2, 3, 4].map((n): [string, number] => [`${host}-o${n}`, T0 + n * 1000])),
    }))
    const written = await writeOldState(store, 'det', 'c-failures', ['user', 'host'], groups)
    expect(written.length).toBeGreaterThan(2 * LEGACY_PAGE)
    const found = await run(
      store,
      'det',
      hosts.map((host) => failed(`${host}-n5`, 5_000, 'alice', host)),
    )
    expect(found).toHaveLength(hosts.length)
    expect(found.every((f) => f.events.length === 5)).toBe(true)
    expect(await oldDocs(store, 'det')).toHaveLength(0)
  })

  test("other detectors' old documents stay; those of a rule the detector no longer has go", async () => {
    const store = fresh()
    await writeOldAlice(store, 'other')
    await writeOldState(store, 'det', 'c-removed', ['user'], [{ group: { user: 'alice' }, window: oldWindow([['x', T0]]) }])
    await writeOldAlice(store, 'det')
    expect(await run(store, 'det', [failed('n4', 4_000), failed('n5', 5_000)])).toHaveLength(1)
    expect(await oldDocs(store, 'det')).toHaveLength(0)
    expect(await storedEvents(store, 'det')).toEqual(['n4', 'n5', 'o1', 'o2', 'o3'])
    expect(await oldDocs(store, 'other')).toHaveLength(1)
  })
})

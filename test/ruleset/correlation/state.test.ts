// Correlation windows in the real embedded Store: a store closed and reopened (a node restart),
// two nodes (two engines with their own state clients) taking alternate pages of one detector,
// and late events, all give the findings of one in-order pass; finished groups are pruned.
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type CorrelationFinding,
  type CorrelationInput,
  correlationRule,
  Correlator,
  MemoryGroups,
  parseCorrelationDocument,
  type ResolvedCorrelation,
  StoreGroups,
} from '../../../src/ruleset/correlation'
import { CachedGroups } from '../../../src/ruleset/correlation/state'
import { CORRELATION_STATE_INDEX, forgetEnsured } from '../../../src/ruleset/indices'
import { openEmbeddedStore } from '../../../src/store/embedded'

const T0 = Date.UTC(2026, 0, 1)
const dir = mkdtempSync(join(tmpdir(), 'correlation-state-'))
const open = () => openEmbeddedStore(join(dir, 'store.db'))
const opened: Array<ReturnType<typeof open>> = []
afterAll(async () => {
  for (const s of opened) await s.close().catch(() => {})
})

function rule(yaml: string, id: string, sources: string[]): ResolvedCorrelation {
  return { ...correlationRule(parseCorrelationDocument(yaml), id), sources }
}
const COUNT = rule(
  'title: c\ncorrelation: {type: event_count, rules: [r1], group-by: [host], timespan: 5m, condition: {gte: 4}}',
  'c-count',
  ['r1'],
)
const USERS = rule(
  'title: u\ncorrelation: {type: value_count, rules: [r1, r2], group-by: [host], timespan: 10m, condition: {field: user, gt: 2}}',
  'c-users',
  ['r1', 'r2'],
)
const ORDER = rule('title: o\ncorrelation: {type: temporal_ordered, rules: [r2, r1], group-by: [host], timespan: 2m}', 'c-order', [
  'r2',
  'r1',
])
const RULES = [COUNT, USERS, ORDER]

function stream(): CorrelationInput[] {
  const out: CorrelationInput[] = []
  for (let i = 0; i < 400; i++) {
    const host = `h${(i * 7) % 5}`
    out.push({
      ruleId: i % 3 === 0 ? 'r2' : 'r1',
      time: T0 + i * 20_000 + (i % 4) * 1000,
      index: 'logs',
      id: `e${i}`,
      source: { host, user: `u${(i * 11) % 6}` },
    })
  }
  return out
}
const EVENTS = stream()
const pages = (events: CorrelationInput[], size: number) =>
  Array.from({ length: Math.ceil(events.length / size) }, (_, i) => events.slice(i * size, i * size + size))
const ids = (fs: CorrelationFinding[]) => fs.map((f) => f.id).sort()

async function oracle(): Promise<string[]> {
  return ids(await new Correlator('det', RULES, new MemoryGroups()).ingest(EVENTS))
}

describe('windows in the Store', () => {
  test('restart: the store is closed and reopened between pages', async () => {
    const expected = await oracle()
    expect(expected.length).toBeGreaterThan(10)
    const out: CorrelationFinding[] = []
    for (const page of pages(EVENTS, 60)) {
      const store = open()
      opened.push(store)
      out.push(...(await new Correlator('det', RULES, new StoreGroups(store)).ingest(page)))
      forgetEnsured(store)
      await store.close()
    }
    expect(ids(out)).toEqual(expected)
  })

  test('two nodes, late events: alternate pages, each page arriving newest first', async () => {
    const expected = await oracle()
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const nodes = [new Correlator('det2', RULES, new StoreGroups(store)), new Correlator('det2', RULES, new StoreGroups(store))]
    const out: CorrelationFinding[] = []
    let k = 0
    for (const page of pages(EVENTS, 25)) out.push(...(await nodes[k++ % 2].ingest([...page].reverse())))
    // Same ids under another scope name would differ: compare the per-finding identity instead.
    const identity = (fs: CorrelationFinding[]) => fs.map((f) => `${f.rule.id}|${f.anchor.id}`).sort()
    expect(identity(out)).toEqual(identity(await new Correlator('det', RULES, new MemoryGroups()).ingest(EVENTS)))
    expect(out.length).toBe(expected.length)
    // Replaying every page on the other node finds nothing new.
    k = 1
    for (const page of pages(EVENTS, 25)) expect(await nodes[k++ % 2].ingest(page)).toHaveLength(0)
  })

  test("a run's window cache loses to another node's write, then reads the other node's window", async () => {
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const shared = new StoreGroups(store)
    const cached = new CachedGroups(shared)
    const a = new Correlator('det4', [COUNT], cached)
    const b = new Correlator('det4', [COUNT], new StoreGroups(store))
    const at = (i: number, id: string) => ({ ruleId: 'r1', time: T0 + i * 1000, index: 'logs', id, source: { host: 'h' } })
    expect(await a.ingest([at(0, 'a0'), at(1, 'a1')])).toHaveLength(0) // cached after this write
    expect(await b.ingest([at(2, 'b2')])).toHaveLength(0) // another node moves the window on
    // A's cached version is stale: its write is lost, it re-reads and counts all four events.
    expect(await a.ingest([at(3, 'a3')])).toHaveLength(1)
  })

  test('finished groups are pruned', async () => {
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const groups = new StoreGroups(store)
    await new Correlator('det3', [COUNT], groups).ingest(EVENTS.slice(0, 50))
    const count = async () => (await store.count({ index: CORRELATION_STATE_INDEX, body: { query: { term: { scope: 'det3' } } } })).count
    expect(await count()).toBe(5)
    expect(await groups.prune('det3', [{ rule: COUNT.id, before: T0 + 50 * 20_000 }])).toBe(5)
    expect(await count()).toBe(0)
  })
})

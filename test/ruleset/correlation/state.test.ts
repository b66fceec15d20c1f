// Correlation windows in the real embedded Store: a store closed and reopened (a node restart),
// two nodes (two engines with their own state clients) taking alternate pages of one detector,
// and late events, all give the findings of one in-order pass; silent groups are dropped and the
// documents per rule are bounded.
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
import { BUCKETS, unpackWindows } from '../../../src/ruleset/correlation/state'
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

  test('two nodes, late events: runs over the shared store, each page arriving newest first', async () => {
    const expected = await oracle()
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    // Each page is one run of one node: a run reads the windows afresh (the lease keeps two runs of
    // one detector from overlapping).
    const run = (page: CorrelationInput[]) => new Correlator('det2', RULES, new StoreGroups(store)).ingest(page)
    const out: CorrelationFinding[] = []
    for (const page of pages(EVENTS, 25)) out.push(...(await run([...page].reverse())))
    // Same ids under another scope name would differ: compare the per-finding identity instead.
    const identity = (fs: CorrelationFinding[]) => fs.map((f) => `${f.rule.id}|${f.anchor.id}`).sort()
    expect(identity(out)).toEqual(identity(await new Correlator('det', RULES, new MemoryGroups()).ingest(EVENTS)))
    expect(out.length).toBe(expected.length)
    // Replaying every page on the other node finds nothing new.
    for (const page of pages(EVENTS, 25)) expect(await run(page)).toHaveLength(0)
  })

  test("a run's window cache loses to another node's write, then reads the other node's window", async () => {
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const a = new Correlator('det4', [COUNT], new StoreGroups(store))
    const b = new Correlator('det4', [COUNT], new StoreGroups(store))
    const at = (i: number, id: string) => ({ ruleId: 'r1', time: T0 + i * 1000, index: 'logs', id, source: { host: 'h' } })
    expect(await a.ingest([at(0, 'a0'), at(1, 'a1')])).toHaveLength(0) // cached after this write
    expect(await b.ingest([at(2, 'b2')])).toHaveLength(0) // another node moves the window on
    // A's cached version is stale: its write is lost, it re-reads and counts all four events.
    expect(await a.ingest([at(3, 'a3')])).toHaveLength(1)
  })

  test('one run over many pages, then a restart: windows written from their kept text read back as they were', async () => {
    const expected = await oracle()
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const all = pages(EVENTS, 20)
    const half = Math.floor(all.length / 2)
    // One run keeps its buckets between pages: a group the page does not touch is written from the
    // text it was last written with, so that text must follow every change of the window.
    const run = new Correlator('det', RULES, new StoreGroups(store))
    const out: CorrelationFinding[] = []
    for (const page of all.slice(0, half)) out.push(...(await run.ingest(page)))
    // The rest on fresh runs: they see only what was stored.
    for (const page of all.slice(half)) out.push(...(await new Correlator('det', RULES, new StoreGroups(store)).ingest(page)))
    expect(ids(out)).toEqual(expected)
  })

  test('windows live in at most BUCKETS documents per detector; silent groups are dropped when their bucket is written', async () => {
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const c = new Correlator('det3', [COUNT, USERS], new StoreGroups(store))
    // 400 hosts at T0, then every host again an hour later (both timespans are shorter).
    const wave = (t0: number, tag: string) =>
      Array.from({ length: 400 }, (_, i) => ({
        ruleId: 'r1',
        time: t0 + i,
        index: 'logs',
        id: `${tag}${i}`,
        source: { host: `h${i}`, user: 'u' },
      }))
    await c.ingest(wave(T0, 'a'))
    await c.ingest(wave(T0 + 3_600_000, 'b').slice(0, 200))
    const r = await store.search({ index: CORRELATION_STATE_INDEX, body: { size: 1000, query: { term: { scope: 'det3' } } } })
    expect(r.hits.hits.length).toBeLessThanOrEqual(BUCKETS)
    let groups = 0
    for (const h of r.hits.hits) {
      const doc = h._source as { newest: number; windows: string }
      for (const [, span, , window] of unpackWindows(doc.windows)) {
        groups++
        // Every group kept is within its rule's timespan of its bucket's newest event.
        expect(Math.max(...window.events.map((e) => e[0]))).toBeGreaterThanOrEqual(doc.newest - span)
      }
    }
    // The second wave touched (almost) every bucket: the first wave's silent groups are gone.
    expect(groups).toBeLessThan(800)
    expect(groups).toBeGreaterThanOrEqual(400)
  })

  test("rules share a bucket, and each group is dropped after its own rule's timespan", async () => {
    const store = openEmbeddedStore(':memory:')
    opened.push(store)
    const c = new Correlator('det5', [COUNT, USERS], new StoreGroups(store))
    const at = (ms: number, ruleId: string, id: string) => ({ ruleId, time: T0 + ms, index: 'logs', id, source: { host: 'h', user: 'u' } })
    // Host h is one group of each rule, so one bucket holds both windows.
    await c.ingest([at(0, 'r1', 'e0')])
    // Seven minutes later only USERS (10m) sees an event: COUNT's window (5m) is silent for longer
    // than its timespan and can go, USERS' first event is still inside its own.
    await c.ingest([at(7 * 60_000, 'r2', 'e1')])
    const r = await store.search({ index: CORRELATION_STATE_INDEX, body: { size: 10, query: { term: { scope: 'det5' } } } })
    expect(r.hits.hits).toHaveLength(1)
    const entries = unpackWindows((r.hits.hits[0]._source as { windows: string }).windows)
    expect(entries.map(([, span, , w]) => [span, w.events.map((e) => e[3])])).toEqual([[USERS.timespanMs, ['e0', 'e1']]])
  })
})

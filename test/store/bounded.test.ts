/**
 * Issue 12 (bounded cost) on the embedded store: pathological patterns evaluate in linear time,
 * OpenSearch's query, aggregation, mapping and PIT limits answer its 400/429 errors, a search
 * stops at its time budget with `timed_out: true`, and points in time do not copy the index.
 */
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { StoreError } from '../../src/store/errors'
import { openEmbeddedStore, type EmbeddedStore } from '../../src/store/embedded'
import type { SearchLimits } from '../../src/store/embedded/store'
import { rejectionOf } from '../helpers/thrown'

let s: EmbeddedStore
let limits: Partial<SearchLimits> = {}

beforeEach(() => {
  limits = {}
  s = openEmbeddedStore(':memory:', { searchLimits: () => limits })
})
afterEach(() => s.close())

const failure = (p: Promise<unknown>) => rejectionOf(StoreError, p)

const deep = (n: number, leaf: unknown = { match_all: {} }) => {
  let q: unknown = leaf
  for (let i = 0; i < n; i++) q = { bool: { must: [q] } }
  return q
}

describe('linear-time patterns', () => {
  test('dozens of (a+)+ regexps and wildcard stars against long values answer, and answer right', async () => {
    await s.index({ index: 't', id: '1', body: { title: 'a'.repeat(31) }, refresh: true })
    await s.index({ index: 't', id: '2', body: { title: 'a'.repeat(30) + 'b' }, refresh: true })
    // Each of these takes seconds to minutes on a backtracking engine.
    const regexps = Array.from({ length: 40 }, () => ({ regexp: { 'title.keyword': '(a+)+b' } }))
    const r = await s.count({ index: 't', body: { query: { bool: { should: regexps } } } })
    expect(r.count).toBe(1)
    const star = { wildcard: { 'title.keyword': '*a*a*a*a*a*a*a*a*a*a*a*a*?c' } }
    expect((await s.count({ index: 't', body: { query: star } })).count).toBe(0)
    const pcre = { regexp: { 'title.keyword': { value: 'x', flags: 'NONE', _pcre: { pattern: '^(a|aa)+$', flags: '' } } } }
    expect((await s.count({ index: 't', body: { query: pcre } })).count).toBe(1)
  })

  test('Sigma _pcre: \\b, inner anchors and the i/m/s flags', async () => {
    await s.index({ index: 't', id: '1', body: { msg: 'first line\nCMD.exe /c whoami' }, refresh: true })
    const pcre = (pattern: string, flags = '') => ({
      query: { regexp: { 'msg.keyword': { value: 'x', flags: 'NONE', _pcre: { pattern, flags } } } },
    })
    const count = async (pattern: string, flags?: string) => (await s.count({ index: 't', body: pcre(pattern, flags) })).count
    expect(await count('\\bwhoami\\b')).toBe(1)
    expect(await count('\\bhoami')).toBe(0)
    expect(await count('^cmd\\.exe', 'im')).toBe(1)
    expect(await count('^cmd\\.exe', 'i')).toBe(0)
    expect(await count('line.CMD', 's')).toBe(1)
    expect(await count('line.CMD')).toBe(0)
  })
})

describe('query limits', () => {
  beforeEach(async () => {
    await s.index({ index: 't', id: '1', body: { title: 'x' }, refresh: true })
  })

  test('a query nested 20,000 levels deep is a 400, not a crash', async () => {
    for (const p of [
      s.search({ index: 't', body: { query: deep(20_000) } as never }),
      s.count({ index: 't', body: { query: deep(20_000) } as never }),
    ]) {
      const e = await failure(p)
      expect(e.status).toBe(400)
      expect(e.type).toBe('x_content_parse_exception')
      expect(e.reason).toContain('exceeds the maximum allowed (1000')
    }
    // 300 bool levels (900 JSON levels) are within the parser's limit and evaluate.
    expect((await s.count({ index: 't', body: { query: deep(300) } as never })).count).toBe(1)
  })

  test('indices.query.bool.max_clause_count: one bool, and a whole query', async () => {
    const terms = (n: number) => Array.from({ length: n }, (_, i) => ({ term: { title: `v${i}` } }))
    let e = await failure(s.search({ index: 't', body: { query: { bool: { should: terms(1025) } } } }))
    expect([e.status, e.reason]).toEqual([400, 'failed to create query: maxClauseCount is set to 1024'])
    const wide = { bool: { should: Array.from({ length: 40 }, () => ({ bool: { should: terms(30) } })) } }
    e = await failure(s.count({ index: 't', body: { query: wide } }))
    expect(e.reason).toContain('Query contains too many nested clauses; maxClauseCount is set to 1024')
    expect((await s.count({ index: 't', body: { query: { bool: { should: terms(1000) } } } })).count).toBe(0)
  })

  test('index.max_regex_length and index.query.max_nested_depth', async () => {
    const e = await failure(s.search({ index: 't', body: { query: { regexp: { title: 'a'.repeat(1001) } } } }))
    expect(e.reason).toBe(
      'The length of regex [1001] used in the Regexp Query request has exceeded the allowed maximum of [1000]. This maximum can be set by changing the [index.max_regex_length] index level setting.',
    )
    let q: unknown = { match_all: {} }
    for (let i = 0; i < 21; i++) q = { nested: { path: 'n', query: q } }
    const n = await failure(s.search({ index: 't', body: { query: q } as never }))
    expect(n.reason).toContain('The depth of Nested Query is [21] has exceeded the allowed maximum of [20]')
  })

  test('search.max_buckets', async () => {
    limits = { maxBuckets: 10 }
    await s.bulk({ body: Array.from({ length: 20 }, (_, i) => [{ index: { _index: 'b' } }, { k: `k${i}` }]).flat(), refresh: true })
    const e = await failure(s.search({ index: 'b', body: { size: 0, aggs: { k: { terms: { field: 'k.keyword', size: 5 } } } } }))
    expect(e.type).toBe('too_many_buckets_exception')
    expect(e.reason).toContain('Must be less than or equal to: [10]')
  })

  test('search.max_buckets counts the shard_size keys a terms aggregation keeps, not every key it saw', async () => {
    // Two hours of 20 keys each under a date_histogram: 40 keys seen, 2 + 2 * 11 (shard_size of size 1) kept.
    limits = { maxBuckets: 30 }
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, i < 20 ? 0 : 1, i % 20)).toISOString()
    await s.bulk({
      body: Array.from({ length: 40 }, (_, i) => [{ index: { _index: 'bh' } }, { ts: at(i), k: `k${i}` }]).flat(),
      refresh: true,
    })
    const aggs = { h: { date_histogram: { field: 'ts', fixed_interval: '1h' }, aggs: { k: { terms: { field: 'k.keyword', size: 1 } } } } }
    const r = await s.search({ index: 'bh', body: { size: 0, aggs } })
    const hours = (r.aggregations!.h as { buckets: Array<{ doc_count: number; k: { buckets: unknown[]; sum_other_doc_count: number } }> })
      .buckets
    expect(hours.map((h) => [h.doc_count, h.k.buckets.length, h.k.sum_other_doc_count])).toEqual([
      [20, 1, 19],
      [20, 1, 19],
    ])
    // A larger size keeps more: 2 + 2 * 20 is past the limit.
    const e = await failure(
      s.search({ index: 'bh', body: { size: 0, aggs: { h: { ...aggs.h, aggs: { k: { terms: { field: 'k.keyword', size: 20 } } } } } } }),
    )
    expect(e.type).toBe('too_many_buckets_exception')
  })
})

describe('the request breaker counts every distinct key a search holds, whole-index reads too', () => {
  // 60 documents, each its own keyword; one of them matches the query.
  const load = () =>
    s.bulk({
      body: Array.from({ length: 60 }, (_, i) => [
        { index: { _index: 'rk' } },
        { k: `k${i}`, n: i, bits: [...i.toString(2).padStart(6, '0')].map((b) => (b === '1' ? 'yes' : 'no')).join(' ') },
      ]).flat(),
      refresh: true,
    })
  const one = { term: { n: 7 } }
  const searches: Array<[string, unknown]> = [
    ['terms keys collected', { aggs: { a: { terms: { field: 'k.keyword', size: 5 } } } }],
    ['significant_terms background', { query: one, aggs: { a: { significant_terms: { field: 'k.keyword' } } } }],
    ['terms min_doc_count 0 (every value of the field)', { query: one, aggs: { a: { terms: { field: 'k.keyword', min_doc_count: 0 } } } }],
    [
      // Two words in 60 orders: few terms, but each document's six words are a sequence of its own.
      'significant_text filter_duplicate_text sequences',
      { aggs: { a: { significant_text: { field: 'bits', filter_duplicate_text: true, background_filter: one } } } },
    ],
  ]
  for (const [name, body] of searches)
    test(name, async () => {
      await load()
      limits = { maxRequestKeys: 1000 }
      const r = await s.search({ index: 'rk', body: { size: 0, ...(body as object) } })
      expect(r.aggregations!.a).toBeDefined()
      limits = { maxRequestKeys: 40 }
      const e = await failure(s.search({ index: 'rk', body: { size: 0, ...(body as object) } }))
      expect([e.status, e.type]).toEqual([429, 'circuit_breaking_exception'])
      expect(e.reason).toContain('[40] distinct keys per request')
    })
})

describe('auto_date_histogram', () => {
  test('keeps at most 10,000 documents for its sub-aggregations, and walks no span past a million buckets', async () => {
    await s.bulk({
      body: Array.from({ length: 10_001 }, (_, i) => [
        { index: { _index: 'ad' } },
        { t: new Date(Date.UTC(2024, 0, 1) + i * 60_000).toISOString(), v: i },
      ]).flat(),
      refresh: true,
    })
    const plain = await s.search({ index: 'ad', body: { size: 0, aggs: { h: { auto_date_histogram: { field: 't' } } } } })
    expect((plain.aggregations!.h as { interval: string }).interval).toBe('1d')
    const sub = await failure(
      s.search({
        index: 'ad',
        body: { size: 0, aggs: { h: { auto_date_histogram: { field: 't' }, aggs: { s: { sum: { field: 'v' } } } } } },
      }),
    )
    expect([sub.status, sub.reason]).toEqual([400, expect.stringContaining('reads at most [10000] documents')])
    await s.bulk({
      body: [{ index: { _index: 'far' } }, { t: '1900-01-01' }, { index: { _index: 'far' } }, { t: '2100-01-01' }],
      refresh: true,
    })
    const huge = await failure(
      s.search({ index: 'far', body: { size: 0, aggs: { h: { auto_date_histogram: { field: 't', buckets: 100_000_000 } } } } }),
    )
    expect([huge.status, huge.reason]).toEqual([400, expect.stringContaining('more than [1000000] buckets')])
  })
})

describe('time budget', () => {
  test('a search past its timeout answers timed_out with the hits found so far', async () => {
    await s.bulk({ body: Array.from({ length: 300 }, (_, i) => [{ index: { _index: 'tb' } }, { n: i, s: 'abc' }]).flat(), refresh: true })
    const query = { bool: { must_not: [{ regexp: { 's.keyword': 'x.*' } }] } }
    const full = await s.search({ index: 'tb', body: { query, size: 0, track_total_hits: true } })
    expect([full.timed_out, (full.hits.total as { value: number }).value]).toEqual([false, 300])
    const cut = await s.search({ index: 'tb', body: { query, size: 0, track_total_hits: true, timeout: '0ms' } as never })
    expect(cut.timed_out).toBe(true)
    expect((cut.hits.total as { value: number }).value).toBeLessThan(300)
    // The node default applies without a `timeout`.
    limits = { defaultSearchTimeoutMs: 0 }
    expect((await s.search({ index: 'tb', body: { query, size: 0 } })).timed_out).toBe(true)
  })
})

describe('mapping limits on dynamic mapping', () => {
  test('a 3,000-level object is refused, a 500-level one by index.mapping.depth.limit; exists stays cheap', async () => {
    const nest = (n: number) => {
      let doc: Record<string, unknown> = { leaf: 1 }
      for (let i = 0; i < n; i++) doc = { a: doc }
      return doc
    }
    await s.index({ index: 'm', id: 'flat', body: { b: 1 } })
    const parser = await failure(s.index({ index: 'm', id: 'deep', body: nest(3000) }))
    expect([parser.status, parser.type]).toEqual([400, 'mapper_parsing_exception'])
    const e = await failure(s.index({ index: 'm', id: 'deep', body: nest(500) }))
    expect(e.status).toBe(400)
    expect(e.reason).toMatch(/^Limit of mapping depth \[20\] has been exceeded due to object field \[a(\.a){19}\]$/)
    expect((await s.count({ index: 'm', body: { query: { exists: { field: 'a' } } } })).count).toBe(0)
  })

  test('index.mapping.total_fields.limit and nested_fields.limit', async () => {
    const wide = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`f${i}`, i]))
    expect((await failure(s.index({ index: 'w', id: '1', body: wide }))).reason).toBe('Limit of total fields [1000] has been exceeded')
    await s.createIndex({ index: 'w2', body: { settings: { 'index.mapping.total_fields.limit': 5 } } })
    await s.index({ index: 'w2', id: '1', body: { a: 1, b: 2 } })
    expect((await failure(s.index({ index: 'w2', id: '2', body: { c: 1, d: 2, e: 3, f: 4 } }))).reason).toBe(
      'Limit of total fields [5] has been exceeded',
    )
    const nested = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`n${i}`, { type: 'nested' }]))
    const n = await failure(s.createIndex({ index: 'nested', body: { mappings: { properties: nested } } }))
    expect(n.reason).toBe('Limit of nested fields [50] has been exceeded')
  })
})

describe('points in time', () => {
  const historyRows = () =>
    (s as unknown as { db: { query(q: string): { get(): { n: number } } } }).db.query('SELECT count(*) AS n FROM pit_history').get().n

  test('twenty PITs copy nothing; a PIT still sees the versions it was opened on', async () => {
    await s.bulk({
      body: Array.from({ length: 50 }, (_, i) => [{ index: { _index: 'p', _id: String(i) } }, { v: i }]).flat(),
      refresh: true,
    })
    const pits = []
    for (let i = 0; i < 20; i++) pits.push((await s.createPit({ index: 'p', keep_alive: '24h' })).pit_id)
    expect(historyRows()).toBe(0)
    // Writes after the PIT: an update, a delete, a new document.
    await s.index({ index: 'p', id: '1', body: { v: 1000 } })
    await s.delete({ index: 'p', id: '2' })
    await s.index({ index: 'p', id: 'new', body: { v: -1 } })
    expect(historyRows()).toBe(2) // one kept version each, shared by the twenty PITs
    const seen = await s.search({ body: { pit: { id: pits[7] }, size: 100, query: { terms: { _id: ['1', '2', 'new'] } } } })
    expect(seen.hits.hits.map((h) => [h._id, h._source])).toEqual([
      ['1', { v: 1 }],
      ['2', { v: 2 }],
    ])
    const now = await s.search({ index: 'p', body: { size: 100, query: { terms: { _id: ['1', '2', 'new'] } } } })
    expect(now.hits.hits.map((h) => h._id).sort()).toEqual(['1', 'new'])
    await s.deleteAllPits()
    expect(historyRows()).toBe(0)
  })

  test('search.max_open_pit_context (429) and point_in_time.max_keep_alive (400)', async () => {
    limits = { maxOpenPitContext: 3 }
    await s.index({ index: 'p', id: '1', body: { v: 1 } })
    for (let i = 0; i < 3; i++) await s.createPit({ index: 'p', keep_alive: '1m' })
    const e = await failure(s.createPit({ index: 'p', keep_alive: '1m' }))
    expect([e.status, e.type]).toEqual([429, 'rejected_execution_exception'])
    expect(e.reason).toBe(
      'Trying to create too many Point In Time contexts. Must be less than or equal to: [3]. This limit can be set by changing the [search.max_open_pit_context] setting.',
    )
    await s.deleteAllPits()
    const k = await failure(s.createPit({ index: 'p', keep_alive: '3650d' }))
    expect([k.status, k.reason]).toEqual([
      400,
      'Keep alive for request (3650d) is too large. It must be less than (1d). This limit can be set by changing the [point_in_time.max_keep_alive] cluster level setting.',
    ])
  })
})

describe('large sources', () => {
  test('a document of 150,000 geo points sorts by distance and aggregates (reduced by loops: a spread of a million distances overflows the stack)', async () => {
    await s.createIndex({ index: 'g', body: { mappings: { properties: { loc: { type: 'geo_point' } } } } })
    await s.index({
      index: 'g',
      id: '1',
      body: { loc: Array.from({ length: 150_000 }, (_, i) => [i % 180, (i % 90) - 45]) },
      refresh: true,
    })
    const sorted = await s.search({ index: 'g', body: { _source: false, sort: [{ _geo_distance: { loc: '0,0', mode: 'max' } } as never] } })
    expect(sorted.hits.hits[0].sort?.[0]).toBeGreaterThan(15_000_000)
    const r = await s.search({ index: 'g', body: { size: 0, aggs: { c: { geo_centroid: { field: 'loc' } } } } })
    expect((r.aggregations!.c as { count: number }).count).toBe(150_000)
  })

  test('read when their row is reached, parsed once per version: updates, deletes and PITs see the right one', async () => {
    const big = (v: string) => ({ user: 'alice', v, messages: Array.from({ length: 200 }, (_, i) => `${v}-${i}`.padEnd(500, '.')) })
    await s.index({ index: 'big', id: '1', body: big('one'), refresh: true })
    await s.index({ index: 'big', id: '2', body: { user: 'bob', v: 'small' }, refresh: true })
    const vs = async (body: Record<string, unknown>) =>
      (await s.search({ index: 'big', body: { ...body, size: 10 } })).hits.hits.map((h) => (h._source as { v: string }).v).sort()
    expect(await vs({ query: { match: { v: 'one' } } })).toEqual(['one'])
    const { pit_id } = await s.createPit({ index: 'big', keep_alive: '1m' })
    await s.index({ index: 'big', id: '1', body: big('two'), refresh: true })
    expect(await vs({ query: { match: { v: 'one' } } })).toEqual([])
    expect(await vs({ query: { match: { v: 'two' } } })).toEqual(['two'])
    const old = await s.search({ body: { pit: { id: pit_id }, query: { match: { v: 'one' } } } })
    expect(old.hits.hits.map((h) => (h._source as { messages: string[] }).messages[199].slice(0, 7))).toEqual(['one-199'])
    // A deleted index's rids go to the next index: nothing parsed for the first may answer for it.
    await s.deleteIndex({ index: 'big' })
    await s.index({ index: 'big', id: '1', body: big('three'), refresh: true })
    expect(await vs({ query: { match_all: {} } })).toEqual(['three'])
  })

  test('a document rewritten and searched again and again keeps one parsed version, not one per write', async () => {
    const list = (n: number) => ({ rules: Array.from({ length: 2_000 + n }, (_, i) => `rule-${i}`.padEnd(40, '-')) })
    const parsed = () => (s as unknown as { core: { bigSources: Map<number, unknown> } }).core.bigSources.size
    for (let n = 0; n < 30; n++) {
      await s.index({ index: 'grows', id: 'integration', body: list(n), refresh: true })
      const hit = (await s.search({ index: 'grows', body: { query: { match_all: {} } } })).hits.hits[0]
      expect((hit._source as { rules: string[] }).rules).toHaveLength(2_000 + n)
    }
    expect(parsed()).toBe(1)
  })
})

test('index.max_result_window: an index with a smaller window refuses a larger from + size', async () => {
  await s.createIndex({ index: 'small', body: { settings: { 'index.max_result_window': 5 } } })
  await s.index({ index: 'small', id: '1', body: { a: 1 }, refresh: true })
  const e = await failure(s.search({ index: 'small', body: { from: 3, size: 3 } }))
  expect(e.reason).toContain('Result window is too large, from + size must be less than or equal to: [5] but was [6]')
  expect((await s.search({ index: 'small', body: { from: 0, size: 5 } })).hits.hits).toHaveLength(1)
  const big = await failure(s.search({ index: 'small', body: { size: 10_001 } }))
  expect(big.reason).toContain('[5] but was [10001]')
})

test('pattern queries skip values longer than a Lucene term (32,766 bytes), like OpenSearch that indexes none', async () => {
  await s.createIndex({ index: 'k', body: { mappings: { properties: { k: { type: 'keyword' } } } } })
  await s.index({ index: 'k', id: 'long', body: { k: 'ab'.repeat(20_000) }, refresh: true })
  await s.index({ index: 'k', id: 'short', body: { k: 'ab'.repeat(100) }, refresh: true })
  const ids = async (query: unknown) => (await s.search({ index: 'k', body: { query } as never })).hits.hits.map((h) => h._id)
  expect(await ids({ regexp: { k: '(ab)*' } })).toEqual(['short'])
  expect(await ids({ wildcard: { k: 'a?*' } })).toEqual(['short'])
  expect((await ids({ term: { k: 'ab'.repeat(20_000) } })).length).toBe(1)
})

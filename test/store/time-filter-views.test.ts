// An event browser's searches (OpenSearch Dashboards' Discover): a time range as Dashboards writes
// it (a `match_all` and a `range` with `format` in the bool's filter), filter pills (`match_phrase`
// on keywords), the newest page sorted by time, a date_histogram beside it and an exact total.
// The store answers them from its indexes (the sort field's index walked between the range's
// bounds, the histogram from columns); hits, sort values, totals and buckets must be those of a
// scan that evaluates every document.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { IndexMeta } from '../../src/store/embedded/catalog'
import { conjunctionParts, planQuery } from '../../src/store/embedded/plan'

const T0 = Date.UTC(2026, 0, 1)
const iso = (minute: number) => new Date(T0 + minute * 60_000).toISOString()
const N = 3000

describe('time-filtered views equal an evaluator-only scan', () => {
  const store = openEmbeddedStore(':memory:')
  const mappings = {
    properties: { '@timestamp': { type: 'date' }, host: { type: 'keyword' }, n: { type: 'long' }, msg: { type: 'text' } },
  }
  // host h0..h49; "old" only in the first 100 documents (a pill whose matches sort last when
  // descending); n missing in every 7th document and two values in every 11th.
  const doc = (i: number) => ({
    '@timestamp': iso(i),
    host: i < 100 ? 'old' : `h${i % 50}`,
    ...(i % 7 === 0 ? {} : { n: i % 11 === 0 ? [i, i + 5000] : i }),
    msg: `line ${i % 5}`,
  })
  beforeAll(async () => {
    await store.putIndexTemplate({ name: 'logs', body: { index_patterns: ['logs-*'], data_stream: {}, template: { mappings } } })
    await store.bulk({ index: 'logs-x', body: Array.from({ length: N }, (_, i) => [{ create: { _id: String(i) } }, doc(i)]).flat() })
    // The same documents in a plain index, where every 13th lacks a timestamp.
    await store.createIndex({ index: 'plain', body: { mappings } })
    await store.bulk({
      index: 'plain',
      body: Array.from({ length: N }, (_, i) => {
        const { '@timestamp': ts, ...rest } = doc(i)
        return [{ index: { _id: String(i) } }, i % 13 === 0 ? rest : { ...rest, '@timestamp': ts }]
      }).flat(),
    })
    await store.refresh({ index: 'logs-x,plain' })
  })
  afterAll(() => store.close())

  // Dashboards' time filter: bounds as ISO text with a format, a match_all beside them.
  const timeFilter = (from: number, to: number, extra: unknown[] = [], format = 'strict_date_optional_time') => ({
    bool: {
      must: [],
      filter: [{ match_all: {} }, ...extra, { range: { '@timestamp': { gte: iso(from), lte: iso(to), format } } }],
      should: [],
      must_not: [],
    },
  })
  const queries: Array<Record<string, unknown>> = [
    timeFilter(200, 2900),
    timeFilter(0, N),
    timeFilter(2990, 5000),
    timeFilter(200, 2900, [{ match_phrase: { host: 'h7' } }]),
    // A pill whose matches are the oldest documents, sorted newest first.
    timeFilter(0, N, [{ match_phrase: { host: 'old' } }]),
    timeFilter(0, N, [{ match_phrase: { host: { query: 'old' } } }, { range: { n: { gte: 30 } } }]),
    { bool: { filter: [{ range: { '@timestamp': { gt: iso(100), lt: iso(2000) } } }], must_not: [{ match_phrase: { host: 'h3' } }] } },
    { range: { '@timestamp': { gte: String(T0 + 500 * 60_000), format: 'epoch_millis' } } },
    { range: { '@timestamp': { lt: String((T0 + 700 * 60_000) / 1000), format: 'epoch_second' } } },
    { range: { n: { gte: 1000, lt: 2000 } } },
    // A negated pill, a DQL clause, a terms pill beside the time filter (aggregations from columns and the pills' rows).
    {
      bool: {
        filter: [{ match_all: {} }, { range: { '@timestamp': { gte: iso(300), lte: iso(2800) } } }],
        must_not: [{ match_phrase: { host: 'h3' } }],
      },
    },
    timeFilter(100, 2900, [{ bool: { should: [{ match: { host: 'h7' } }], minimum_should_match: 1 } }]),
    timeFilter(
      100,
      2900,
      [{ terms: { host: ['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'h8', 'h9', 'h10', 'old'] } }],
      'strict_date_optional_time',
    ),
    {
      bool: {
        filter: [{ match_all: {} }, { bool: { should: [{ range: { n: { gte: 500 } } }], minimum_should_match: 1 } }],
        must_not: [{ ids: { values: ['600', '601'] } }],
      },
    },
    // The search bar's Lucene syntax beside the time filter.
    timeFilter(100, 2900, [{ query_string: { query: 'NOT host:h3', analyze_wildcard: true, time_zone: 'UTC' } }]),
    timeFilter(100, 2900, [{ query_string: { query: 'host:h7 AND n:[100 TO 2000]', analyze_wildcard: true } }]),
    // Many matches, all far down a newest-first walk: the walk takes the plan up again.
    { bool: { filter: [{ match_all: {} }, { range: { n: { lt: 1400 } } }] } },
    { range: { '@timestamp': { gt: iso(100), lt: iso(2000) } } },
    { bool: { filter: [{ match_all: {} }, { match: { msg: 'line' } }, { range: { '@timestamp': { gte: iso(1000) } } }] } },
  ]
  const sorts: Array<Array<Record<string, unknown>>> = [
    [{ '@timestamp': { order: 'desc', unmapped_type: 'boolean' } }],
    [{ '@timestamp': 'asc' }],
    [{ n: 'desc' }],
  ]
  // Wrapping in must_not(must_not(...)) keeps the meaning but defeats the planner: every document read.
  const scan = (q: Record<string, unknown>) => ({ bool: { must_not: [{ bool: { must_not: [q] } }] } })
  const answer = async (index: string, body: Record<string, unknown>) => {
    const r = await store.search({ index, body })
    return {
      total: r.hits.total,
      hits: r.hits.hits.map((h) => [h._id, h.sort]),
      aggregations: r.aggregations,
    }
  }

  for (const index of ['logs-x', 'plain'])
    test(`${index}: pages, totals and histograms`, async () => {
      let compared = 0
      for (const query of queries)
        for (const sort of sorts)
          for (const size of [1, 500]) {
            const histogram = { h: { date_histogram: { field: '@timestamp', fixed_interval: '1h', min_doc_count: 1 } } }
            const bodies: Array<Record<string, unknown>> = [
              { sort, size, track_total_hits: true },
              { sort, size, track_total_hits: true, aggs: histogram },
              { sort, size, aggs: { hosts: { terms: { field: 'host', size: 5 } } } },
              { sort, size },
            ]
            for (const body of bodies) {
              const indexed = await answer(index, { ...body, query })
              expect({ query, body, answer: indexed }).toEqual({
                query,
                body,
                answer: await answer(index, { ...body, query: scan(query) }),
              })
              compared++
            }
          }
      expect(compared).toBe(queries.length * sorts.length * 2 * 4)
    }, 120_000)

  test('search_after through a time filter, page by page, equals the scan', async () => {
    for (const index of ['logs-x', 'plain'])
      for (const query of [queries[0], queries[3], queries[4]]) {
        const pages = async (q: Record<string, unknown>) => {
          const ids: string[] = []
          let after: unknown[] | undefined
          for (let i = 0; i < 40; i++) {
            const r = await store.search({ index, body: { query: q, size: 97, sort: [{ '@timestamp': 'desc' }], search_after: after } })
            if (r.hits.hits.length === 0) break
            ids.push(...r.hits.hits.map((h) => h._id))
            after = r.hits.hits.at(-1)!.sort
          }
          return ids
        }
        const viaIndex = await pages(query)
        expect(viaIndex.length).toBeGreaterThan(0)
        expect(viaIndex).toEqual(await pages(scan(query)))
      }
  })

  test("Dashboards' time filter is planned: its format reads the bounds, the match_all beside it restricts nothing", async () => {
    const [backing] = await store.resolve('logs-x')
    const meta = (store as unknown as { core: { cat: { byName: Map<string, IndexMeta> } } }).core.cat.byName.get(backing)!
    const plan = planQuery(timeFilter(200, 2900), meta, Date.now())
    expect(plan?.exact).toBe(true)
    expect(plan?.bounds?.ops).toEqual([
      ['gte', T0 + 200 * 60_000],
      ['lte', T0 + 2900 * 60_000],
    ])
    expect(conjunctionParts(timeFilter(200, 2900), meta, Date.now())).toEqual({
      ranges: [{ field: '@timestamp', ops: plan!.bounds!.ops }],
      kept: [],
      dropped: [],
    })
    // Pills (a DQL should of one clause, a negated phrase) are lookups; a text match is not.
    const pills = conjunctionParts(
      timeFilter(200, 2900, [{ bool: { should: [{ match: { host: 'h7' } }], minimum_should_match: 1 } }]),
      meta,
      Date.now(),
    )
    expect([pills?.ranges.length, pills?.kept.length, pills?.dropped.length]).toEqual([1, 1, 0])
    expect(conjunctionParts({ bool: { filter: [{ match: { msg: 'line' } }] } }, meta, Date.now())).toBeUndefined()
    expect(conjunctionParts({ bool: { should: [{ term: { host: 'h1' } }, { term: { host: 'h2' } }] } }, meta, Date.now())).toBeUndefined()
    expect(planQuery({ match_phrase: { host: 'h7' } }, meta, Date.now())).toMatchObject({ exact: true, lookup: true })
    const optional = { bool: { must: [{ match_all: {} }], should: [{ term: { host: 'h7' } }] } }
    expect(planQuery(optional, meta, Date.now())).toBeNull()
    expect((await store.search({ index: 'logs-x', body: { query: optional, size: 0, track_total_hits: true } })).hits.total).toEqual({
      value: N,
      relation: 'eq',
    })
  })

  test("a range's format reads its bounds only: documents are read as their mapping says, as OpenSearch does", async () => {
    // Seconds since the epoch for the bounds; the documents hold ISO text.
    const q = {
      range: { '@timestamp': { gte: String((T0 + 60 * 60_000) / 1000), lt: String((T0 + 70 * 60_000) / 1000), format: 'epoch_second' } },
    }
    for (const query of [q, scan(q)]) {
      const r = await store.search({ index: 'logs-x', body: { query, size: 20, sort: ['@timestamp'] } })
      expect(r.hits.hits.map((h) => h._id)).toEqual(Array.from({ length: 10 }, (_, i) => String(60 + i)))
    }
  })
})

describe('a large index counts a time filter and its pills from columns', () => {
  // Past COLUMN_COUNT_FROM (50k) documents the exact total is read from columns and kept until the
  // next write: totals must be the scan's, before and after writes.
  const store = openEmbeddedStore(':memory:')
  const M = 60_000
  const doc = (i: number) => ({ '@timestamp': iso(i), host: `h${i % 40}`, outcome: i % 3 === 0 ? 'success' : 'failure' })
  beforeAll(async () => {
    const mappings = { properties: { '@timestamp': { type: 'date' }, host: { type: 'keyword' }, outcome: { type: 'keyword' } } }
    await store.createIndex({ index: 'big', body: { mappings } })
    for (let from = 0; from < M; from += 5000)
      await store.bulk({
        index: 'big',
        body: Array.from({ length: 5000 }, (_, k) => [{ index: { _id: String(from + k) } }, doc(from + k)]).flat(),
      })
    await store.refresh({ index: 'big' })
  }, 60_000)
  afterAll(() => store.close())

  const range = (from: number, to: number) => ({ range: { '@timestamp': { gte: iso(from), lte: iso(to) } } })
  const queries = [
    { bool: { filter: [{ match_all: {} }, range(6000, 59_000)], must_not: [{ match_phrase: { outcome: 'success' } }] } },
    { bool: { filter: [range(0, M), { match_phrase: { host: 'h7' } }] } },
    { bool: { filter: [range(100, 50_000), { term: { outcome: 'failure' } }], must_not: [{ terms: { host: ['h1', 'h2'] } }] } },
  ]
  const scan = (q: Record<string, unknown>) => ({ bool: { must_not: [{ bool: { must_not: [q] } }] } })
  const totals = async () => {
    const out: unknown[] = []
    for (const query of queries)
      for (const body of [
        { size: 3, sort: [{ '@timestamp': 'desc' as const }], track_total_hits: true },
        { size: 0, track_total_hits: true },
        { size: 2, track_total_hits: 55_000 },
      ]) {
        const indexed = await store.search({ index: 'big', body: { ...body, query } })
        const scanned = await store.search({ index: 'big', body: { ...body, query: scan(query) } })
        expect({ query, body, total: indexed.hits.total, ids: indexed.hits.hits.map((h) => h._id) }).toEqual({
          query,
          body,
          total: scanned.hits.total,
          ids: scanned.hits.hits.map((h) => h._id),
        })
        out.push(indexed.hits.total)
      }
    return out
  }

  test('totals equal the scan, and follow writes', async () => {
    const before = await totals()
    // A match deleted, one rewritten out of the pills, new ones added: the kept positions must not answer.
    await store.delete({ index: 'big', id: '7001' })
    await store.index({ index: 'big', id: '7000', body: { ...doc(7000), outcome: 'success' } })
    await store.bulk({ index: 'big', body: [{ index: { _id: 'n1' } }, doc(7007), { index: { _id: 'n2' } }, doc(7008)], refresh: true })
    const after = await totals()
    expect(after).not.toEqual(before)
  }, 60_000)
})

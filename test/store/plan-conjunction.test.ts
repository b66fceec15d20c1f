// A bool of terms with ranges beside them is answered from the field-value index (plan.ts's
// exactConjunction): its hits and totals must be the evaluator's, whichever form the planner picks
// (the range's rows, its complement's, or a lookup per row of the most selective clause).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'

const T0 = Date.UTC(2024, 0, 1)
const iso = (minute: number) => new Date(T0 + minute * 60_000).toISOString()

describe('bool plans with ranges and lookups equal an evaluator-only scan', () => {
  const store = openEmbeddedStore(':memory:')
  const mappings = {
    properties: {
      '@timestamp': { type: 'date' },
      host: { type: 'keyword' },
      outcome: { type: 'keyword' },
      n: { type: 'long' },
      msg: { type: 'text' },
    },
  }
  // n: missing in every 7th document, two values in every 11th; outcome "ok" in 2 of 3.
  const doc = (i: number) => ({
    '@timestamp': iso(i),
    host: `h${i % 40}`,
    outcome: i % 3 === 0 ? 'failed' : 'ok',
    ...(i % 7 === 0 ? {} : { n: i % 11 === 0 ? [i, i + 500] : i }),
    msg: `line ${i % 5}`,
  })
  beforeAll(async () => {
    await store.putIndexTemplate({ name: 'logs', body: { index_patterns: ['logs-*'], data_stream: {}, template: { mappings } } })
    await store.bulk({ index: 'logs-x', body: Array.from({ length: 1200 }, (_, i) => [{ create: { _id: String(i) } }, doc(i)]).flat() })
    // The same documents in a plain index, where some lack a timestamp: no complement there.
    await store.createIndex({ index: 'plain', body: { mappings } })
    await store.bulk({
      index: 'plain',
      body: Array.from({ length: 1200 }, (_, i) => {
        const { '@timestamp': ts, ...rest } = doc(i)
        return [{ index: { _id: String(i) } }, i % 13 === 0 ? rest : { ...rest, '@timestamp': ts }]
      }).flat(),
    })
  })
  afterAll(() => store.close())

  const queries: Array<Record<string, unknown>> = [
    // A broad time filter beside a term and an exclusion (the complement form on a data stream);
    // the bounds fall on matching documents.
    {
      bool: {
        must: [{ term: { host: 'h3' } }],
        filter: [{ range: { '@timestamp': { gte: iso(123) } } }],
        must_not: [{ term: { outcome: 'ok' } }],
      },
    },
    { bool: { filter: [{ term: { host: 'h3' } }, { range: { '@timestamp': { gt: iso(3), lte: iso(1163) } } }] } },
    // A narrow one (the range's own rows).
    { bool: { filter: [{ term: { outcome: 'ok' } }, { range: { '@timestamp': { gte: iso(1100), lt: iso(1130) } } }] } },
    // Ranges on a field some documents lack and some hold twice.
    { bool: { filter: [{ term: { host: 'h11' } }, { range: { n: { gte: 100 } } }] } },
    { bool: { filter: [{ term: { outcome: 'failed' } }, { range: { n: { gte: 200, lt: 260 } } }] } },
    { bool: { filter: [{ term: { host: 'h22' } }, { range: { n: { lt: 1000 } } }] } },
    { bool: { must: [{ term: { host: 'h3' } }], must_not: [{ range: { n: { lt: 400 } } }] } },
    { bool: { must: [{ terms: { host: ['h1', 'h2'] } }], filter: [{ range: { '@timestamp': { lt: iso(900) } } }] } },
    // One small clause and larger ones: looked up row by row.
    { bool: { filter: [{ term: { outcome: 'ok' } }, { term: { host: 'h7' } }, { match: { msg: 'line' } }] } },
    {
      bool: {
        filter: [{ term: { host: 'h7' } }, { ids: { values: ['1', '7', '47', '87'] } }],
        must_not: [{ term: { outcome: 'failed' } }],
      },
    },
    { query_string: { query: 'outcome:ok AND host:h9 AND msg:4 AND NOT n:[0 TO 100]' } },
  ]

  for (const index of ['logs-x', 'plain'])
    test(`${index}: hits, totals and counts`, async () => {
      for (const query of queries) {
        // Wrapping in must_not(must_not(...)) keeps the meaning but defeats the planner: a full scan.
        const scan = { bool: { must_not: [{ bool: { must_not: [query] } }] } }
        const ids = async (q: Record<string, unknown>) =>
          (await store.search({ index, body: { query: q, size: 2000, sort: ['_doc'] } })).hits.hits.map((h) => h._id)
        const viaIndex = await ids(query)
        expect({ query, hits: viaIndex.length > 0 }).toEqual({ query, hits: true })
        expect(viaIndex).toEqual(await ids(scan))
        const page = async (q: Record<string, unknown>) => {
          const r = await store.search({ index, body: { query: q, size: 3 } })
          return { total: r.hits.total, ids: r.hits.hits.map((h) => h._id) }
        }
        expect(await page(query)).toEqual(await page(scan))
        expect((await store.count({ index, body: { query } })).count).toBe(viaIndex.length)
      }
    })

  test('the plans read the index, not the documents: a broad time filter is its complement, a small clause leads', async () => {
    const [backing] = await store.resolve('logs-x')
    const plan = (query: unknown) => store.explain(backing, query).join(' | ')
    const broad = plan(queries[0])
    expect(broad).toContain('MERGE (EXCEPT)')
    expect(broad).toContain('(f=? AND v<?)')
    expect(broad).not.toMatch(/SCAN (docs|fv)\b/)
    const narrow = plan(queries[2])
    expect(narrow).toContain('MERGE (INTERSECT)')
    expect(narrow).toContain('(f=? AND v>? AND v<?)')
    expect(plan(queries[8])).toContain('EXISTS USING PRIMARY KEY (f=? AND v=? AND rid=?)')
    // Without one value per document the complement would miss documents lacking the field.
    expect(store.explain('plain', queries[0]).join(' | ')).not.toContain('(f=? AND v<?)')
  })
})

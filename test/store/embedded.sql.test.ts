import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { SearchResponse } from '../../src/store/port'

// Queries on keyword, numeric and date fields are answered from SQLite indexes, not scans.
describe('embedded store query plans', () => {
  const store = openEmbeddedStore(':memory:')
  beforeAll(async () => {
    await store.createIndex({
      index: 'ev',
      body: {
        mappings: { properties: { host: { type: 'keyword' }, bytes: { type: 'long' }, ts: { type: 'date' }, msg: { type: 'text' } } },
      },
    })
    await store.bulk({
      index: 'ev',
      body: Array.from({ length: 200 }, (_, i) => [
        { index: { _id: String(i) } },
        { host: `h${i % 10}`, bytes: i, ts: Date.UTC(2024, 0, 1) + i * 60_000, msg: `line ${i}` },
      ]).flat(),
    })
  })
  afterAll(() => store.close())

  const plan = (query: unknown) => store.explain('ev', query).join(' | ')
  const usesIndex = (p: string) => {
    expect(p).toContain('SEARCH fv USING PRIMARY KEY')
    expect(p).toContain('SEARCH docs USING INTEGER PRIMARY KEY')
    expect(p).not.toMatch(/SCAN (docs|fv)\b/)
  }

  test('term, terms, prefix on keyword', () => {
    usesIndex(plan({ term: { host: 'h3' } }))
    usesIndex(plan({ terms: { host: ['h1', 'h2'] } }))
    usesIndex(plan({ prefix: { host: 'h1' } }))
  })
  test('range on long and date (with date math)', () => {
    usesIndex(plan({ range: { bytes: { gte: 10, lt: 20 } } }))
    usesIndex(plan({ range: { ts: { gte: '2024-01-01T01:00:00Z||-1h/h' } } }))
  })
  test('the selective conjunct of a bool is used; should-only bools become a UNION', () => {
    usesIndex(plan({ bool: { filter: [{ match: { msg: 'line' } }, { term: { host: 'h3' } }] } }))
    usesIndex(plan({ bool: { should: [{ term: { host: 'h3' } }, { range: { bytes: { gt: 190 } } }] } }))
  })
  test('ids use the (index, id) key', () => {
    expect(plan({ ids: { values: ['1', '2'] } })).toContain('SEARCH docs USING')
    expect(plan({ ids: { values: ['1', '2'] } })).not.toContain('SCAN docs')
  })
  test('results through the index equal an evaluator-only scan', async () => {
    const queries = [
      { term: { host: 'h3' } },
      { range: { bytes: { gte: 10, lt: 20 } } },
      { bool: { should: [{ term: { host: 'h3' } }, { range: { bytes: { gt: 190 } } }] } },
      { bool: { filter: [{ prefix: { host: 'h1' } }, { range: { ts: { lt: Date.UTC(2024, 0, 1, 1) } } }] } },
    ]
    for (const query of queries) {
      const viaIndex = (await store.search({ index: 'ev', body: { query, size: 500, sort: ['_doc'] } })).hits.hits.map((h) => h._id)
      // Wrapping in must_not(must_not(...)) keeps the meaning but defeats the planner: a full scan.
      const scanned = (
        await store.search({
          index: 'ev',
          body: { query: { bool: { must_not: [{ bool: { must_not: [query] } }] } }, size: 500, sort: ['_doc'] },
        })
      ).hits.hits.map((h) => h._id)
      expect(viaIndex.length).toBeGreaterThan(0)
      expect(viaIndex).toEqual(scanned)
    }
    expect(plan({ bool: { must_not: [{ bool: { must_not: [{ term: { host: 'h3' } }] } }] } })).toContain(
      'SEARCH docs USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)',
    )
  })
  test('totals answered from the index (exact plans) equal evaluator-only totals', async () => {
    const queries = [
      { match_all: {} },
      { term: { host: 'h3' } },
      { terms: { host: ['h3', 'h4', 'nope'] } },
      { range: { ts: { gte: Date.UTC(2024, 0, 1, 1), lt: Date.UTC(2024, 0, 1, 2) } } },
      { bool: { should: [{ term: { host: 'h3' } }, { range: { bytes: { gt: 190 } } }] } },
      { bool: { filter: [{ term: { host: 'h3' } }] } },
      { bool: { filter: [{ term: { host: 'h3' } }, { range: { bytes: { lt: 50 } } }] } },
      { prefix: { host: 'h1' } },
      { ids: { values: ['1', '2', 'x'] } },
    ]
    // The same matches (a should of constant clauses ranks documents meeting both first, its
    // must_not(must_not()) form scores 0 everywhere: the order may differ, the set may not).
    const ids = (r: SearchResponse) => r.hits.hits.map((h) => h._id).sort()
    for (const query of queries) {
      const fast = await store.search({ index: 'ev', body: { query, size: 500 } })
      const slow = await store.search({
        index: 'ev',
        body: { query: { bool: { must_not: [{ bool: { must_not: [query] } }] } }, size: 500 },
      })
      expect(fast.hits.total).toEqual(slow.hits.total)
      expect(ids(fast)).toEqual(ids(slow))
    }
  })
  test('documents after a seq_no are a range of the (index, seq) index, not a walk of the index', () => {
    expect(store.explain('ev', { match_all: {} }, 150).join(' | ')).toBe('SEARCH docs USING INDEX docs_seq (ix=? AND seq>?)')
  })
  test('_seq_no paging through the seq index equals an evaluator-only scan, totals included', async () => {
    // Updates move documents to the end of seq_no order.
    for (const id of ['5', '17', '3']) await store.update({ index: 'ev', id, body: { doc: { touched: true } } })
    // A PIT's snapshot has no seq index: searching it takes the general path (evaluate every row).
    const { pit_id } = await store.createPit({ index: 'ev', keep_alive: '1m' })
    for (const query of [{ match_all: {} }, { term: { host: 'h7' } }, { match: { msg: 'line' } }]) {
      for (const order of ['asc', 'desc'] as const) {
        for (const track of [false, true]) {
          const page = (pit: boolean, after?: number) =>
            store.search({
              ...(pit ? {} : { index: 'ev' }),
              body: {
                query,
                size: 7,
                sort: [{ _seq_no: order }],
                seq_no_primary_term: true,
                track_total_hits: track,
                ...(pit ? { pit: { id: pit_id } } : {}),
                ...(after === undefined ? {} : { search_after: [after] }),
              },
            })
          let after: number | undefined
          for (let n = 0; n < 4; n++) {
            const [fast, slow] = await Promise.all([page(false, after), page(true, after)])
            expect(fast.hits.hits.map((h) => [h._id, h._seq_no, h.sort])).toEqual(slow.hits.hits.map((h) => [h._id, h._seq_no, h.sort]))
            expect(fast.hits.total).toEqual(slow.hits.total)
            const seqs = fast.hits.hits.map((h) => h._seq_no!)
            expect(seqs).toEqual([...seqs].sort((a, b) => (order === 'asc' ? a - b : b - a)))
            after = seqs[seqs.length - 1]
          }
        }
      }
    }
    await store.deletePit({ body: { pit_id } })
    const last = await store.search({ index: 'ev', body: { size: 3, sort: [{ _seq_no: 'desc' }], _source: false } })
    expect(last.hits.hits.map((h) => h._id)).toEqual(['3', '17', '5'])
  })
  test('text fields read the postings of their terms (text-index.ts)', () => {
    expect(plan({ match: { msg: 'line' } })).toContain('SCAN tx VIRTUAL TABLE INDEX 0:M')
  })

  test('a fuzzy match falls back to a scan of the one index (checked by the evaluator)', () => {
    expect(plan({ match: { msg: { query: 'line', fuzziness: 1 } } })).toBe('SEARCH docs USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)')
  })
})

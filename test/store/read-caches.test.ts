// What searches keep per index until its next write (index-caches.ts): the matches of a bool's
// clauses, the columns of aggregations and the answers of size-0 requests. A write, a mapping
// change or the clock must show in the next answer as if nothing had been kept.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'

describe('answers kept between identical searches follow writes and the clock', () => {
  let now = Date.UTC(2026, 0, 1, 12)
  const store = openEmbeddedStore(':memory:', { clock: () => now })
  const doc = (i: number) => ({ at: Date.UTC(2026, 0, 1) + i * 60_000, host: `h${i % 5}`, ok: i % 3 === 0 ? 'no' : 'yes' })
  beforeAll(async () => {
    await store.createIndex({
      index: 'k',
      body: { mappings: { properties: { at: { type: 'date' }, host: { type: 'keyword' }, ok: { type: 'keyword' } } } },
    })
    await store.bulk({ index: 'k', body: Array.from({ length: 900 }, (_, i) => [{ index: { _id: String(i) } }, doc(i)]).flat() })
  })
  afterAll(() => store.close())

  const bool = {
    bool: { filter: [{ term: { host: 'h2' } }, { range: { at: { gte: Date.UTC(2026, 0, 1, 3) } } }], must_not: [{ term: { ok: 'no' } }] },
  }
  const aggs = { h: { date_histogram: { field: 'at', fixed_interval: '1h' }, aggs: { t: { terms: { field: 'host' } } } } }
  const scan = (query: unknown) => ({ bool: { must_not: [{ bool: { must_not: [query] } }] } })
  const state = async () => {
    const page = await store.search({ index: 'k', body: { query: bool, size: 5 } })
    const agg = await store.search({ index: 'k', body: { size: 0, aggs } })
    return { total: page.hits.total, ids: page.hits.hits.map((h) => h._id), aggs: agg.aggregations, hits: agg.hits.total }
  }
  const expected = async () => {
    const page = await store.search({ index: 'k', body: { query: scan(bool), size: 5 } })
    const agg = await store.search({ index: 'k', body: { size: 0, query: scan({ match_all: {} }), aggs } })
    return { total: page.hits.total, ids: page.hits.hits.map((h) => h._id), aggs: agg.aggregations, hits: agg.hits.total }
  }

  test('writes: added, updated and deleted documents', async () => {
    expect(await state()).toEqual(await expected())
    expect(await state()).toEqual(await expected()) // the second time from what was kept
    await store.index({ index: 'k', id: 'new', body: { ...doc(902), host: 'h2', ok: 'yes' } })
    await store.update({ index: 'k', id: '187', body: { doc: { ok: 'no' } } }) // h2, in range, was "yes"
    await store.delete({ index: 'k', id: '192' })
    const after = await state()
    expect(after).toEqual(await expected())
    expect(after.ids).not.toContain('187')
  })

  test('requests reading the clock are answered for the current time', async () => {
    const recent = { size: 0, query: { range: { at: { gte: 'now-1h' } } }, aggs: { n: { value_count: { field: 'host' } } } }
    now = Date.UTC(2026, 0, 1, 12)
    const before = (await store.search({ index: 'k', body: recent })).hits.total
    now = Date.UTC(2026, 0, 1, 14, 30)
    const later = (await store.search({ index: 'k', body: recent })).hits.total
    expect(before).toEqual({ value: 241, relation: 'eq' }) // 11:00 to 14:59, and the one at 15:02
    expect(later).toEqual({ value: 91, relation: 'eq' })
    // The same through an alias whose filter reads the clock.
    await store.updateAliases({
      body: { actions: [{ add: { index: 'k', alias: 'recent', filter: { range: { at: { gte: 'now-1h' } } } } }] },
    })
    const viaAlias = async () => (await store.search({ index: 'recent', body: { size: 0 } })).hits.total
    expect(await viaAlias()).toEqual({ value: 91, relation: 'eq' })
    now = Date.UTC(2026, 0, 1, 12)
    expect(await viaAlias()).toEqual({ value: 241, relation: 'eq' })
  })

  test('a mapping change shows in the next answer', async () => {
    const body = { size: 0, aggs: { t: { terms: { field: 'extra' } } } }
    expect((await store.search({ index: 'k', body })).aggregations).toEqual({
      t: { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [] },
    })
    await store.putMapping({ index: 'k', body: { properties: { extra: { type: 'text' } } } })
    await expect(store.search({ index: 'k', body })).rejects.toThrow('Text fields are not optimised')
  })
})

describe("an index's write mark (what callers keep content read from it against)", () => {
  const store = openEmbeddedStore(':memory:')
  afterAll(() => store.close())
  const markOf = (expression: string | string[]) => store.writeMark(expression) as string

  test('moves with every document write and with what the names resolve to, never with reads', async () => {
    await store.createIndex({ index: 'm1', body: { mappings: { properties: { n: { type: 'integer' } } } } })
    await store.createIndex({ index: 'm2' })
    const seen = new Set<string>()
    const moved = () => {
      const mark = markOf(['m*', 'al'])
      expect(seen.has(mark)).toBe(false)
      seen.add(mark)
    }
    moved()
    await store.index({ index: 'm1', id: 'a', body: { n: 1 } })
    moved()
    const mark = markOf(['m*', 'al'])
    await store.search({ index: 'm1', body: { query: { match_all: {} } } })
    await store.get({ index: 'm1', id: 'a' })
    expect(markOf(['m*', 'al'])).toBe(mark)
    await store.update({ index: 'm1', id: 'a', body: { doc: { n: 2 } } })
    moved()
    await store.bulk({ body: [{ index: { _index: 'm2', _id: 'b' } }, { x: 1 }] })
    moved()
    await store.delete({ index: 'm2', id: 'b' })
    moved()
    await store.updateAliases({ body: { actions: [{ add: { index: 'm1', alias: 'al' } }] } })
    expect(markOf('al')).toBe(markOf('m1'))
    const open = markOf(['m*', 'al'])
    await store.closeIndex({ index: 'm2' })
    moved()
    await store.openIndex({ index: 'm2' })
    expect(markOf(['m*', 'al'])).toBe(open) // its content is what it was
    await store.deleteIndex({ index: 'm2' })
    moved()
    await store.createIndex({ index: 'm2' })
    moved()
    expect(markOf('missing')).toBe('')
  })
})

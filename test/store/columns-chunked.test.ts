// Columns are read from the field-value index 65,536 rows at a time (search-rows.ts's readColumn):
// over more rows than that, for a field of few values (ordinals) and one of many, aggregations
// from columns must equal those of a scan that evaluates every document.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'

const N = 80_000
const store = openEmbeddedStore(':memory:')

beforeAll(async () => {
  await store.createIndex({ index: 'big', body: { mappings: { properties: { level: { type: 'keyword' }, n: { type: 'long' } } } } })
  for (let from = 0; from < N; from += 10_000) {
    const body = Array.from({ length: 10_000 }, (_, k) => {
      const i = from + k
      // n: many distinct values, and none in every 9th document.
      return [{ index: {} }, { level: i % 10 === 0 ? 'error' : 'info', ...(i % 9 === 0 ? {} : { n: (i * 7919) % 100_003 }) }]
    }).flat()
    await store.bulk({ index: 'big', body })
  }
  await store.refresh({ index: 'big' })
}, 60_000)
afterAll(() => store.close())

test('aggregations over columns read in chunks equal a scan', async () => {
  const aggs = {
    levels: { terms: { field: 'level' } },
    spread: { histogram: { field: 'n', interval: 10_000 } },
    top: { max: { field: 'n' } },
  }
  const scan = { bool: { must_not: [{ bool: { must_not: [{ match_all: {} }] } }] } }
  const viaColumns = await store.search({ index: 'big', body: { size: 0, aggs, track_total_hits: true } })
  const viaScan = await store.search({ index: 'big', body: { size: 0, aggs, track_total_hits: true, query: scan } })
  expect(viaColumns.hits.total).toEqual({ value: N, relation: 'eq' })
  expect(viaColumns.aggregations).toEqual(viaScan.aggregations)
  const levels = (viaColumns.aggregations as { levels: { buckets: Array<{ key: string; doc_count: number }> } }).levels.buckets
  expect(levels).toEqual([
    { key: 'info', doc_count: N - N / 10 },
    { key: 'error', doc_count: N / 10 },
  ])
}, 30_000)

// auto_date_histogram over real HTTP; every expected answer below is what OpenSearch 3.4 answered
// for the same documents and request.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

// Twelve documents 36 hours apart from 2024-01-01, `v` their position.
const DATES = Array.from({ length: 12 }, (_, i) => new Date(Date.UTC(2024, 0, 1) + i * 36 * 3_600_000).toISOString())

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/adt', { mappings: { properties: { date: { type: 'date' }, v: { type: 'long' } } } })
  const r = await api.call('admin', 'POST', '/adt/_bulk?refresh=true', ndjson(DATES.flatMap((date, v) => [{ index: {} }, { date, v }])))
  expect(r.body.errors).toBe(false)
})
afterAll(() => api.stop())

async function histogram(params: Record<string, unknown>, aggs?: Record<string, unknown>) {
  const r = await api.call('admin', 'POST', '/adt/_search', {
    size: 0,
    aggs: { h: { auto_date_histogram: { field: 'date', ...params }, ...(aggs ? { aggs } : {}) } },
  })
  expect(r.status).toBe(200)
  const h = r.body.aggregations.h
  return [h.interval, h.buckets.map((b: any) => [b.key_as_string, b.doc_count, ...(b.s ? [b.s.value] : [])])]
}

test('three buckets: days grouped by seven from the first, sub-aggregations per group', async () => {
  expect(await histogram({ buckets: 3 }, { s: { sum: { field: 'v' } } })).toEqual([
    '7d',
    [
      ['2024-01-01T00:00:00.000Z', 5, 10],
      ['2024-01-08T00:00:00.000Z', 5, 35],
      ['2024-01-15T00:00:00.000Z', 2, 21],
    ],
  ])
})

test('twenty buckets in a time zone: days, the empty ones between filled in', async () => {
  const [interval, buckets] = await histogram({ buckets: 20, time_zone: '+05:30' })
  expect(interval).toBe('1d')
  expect(buckets.length).toBe(17)
  expect(buckets.slice(0, 4)).toEqual([
    ['2024-01-01T00:00:00.000+05:30', 1],
    ['2024-01-02T00:00:00.000+05:30', 1],
    ['2024-01-03T00:00:00.000+05:30', 0],
    ['2024-01-04T00:00:00.000+05:30', 1],
  ])
  expect(buckets.map((b: unknown[]) => b[1]).join('')).toBe('11011011011011011')
})

test('minimum_interval and format', async () => {
  expect(await histogram({ buckets: 6, minimum_interval: 'day', format: 'yyyy-MM-dd' })).toEqual([
    '7d',
    [
      ['2024-01-01', 5],
      ['2024-01-08', 5],
      ['2024-01-15', 2],
    ],
  ])
})

test('no documents: no buckets, the finest interval; OpenSearch’s parse errors', async () => {
  const none = await api.call('admin', 'POST', '/adt/_search', {
    size: 0,
    query: { term: { v: 99 } },
    aggs: { h: { auto_date_histogram: { field: 'date', minimum_interval: 'day' } } },
  })
  expect(none.body.aggregations.h).toEqual({ buckets: [], interval: '1d' })
  const zero = await api.call('admin', 'POST', '/adt/_search', {
    size: 0,
    aggs: { h: { auto_date_histogram: { field: 'date', buckets: 0 } } },
  })
  expect([zero.status, zero.body.error.type, zero.body.error.caused_by.reason]).toEqual([
    400,
    'x_content_parse_exception',
    'buckets must be greater than 0 for [h]',
  ])
  const week = await api.call('admin', 'POST', '/adt/_search', {
    size: 0,
    aggs: { h: { auto_date_histogram: { field: 'date', minimum_interval: 'week' } } },
  })
  expect(week.body.error.caused_by.reason).toBe('minimum_interval must be one of [[second, minute, day, hour, year, month]]')
})

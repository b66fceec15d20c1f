// percentile_ranks, median_absolute_deviation, weighted_avg, rare_terms and multi_terms over real
// HTTP; every expected answer below is what OpenSearch 3.4 answered for the same documents.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const DOCS = [
  { v: 10, w: 1, k: 'a', s: 'x', d: '2024-01-01' },
  { v: 20, w: 2, k: 'a', s: 'y', d: '2024-01-02' },
  { v: 30, w: 3, k: 'b', s: 'x', d: '2024-01-01' },
  { v: 40, w: 4, k: 'b', s: 'x' },
  { v: 50, k: 'c' },
  { v: [60, 70], w: 1, k: ['c', 'd'], s: 'y' },
  { w: 5, k: 'e' },
]

async function search(body: Record<string, unknown>, query = '') {
  return api.call('admin', 'POST', `/m/_search${query}`, { size: 0, ...body })
}
async function aggs(body: Record<string, unknown>, query = '') {
  const r = await search({ aggs: body }, query)
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.aggregations
}

beforeAll(async () => {
  api = await startIndexApi({
    roles: `
_meta: { type: roles, config_version: 2 }
low:
  index_permissions:
    - index_patterns: ["ips"]
      allowed_actions: ["read"]
      dls: '{"range": {"v": {"lte": 2}}}'
`,
    users: { admin: { roles: ['all_access'] }, only_low: { roles: ['low'] } },
  })
  const put = await api.call('admin', 'PUT', '/m', {
    mappings: {
      properties: { v: { type: 'long' }, w: { type: 'integer' }, k: { type: 'keyword' }, s: { type: 'keyword' }, d: { type: 'date' } },
    },
  })
  expect(put.status).toBe(200)
  const bulk = await api.call('admin', 'POST', '/m/_bulk?refresh=true', ndjson(DOCS.flatMap((d) => [{ index: {} }, d])))
  expect(bulk.body.errors).toBe(false)
  const ips = [
    { ip: '::1', num: [1, 2], v: 1 },
    { ip: '192.168.0.1', num: [2, 3], v: 2 },
    { ip: '192.168.0.7', num: [3, 4], v: 3 },
    { ip: ['10.1.2.3', 'fe80::1'], num: 9 },
    { v: 5 },
  ]
  expect(
    (
      await api.call('admin', 'PUT', '/ips', {
        mappings: { properties: { ip: { type: 'ip' }, num: { type: 'integer' }, v: { type: 'long' } } },
      })
    ).status,
  ).toBe(200)
  expect((await api.call('admin', 'POST', '/ips/_bulk?refresh=true', ndjson(ips.flatMap((d) => [{ index: {} }, d])))).body.errors).toBe(
    false,
  )
})

async function ipAggs(body: Record<string, unknown>, query = '') {
  const r = await api.call('admin', 'POST', `/ips/_search${query}`, { size: 0, ...body })
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body
}

afterAll(async () => {
  await api?.stop()
})

describe('metrics', () => {
  test('percentile_ranks: the share of values at or below each value; keyed or a list; typed_keys', async () => {
    const r = await aggs({ r: { percentile_ranks: { field: 'v', values: [5, 10, 25, 40, 70, 80] } } })
    expect(r.r.values).toEqual({
      '5.0': 0,
      '10.0': 7.142857142857142,
      '25.0': 28.57142857142857,
      '40.0': 50,
      '70.0': 92.85714285714286,
      '80.0': 100,
    })
    const list = await aggs({ r: { percentile_ranks: { field: 'v', values: [25], keyed: false } } }, '?typed_keys=true')
    expect(list['tdigest_percentile_ranks#r']).toEqual({ values: [{ key: 25, value: 28.57142857142857 }] })
  })

  test('percentile_ranks without values is refused as OpenSearch parses it', async () => {
    const r = await search({ aggs: { r: { percentile_ranks: { field: 'v' } } } })
    expect(r.status).toBe(400)
    expect(r.body.error.type).toBe('x_content_parse_exception')
    expect(r.body.error.reason).toBe('Failed to build [percentile_ranks] after last required field arrived')
  })

  test('median_absolute_deviation: the median distance to the median; none without values; compression 0 refused', async () => {
    const r = await aggs({ m: { median_absolute_deviation: { field: 'v' } }, none: { median_absolute_deviation: { field: 'nothing' } } })
    expect(r.m.value).toBe(20)
    expect(r.none.value).toBeNull()
    const bad = await search({ aggs: { mad: { median_absolute_deviation: { field: 'v', compression: 0 } } } })
    expect(bad.status).toBe(400)
    expect(bad.body.error.reason).toBe('[median_absolute_deviation] failed to parse field [compression]')
    expect(bad.body.error.caused_by.reason).toBe('[compression] must be greater than 0. Found [0.0] in [mad]')
    expect(bad.body.error.root_cause[0].caused_by).toBeUndefined()
  })

  test('weighted_avg: with and without missing; two weights in a document and a keyword field are refused', async () => {
    const r = await aggs({
      w: { weighted_avg: { value: { field: 'v' }, weight: { field: 'w' } } },
      w2: { weighted_avg: { value: { field: 'v', missing: 1 }, weight: { field: 'w', missing: 10 } } },
    })
    expect(r.w.value).toBe(35.833333333333336)
    expect(r.w2.value).toBe(34.629629629629626)
    const two = await search({ aggs: { w: { weighted_avg: { value: { field: 'v' }, weight: { field: 'v' } } } } })
    expect(two.status).toBe(400)
    expect(two.body.error.reason).toContain('Encountered more than one weight for a single document')
    const keyword = await search({ aggs: { w: { weighted_avg: { value: { field: 'k' }, weight: { field: 'w' } } } } })
    expect(keyword.body.error.reason).toBe('Expected numeric type on field [k], but got [keyword]')
    const noWeight = await search({ aggs: { w: { weighted_avg: { value: { field: 'v' } } } } })
    expect(noWeight.body.error.reason).toBe('Could not find field name [weight] in multiValuesSource')
  })
})

describe('rare_terms', () => {
  test('terms of at most max_doc_count documents, by count then key; exclude; sub-aggregations', async () => {
    const r = await aggs({
      r: { rare_terms: { field: 'k' } },
      r2: { rare_terms: { field: 'k', max_doc_count: 2, exclude: ['e'] }, aggs: { s: { sum: { field: 'v' } } } },
    })
    expect(r.r.buckets).toEqual([
      { key: 'd', doc_count: 1 },
      { key: 'e', doc_count: 1 },
    ])
    expect(r.r2.buckets).toEqual([
      { key: 'd', doc_count: 1, s: { value: 130 } },
      { key: 'a', doc_count: 2, s: { value: 30 } },
      { key: 'b', doc_count: 2, s: { value: 70 } },
      { key: 'c', doc_count: 2, s: { value: 180 } },
    ])
  })

  test('dates keyed by millis with their text, include by date; typed_keys names the key type', async () => {
    const r = await aggs({ r: { rare_terms: { field: 'd' } }, i: { rare_terms: { field: 'd', include: ['2024-01-02'] } } })
    expect(r.r.buckets).toEqual([{ key: 1704153600000, key_as_string: '2024-01-02T00:00:00.000Z', doc_count: 1 }])
    expect(r.i.buckets).toEqual(r.r.buckets)
    const typed = await aggs({ s: { rare_terms: { field: 'k' } }, l: { rare_terms: { field: 'v' } } }, '?typed_keys=true')
    expect(Object.keys(typed).sort()).toEqual(['lrareterms#l', 'srareterms#s'])
  })

  test('max_doc_count outside 1..100 is refused', async () => {
    for (const n of [0, 101]) {
      const r = await search({ aggs: { r: { rare_terms: { field: 'k', max_doc_count: n } } } })
      expect(r.status).toBe(400)
      expect(r.body.error.reason).toBe('[rare_terms] failed to parse field [max_doc_count]')
    }
  })
})

describe('multi_terms', () => {
  test('one bucket per combination, count desc then key; missing per field; size and other', async () => {
    const r = await aggs({ m: { multi_terms: { terms: [{ field: 'k' }, { field: 's', missing: 'none' }], size: 3 } } })
    expect(r.m).toEqual({
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: 4,
      buckets: [
        { key: ['b', 'x'], key_as_string: 'b|x', doc_count: 2 },
        { key: ['a', 'x'], key_as_string: 'a|x', doc_count: 1 },
        { key: ['a', 'y'], key_as_string: 'a|y', doc_count: 1 },
      ],
    })
  })

  test('dates as text in the key; documents without a value of a field are in no bucket', async () => {
    const r = await aggs({ m: { multi_terms: { terms: [{ field: 's' }, { field: 'd' }] } } })
    expect(r.m.buckets).toEqual([
      { key: ['x', '2024-01-01T00:00:00.000Z'], key_as_string: 'x|2024-01-01T00:00:00.000Z', doc_count: 2 },
      { key: ['y', '2024-01-02T00:00:00.000Z'], key_as_string: 'y|2024-01-02T00:00:00.000Z', doc_count: 1 },
    ])
  })

  test('ordered by a sub-aggregation; fewer than two terms refused', async () => {
    const r = await aggs({
      m: { multi_terms: { terms: [{ field: 'k' }, { field: 's' }], order: { t: 'desc' } }, aggs: { t: { max: { field: 'v' } } } },
    })
    expect(r.m.buckets.map((b: any) => [b.key_as_string, b.t.value])).toEqual([
      ['c|y', 70],
      ['d|y', 70],
      ['b|x', 40],
      ['a|y', 20],
      ['a|x', 10],
    ])
    const one = await search({ aggs: { m: { multi_terms: { terms: [{ field: 'k' }] } } } })
    expect(one.status).toBe(400)
    expect(one.body.error.reason).toBe('[multi_terms] failed to parse field [terms]')
  })
})

describe('ip_range, adjacency_matrix and global', () => {
  test('ip_range: from/to and masks written as addresses, ordered by from then to; keyed with sub-aggregations', async () => {
    const r = (
      await ipAggs({
        aggs: {
          r: {
            ip_range: {
              field: 'ip',
              ranges: [{ mask: '192.168.0.0/16' }, { mask: '::/24' }, { mask: '::/0' }, { mask: 'fe80::/10', key: 'local' }],
            },
          },
        },
      })
    ).aggregations
    expect(r.r.buckets).toEqual([
      { key: '::/24', to: '0:100::', doc_count: 4 },
      { key: '::/0', doc_count: 4 },
      { key: '192.168.0.0/16', from: '192.168.0.0', to: '192.169.0.0', doc_count: 2 },
      { key: 'local', from: 'fe80::', to: 'fec0::', doc_count: 1 },
    ])
    const keyed = (
      await ipAggs({
        aggs: {
          r: {
            ip_range: { field: 'ip', keyed: true, ranges: [{ to: '192.168.0.0' }, { from: '192.168.0.0' }] },
            aggs: { s: { sum: { field: 'v' } } },
          },
        },
      })
    ).aggregations
    expect(keyed.r.buckets).toEqual({
      '*-192.168.0.0': { to: '192.168.0.0', doc_count: 2, s: { value: 1 } },
      '192.168.0.0-*': { from: '192.168.0.0', doc_count: 3, s: { value: 5 } },
    })
    const bad = await api.call('admin', 'POST', '/ips/_search', {
      size: 0,
      aggs: { r: { ip_range: { field: 'ip', ranges: [{ from: 'nope' }] } } },
    })
    expect(bad.status).toBe(400)
    expect(bad.body.error.reason).toBe('[ip_range] failed to parse field [ranges]')
  })

  test('adjacency_matrix: each filter and each pair, in key order, empty ones left out', async () => {
    const r = (
      await ipAggs({
        aggs: { c: { adjacency_matrix: { filters: { 4: { term: { num: 4 } }, 1: { term: { num: 1 } }, 2: { term: { num: 2 } } } } } },
      })
    ).aggregations
    expect(r.c.buckets).toEqual([
      { key: '1', doc_count: 1 },
      { key: '1&2', doc_count: 1 },
      { key: '2', doc_count: 2 },
      { key: '4', doc_count: 1 },
    ])
  })

  test('global counts every document whatever the query, keeps typed_keys and order; refused below another aggregation', async () => {
    const body = await ipAggs(
      { query: { term: { num: 1 } }, aggs: { g: { global: {}, aggs: { s: { sum: { field: 'v' } } } }, x: { sum: { field: 'v' } } } },
      '?typed_keys=true',
    )
    expect(body.hits.total.value).toBe(1)
    expect(body.aggregations).toEqual({ 'global#g': { doc_count: 5, 'sum#s': { value: 11 } }, 'sum#x': { value: 1 } })
    const nested = await api.call('admin', 'POST', '/ips/_search', {
      size: 0,
      aggs: { t: { terms: { field: 'num' }, aggs: { g: { global: {} } } } },
    })
    expect(nested.status).toBe(400)
    expect(nested.body.error.reason).toBe(
      'Aggregation [t] cannot have a global sub-aggregation [g]. Global aggregations can only be defined as top level aggregations',
    )
  })

  test('global sees only what the caller may read (DLS applies to its search too)', async () => {
    const r = await api.call('only_low', 'POST', '/ips/_search', { size: 0, query: { match_none: {} }, aggs: { g: { global: {} } } })
    expect(r.status).toBe(200)
    expect(r.body.aggregations.g.doc_count).toBe(2)
  })
})

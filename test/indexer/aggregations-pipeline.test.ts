// Pipeline aggregations over real HTTP. Every expected value and error below is what OpenSearch
// 3.4 answered for the same mapping, documents and request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { indexDocs, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

// Per day: 01 sum 30 (avg 15, 2 docs), 02 sum 5, 03 empty, 04 sum 30, 05 sum 22.5 (avg 11.25,
// 2 docs), 06 empty, 07 sum 1, 08 one document without a price (sum 0, avg null).
const SALES = [
  { _id: '1', date: '2024-01-01T10:00:00Z', price: 10, qty: 1, cat: 'a' },
  { _id: '2', date: '2024-01-01T12:00:00Z', price: 20, qty: 2, cat: 'b' },
  { _id: '3', date: '2024-01-02T08:00:00Z', price: 5, qty: 3, cat: 'a' },
  { _id: '4', date: '2024-01-04T09:00:00Z', price: 30, qty: 1, cat: 'c' },
  { _id: '5', date: '2024-01-05T10:00:00Z', price: 15, qty: 4, cat: 'a' },
  { _id: '6', date: '2024-01-05T11:00:00Z', price: 7.5, qty: 2, cat: 'b' },
  { _id: '7', date: '2024-01-07T00:00:00Z', price: 1, qty: 1, cat: 'c' },
  { _id: '8', date: '2024-01-08T00:00:00Z', qty: 5, cat: 'b' },
]

const DAY = { field: 'date', calendar_interval: 'day' }
const day = (d: number) => `2024-01-0${d}T00:00:00.000Z`
/** A daily histogram with the day's sum (`s`) and average (`a`) of prices, and more sub-aggregations. */
const daily = (aggs: Record<string, unknown> = {}, params: Record<string, unknown> = {}) => ({
  h: { date_histogram: { ...DAY, ...params }, aggs: { s: { sum: { field: 'price' } }, a: { avg: { field: 'price' } }, ...aggs } },
})

async function search(body: Record<string, unknown>, query = '', index = 'sales') {
  return api.call('admin', 'POST', `/${index}/_search?size=0${query}`, body)
}
async function aggs(body: Record<string, unknown>, query = ''): Promise<any> {
  return (await ok(search(body, query))).aggregations
}
/** The error of a request OpenSearch refuses with a 400. */
async function refused(body: Record<string, unknown>, index = 'sales'): Promise<any> {
  const r = await search(body, '', index)
  expect(r.status).toBe(400)
  return r.body.error
}
/** Day of month -> the named result of each bucket that has it. */
const perDay = (buckets: any[], name: string) =>
  Object.fromEntries(buckets.filter((b) => b[name] !== undefined).map((b) => [Number(b.key_as_string.slice(8, 10)), b[name]]))
const days = (buckets: any[]) => buckets.map((b) => Number(b.key_as_string.slice(8, 10)))

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  const properties = { date: { type: 'date' }, price: { type: 'double' }, qty: { type: 'integer' }, cat: { type: 'keyword' } }
  await ok(api.call('admin', 'PUT', '/sales', { mappings: { properties } }))
  await indexDocs(api, 'sales', SALES)
  await ok(api.call('admin', 'PUT', '/ints', { mappings: { properties: { int_field: { type: 'integer' } } } }))
  await indexDocs(
    api,
    'ints',
    [1, 2, 3, 4].map((n) => ({ _id: String(n), int_field: n })),
  )
})

afterAll(async () => {
  await api?.stop()
})

describe('sibling pipelines', () => {
  test('avg, sum, min, max, stats, extended_stats and percentiles over the buckets, empty buckets skipped', async () => {
    const r = await aggs({
      aggs: {
        ...daily(),
        avg: { avg_bucket: { buckets_path: 'h>s' } },
        sum: { sum_bucket: { buckets_path: 'h>a' } },
        min: { min_bucket: { buckets_path: 'h>a' } },
        max: { max_bucket: { buckets_path: 'h>_count' } },
        stats: { stats_bucket: { buckets_path: 'h>a' } },
        extended: { extended_stats_bucket: { buckets_path: 'h>a' } },
        percentiles: { percentiles_bucket: { buckets_path: 'h>a' } },
      },
    })
    // The sums of the six days with documents (day 8's 0 included), the five averages there are.
    expect(r.avg).toEqual({ value: 14.75 })
    expect(r.sum).toEqual({ value: 62.25 })
    expect(r.min).toEqual({ value: 1, keys: [day(7)] })
    expect(r.max).toEqual({ value: 2, keys: [day(1), day(5)] })
    expect(r.stats).toEqual({ count: 5, min: 1, max: 30, avg: 12.45, sum: 62.25 })
    expect(r.extended).toMatchObject({
      count: 5,
      sum_of_squares: 1277.5625,
      variance: 100.50999999999999,
      variance_sampling: 125.63749999999999,
      std_deviation: 10.02546757014355,
      std_deviation_sampling: 11.208813496530308,
      std_deviation_bounds: { upper: 32.5009351402871, lower: -7.600935140287099, upper_sampling: 34.86762699306061 },
    })
    expect(r.percentiles).toEqual({ values: { '1.0': 1, '5.0': 1, '25.0': 5, '50.0': 11.25, '75.0': 15, '95.0': 30, '99.0': 30 } })
  })

  test('a value of a multi-value metric by name or percent (`.avg`, `.99`, `[99.0]`), `.value` of a single one', async () => {
    const r = await aggs({
      aggs: {
        ...daily({ st: { stats: { field: 'price' } }, p: { percentiles: { field: 'price' } } }),
        by_avg: { max_bucket: { buckets_path: 'h>st.avg' } },
        by_percent: { max_bucket: { buckets_path: 'h>p.99' } },
        bracketed: { max_bucket: { buckets_path: 'h>p[99.0]' } },
        value: { min_bucket: { buckets_path: 'h>a.value' } },
      },
    })
    for (const name of ['by_avg', 'by_percent', 'bracketed']) expect(r[name]).toEqual({ value: 30, keys: [day(4)] })
    expect(r.value).toEqual({ value: 1, keys: [day(7)] })
  })

  test('through a single-bucket aggregation, per bucket of a parent, keys as OpenSearch writes them', async () => {
    const r = await aggs({
      aggs: {
        t: { terms: { field: 'cat' }, aggs: { f: { filter: { term: { qty: 1 } }, aggs: { a: { avg: { field: 'price' } } } }, ...daily() } },
        through: { max_bucket: { buckets_path: 't>f>a' } },
        count: { max_bucket: { buckets_path: 't>f>_count' } },
        hist: { histogram: { field: 'price', interval: 10 }, aggs: { q: { sum: { field: 'qty' } } } },
        by_hist: { max_bucket: { buckets_path: 'hist>q' } },
        fewest: { min_bucket: { buckets_path: 'hist>_count' } },
        qty: { terms: { field: 'qty' } },
        by_qty: { max_bucket: { buckets_path: 'qty>_count' } },
      },
    })
    expect(r.through).toEqual({ value: 15.5, keys: ['c'] })
    expect(r.count).toEqual({ value: 2, keys: ['c'] })
    expect(r.by_hist).toEqual({ value: 6, keys: ['0.0'] })
    expect(r.fewest).toEqual({ value: 1, keys: ['20.0', '30.0'] })
    expect(r.by_qty).toEqual({ value: 3, keys: ['1'] })
    // A sibling pipeline inside a terms bucket reads that bucket's histogram.
    expect(r.t.buckets.map((b: any) => [b.key, b.h.buckets.length])).toEqual([
      ['a', 5],
      ['b', 8],
      ['c', 4],
    ])
  })

  test('sibling pipeline results inside buckets and after a single-bucket aggregation', async () => {
    const r = await aggs({
      aggs: {
        t: { terms: { field: 'cat' }, aggs: { ...daily(), m: { max_bucket: { buckets_path: 'h>s' } } } },
        f: { filter: { term: { cat: 'a' } }, aggs: { ...daily(), total: { sum_bucket: { buckets_path: 'h>_count' } } } },
        best: { max_bucket: { buckets_path: 't>m' } },
      },
    })
    expect(r.t.buckets.map((b: any) => [b.key, b.m])).toEqual([
      ['a', { value: 15, keys: [day(5)] }],
      ['b', { value: 20, keys: [day(1)] }],
      ['c', { value: 30, keys: [day(4)] }],
    ])
    expect(r.f.total).toEqual({ value: 3 })
    expect(r.best).toEqual({ value: 30, keys: ['c'] })
  })

  test('over no buckets', async () => {
    const r = await aggs({
      query: { term: { cat: 'none' } },
      aggs: {
        ...daily(),
        max: { max_bucket: { buckets_path: 'h>s' } },
        avg: { avg_bucket: { buckets_path: 'h>s' } },
        sum: { sum_bucket: { buckets_path: 'h>s' } },
        stats: { stats_bucket: { buckets_path: 'h>s' } },
        extended: { extended_stats_bucket: { buckets_path: 'h>s' } },
        percentiles: { percentiles_bucket: { buckets_path: 'h>s', percents: [50] } },
      },
    })
    expect(r.max).toEqual({ value: null, keys: [] })
    expect(r.avg).toEqual({ value: null })
    expect(r.sum).toEqual({ value: 0 })
    expect(r.stats).toEqual({ count: 0, min: null, max: null, avg: null, sum: 0 })
    expect(r.extended).toMatchObject({ count: 0, sum_of_squares: null, std_deviation_bounds: { upper: null, lower_sampling: null } })
    expect(r.percentiles).toEqual({ values: { '50.0': null } })
  })

  test('format (Java decimal patterns, half-even), percents, keyed: false, sigma', async () => {
    const r = await aggs({
      aggs: {
        ...daily(),
        list: { percentiles_bucket: { buckets_path: 'h>s', percents: [10, 50.5, 100], keyed: false, format: '0.0' } },
        stats: { stats_bucket: { buckets_path: 'h>s', format: '0.0' } },
        extended: { extended_stats_bucket: { buckets_path: 'h>s', sigma: 1, format: '0.0' } },
        max: { max_bucket: { buckets_path: 'h>s', format: '#,##0.00' } },
      },
    })
    expect(r.list.values).toEqual([
      { key: 10, value: 1, '10.0_as_string': '1.0' },
      { key: 50.5, value: 22.5, '50.5_as_string': '22.5' },
      { key: 100, value: 30, '100.0_as_string': '30.0' },
    ])
    expect(r.stats).toEqual({
      count: 6,
      min: 0,
      max: 30,
      avg: 14.75,
      sum: 88.5,
      min_as_string: '0.0',
      max_as_string: '30.0',
      avg_as_string: '14.8',
      sum_as_string: '88.5',
    })
    // 2332.25 rounds to the even 2332.2.
    expect(r.extended).toMatchObject({
      sum_of_squares: 2332.25,
      sum_of_squares_as_string: '2332.2',
      std_deviation_bounds: { upper: 27.83227171913706, lower: 1.6677282808629386 },
      std_deviation_bounds_as_string: { upper: '27.8', lower: '1.7', upper_sampling: '29.1', lower_sampling: '0.4' },
    })
    expect(r.max).toEqual({ value: 30, value_as_string: '30.00', keys: [day(1), day(4)] })
  })
})

describe('parent pipelines', () => {
  test('derivative, cumulative_sum, serial_diff, moving_fn, bucket_script, bucket_selector and bucket_sort in order', async () => {
    const r = await aggs({
      aggs: {
        ...daily({
          d: { derivative: { buckets_path: 's' } },
          cs: { cumulative_sum: { buckets_path: 's' } },
          twice: { bucket_script: { buckets_path: { x: 's' }, script: 'params.x * 2' } },
          diff: { serial_diff: { buckets_path: 's' } },
          mf: { moving_fn: { buckets_path: 's', window: 2, script: 'MovingFunctions.sum(values)' } },
          positive: { bucket_selector: { buckets_path: { x: 's' }, script: 'params.x > 0' } },
          first: { bucket_sort: { size: 3 } },
        }),
        after: { sum_bucket: { buckets_path: 'h>s' } },
      },
    })
    const b = r.h.buckets
    expect(days(b)).toEqual([1, 2, 4])
    // The derivative after an empty day has no value (null); the cumulative sum counts it as 0.
    expect(perDay(b, 'd')).toEqual({ 2: { value: -25 }, 4: { value: null } })
    expect(perDay(b, 'cs')).toEqual({ 1: { value: 30 }, 2: { value: 35 }, 4: { value: 65 } })
    expect(perDay(b, 'twice')).toEqual({ 1: { value: 60 }, 2: { value: 10 }, 4: { value: 60 } })
    expect(perDay(b, 'diff')).toEqual({ 2: { value: -25 } })
    expect(perDay(b, 'mf')).toEqual({ 1: { value: 0 }, 2: { value: 30 }, 4: { value: 35 } })
    // Sibling pipelines read the buckets the parent pipelines left.
    expect(r.after).toEqual({ value: 65 })
  })

  test('derivative: gap policies, unit (normalized_value) and format', async () => {
    const r = await aggs({
      aggs: daily({
        skip: { derivative: { buckets_path: 'a' } },
        zeros: { derivative: { buckets_path: 'a', gap_policy: 'insert_zeros', unit: '12h' } },
        hourly: { derivative: { buckets_path: 's', unit: '1h', format: '0.00' } },
      }),
    })
    const b = r.h.buckets
    expect(perDay(b, 'skip')).toEqual({
      2: { value: -10 },
      3: { value: null },
      4: { value: null },
      5: { value: -18.75 },
      6: { value: null },
      7: { value: null },
      8: { value: null },
    })
    expect(perDay(b, 'zeros')).toEqual({
      2: { value: -10, normalized_value: -5 },
      3: { value: -5, normalized_value: -2.5 },
      4: { value: 30, normalized_value: 15 },
      5: { value: -18.75, normalized_value: -9.375 },
      6: { value: -11.25, normalized_value: -5.625 },
      7: { value: 1, normalized_value: 0.5 },
      8: { value: -1, normalized_value: -0.5 },
    })
    expect(perDay(b, 'hourly')[2]).toEqual({
      value: -25,
      value_as_string: '-25.00',
      normalized_value: -1.0416666666666667,
      normalized_value_as_string: '-1.04',
    })
    expect(perDay(b, 'hourly')[3]).toEqual({ value: null, normalized_value: null })
  })

  test('serial_diff with a lag; cumulative_sum of a metric under terms (per terms bucket)', async () => {
    const r = await aggs({
      aggs: {
        ...daily({ lag2: { serial_diff: { buckets_path: 's', lag: 2 } } }),
        t: {
          terms: { field: 'cat' },
          aggs: {
            by_date: {
              date_histogram: { field: 'date', fixed_interval: '1d' },
              aggs: { avg: { avg: { field: 'price' } }, sum: { cumulative_sum: { buckets_path: 'avg.value' } } },
            },
          },
        },
      },
    })
    expect(perDay(r.h.buckets, 'lag2')).toEqual({ 4: { value: 25 }, 7: { value: -21.5 } })
    expect(r.t.buckets.map((t: any) => [t.key, t.by_date.buckets.map((b: any) => b.sum.value)])).toEqual([
      ['a', [10, 15, 15, 15, 30]],
      ['b', [20, 20, 20, 20, 27.5, 27.5, 27.5, 27.5]],
      ['c', [30, 30, 30, 31]],
    ])
  })

  test('moving_fn: every MovingFunctions, shift, a condition in the script', async () => {
    const fn = (script: string, window = 3, shift = 0) => ({ moving_fn: { buckets_path: 'a', window, shift, script } })
    const r = await aggs({
      aggs: daily({
        max: fn('MovingFunctions.max(values)'),
        min: fn('MovingFunctions.min(values)'),
        sum: fn('MovingFunctions.sum(values)'),
        avg: fn('MovingFunctions.unweightedAvg(values)'),
        linear: fn('MovingFunctions.linearWeightedAvg(values)'),
        ewma: fn('MovingFunctions.ewma(values, 0.3)'),
        holt: fn('MovingFunctions.holt(values, 0.3, 0.1)'),
        sd: fn('MovingFunctions.stdDev(values, MovingFunctions.unweightedAvg(values))'),
        shifted: fn('MovingFunctions.sum(values)', 2, 1),
        hw: fn('values.length >= 4 ? MovingFunctions.holtWinters(values, 0.3, 0.1, 0.1, 2, false) : Double.NaN', 5, 1),
        hwm: fn('values.length >= 4 ? MovingFunctions.holtWinters(values, 0.3, 0.1, 0.1, 2, true) : -1', 5, 1),
      }),
    })
    const at = (d: number) => {
      const b = r.h.buckets.find((x: any) => x.key_as_string === day(d))
      return Object.fromEntries(
        ['max', 'min', 'sum', 'avg', 'linear', 'ewma', 'holt', 'sd', 'shifted', 'hw', 'hwm'].map((k) => [k, b[k]?.value]),
      )
    }
    // Days without an average (3, 6, 8) are skipped: no value, and not in the others' windows.
    expect(r.h.buckets.filter((b: any) => b.max === undefined).map((b: any) => b.key_as_string)).toEqual([day(3), day(6), day(8)])
    expect(at(1)).toEqual({
      max: null,
      min: null,
      sum: 0,
      avg: null,
      linear: null,
      ewma: null,
      holt: null,
      sd: null,
      shifted: 15,
      hw: null,
      hwm: -1,
    })
    expect(at(4)).toEqual({ max: 15, min: 5, sum: 20, avg: 10, linear: 6.25, ewma: 12, holt: 12, sd: 5, shifted: 35, hw: null, hwm: -1 })
    expect(at(7)).toEqual({
      max: 30,
      min: 5,
      sum: 46.25,
      avg: 15.416666666666666,
      linear: 14.107142857142858,
      ewma: 12.125,
      holt: 12.649999999999999,
      sd: 10.622957319984968,
      shifted: 12.25,
      hw: 9.672559499999998,
      hwm: 6.373404000087704,
    })
  })

  test('bucket_script: named, listed (_value0...) and params variables, Painless number types, Math, gaps', async () => {
    const r = await aggs({
      aggs: daily({
        listed: { bucket_script: { buckets_path: ['s', '_count'], script: 'params._value0 / params._value1' } },
        params: { bucket_script: { buckets_path: { a: 's' }, script: { source: 'params.a * params.k', params: { k: 2 } } } },
        expression: { bucket_script: { buckets_path: { a: 's' }, script: { source: 'a * 2', lang: 'expression' } } },
        ints: {
          bucket_script: {
            buckets_path: { c: '_count' },
            script: { source: 'params.n / 2 + params.c / 2 + (int) params.c / 2', params: { n: 5 } },
          },
        },
        math: {
          bucket_script: {
            buckets_path: { s: 's', c: '_count' },
            script:
              'Math.max(params.s, 10) + Math.sqrt(params.c) + Math.pow(2, 3) + 7 / 2 + 7 % 3 + (params.c > 1 ? Math.abs(-4) : Math.round(2.5))',
          },
        },
        zeros: { bucket_script: { buckets_path: { a: 'a' }, script: 'params.a + 1', gap_policy: 'insert_zeros' } },
        infinite: { bucket_script: { buckets_path: { x: '_count' }, script: 'params.x / 0' } },
      }),
    })
    const b = r.h.buckets
    expect(perDay(b, 'listed')).toEqual({
      1: { value: 15 },
      2: { value: 5 },
      4: { value: 30 },
      5: { value: 11.25 },
      7: { value: 1 },
      8: { value: 0 },
    })
    expect(perDay(b, 'params')[5]).toEqual({ value: 45 })
    expect(perDay(b, 'expression')[5]).toEqual({ value: 45 })
    // An integer param divides as an integer, a bucket value (a double) does not; `_count` is never a gap.
    expect(Object.values(perDay(b, 'ints')).map((v: any) => v.value)).toEqual([4, 2.5, 2, 2.5, 4, 2, 2.5, 2.5])
    expect(perDay(b, 'math')).toEqual({
      1: { value: 47.41421356237309 },
      2: { value: 26 },
      4: { value: 46 },
      5: { value: 39.91421356237309 },
      7: { value: 26 },
      8: { value: 26 },
    })
    expect(perDay(b, 'zeros')).toEqual({
      1: { value: 16 },
      2: { value: 6 },
      3: { value: 1 },
      4: { value: 31 },
      5: { value: 12.25 },
      6: { value: 1 },
      7: { value: 2 },
      8: { value: 1 },
    })
    expect(Object.values(perDay(b, 'infinite'))).toEqual(Array(8).fill({ value: null }))
  })

  test('bucket_selector and bucket_sort on terms; _bucket_count; a bucket by key in a path', async () => {
    const r = await aggs({
      aggs: {
        t: {
          terms: { field: 'cat' },
          aggs: {
            s: { sum: { field: 'price' } },
            r: { bucket_script: { buckets_path: { s: 's', c: '_count' }, script: 'params.s / params.c' } },
            so: { bucket_sort: { sort: [{ r: 'desc' }] } },
          },
        },
        busy: {
          terms: { field: 'cat' },
          aggs: {
            days: { date_histogram: { ...DAY, min_doc_count: 1 } },
            sel: { bucket_selector: { buckets_path: { n: 'days._bucket_count' }, script: 'params.n >= 3' } },
          },
        },
        ...daily({
          c: { terms: { field: 'cat' } },
          x: { bucket_script: { buckets_path: { a: "c['a']>_count" }, script: 'params.a * 100' } },
        }),
      },
    })
    expect(r.t.buckets.map((b: any) => [b.key, b.r.value])).toEqual([
      ['c', 15.5],
      ['a', 10],
      ['b', 9.166666666666666],
    ])
    expect(r.busy.buckets.map((b: any) => b.key)).toEqual(['a', 'b'])
    expect(perDay(r.h.buckets, 'x')).toEqual({ 1: { value: 100 }, 2: { value: 100 }, 5: { value: 100 } })
  })

  test('bucket_sort: by paths and _key, from and size, gap policies', async () => {
    const sorted = async (sort: Record<string, unknown>) => days((await aggs({ aggs: daily({ so: { bucket_sort: sort } }) })).h.buckets)
    expect(await sorted({ sort: [{ s: { order: 'desc' } }, '_key'], from: 1, size: 3 })).toEqual([4, 5, 2])
    // Under skip, buckets without a value to sort on are dropped; insert_zeros sorts them as 0.
    expect(await sorted({ sort: { a: 'asc' } })).toEqual([7, 2, 5, 1, 4])
    expect(await sorted({ sort: [{ a: 'asc' }], gap_policy: 'insert_zeros' })).toEqual([3, 6, 8, 7, 2, 5, 1, 4])
    expect(await sorted({ sort: [{ _count: 'desc' }], size: 2 })).toEqual([1, 5])
    expect(await sorted({ from: 20 })).toEqual([])
  })

  test('pipelines reading pipelines run after them; keyed buckets keep their keys', async () => {
    const r = await aggs({
      aggs: {
        h: {
          date_histogram: DAY,
          aggs: {
            ratio: { bucket_script: { buckets_path: { c: 'cs', d: 'd' }, script: 'params.c / params.d' } },
            big: { bucket_selector: { buckets_path: { r: 'ratio' }, script: 'params.r != null && params.r > 1' } },
            s: { sum: { field: 'price' } },
            cs: { cumulative_sum: { buckets_path: 's' } },
            d: { derivative: { buckets_path: 'cs' } },
          },
        },
        top: { max_bucket: { buckets_path: 'h>cs' } },
        r: {
          range: { field: 'price', keyed: true, ranges: [{ to: 10 }, { from: 10, to: 20 }, { from: 20 }] },
          aggs: {
            q: { sum: { field: 'qty' } },
            x: { bucket_script: { buckets_path: { q: 'q', c: '_count' }, script: 'params.q * params.c' } },
          },
        },
        hist: {
          histogram: { field: 'price', interval: 10, keyed: true },
          aggs: { c: { cumulative_sum: { buckets_path: '_count', format: '#,##0.0' } } },
        },
      },
    })
    expect(r.h.buckets.map((b: any) => [b.key_as_string, b.cs.value, b.d.value, b.ratio.value])).toEqual([
      [day(2), 35, 5, 7],
      [day(5), 87.5, 22.5, 3.888888888888889],
    ])
    expect(r.top).toEqual({ value: 87.5, keys: [day(5)] })
    expect(Object.entries(r.r.buckets).map(([k, b]: [string, any]) => [k, b.x.value])).toEqual([
      ['*-10.0', 18],
      ['10.0-20.0', 10],
      ['20.0-*', 6],
    ])
    expect(r.hist.buckets['30.0'].c).toEqual({ value: 7, value_as_string: '7.0' })
  })

  test('meta is echoed in pipeline results', async () => {
    const r = await aggs({
      aggs: {
        ...daily({ d: { derivative: { buckets_path: 's' }, meta: { color: 'red' } } }),
        m: { max_bucket: { buckets_path: 'h>s' }, meta: { k: 1 } },
      },
    })
    expect(r.h.buckets[1].d).toEqual({ meta: { color: 'red' }, value: -25 })
    expect(r.m).toEqual({ meta: { k: 1 }, value: 30, keys: [day(1), day(4)] })
  })
})

describe('typed_keys', () => {
  test('pipeline results are named as OpenSearch names them', async () => {
    const r = await aggs(
      {
        aggs: {
          ...daily({
            d: { derivative: { buckets_path: 's' } },
            cs: { cumulative_sum: { buckets_path: 's' } },
            bs: { bucket_script: { buckets_path: { x: 's' }, script: 'params.x' } },
            sd: { serial_diff: { buckets_path: 's' } },
            mf: { moving_fn: { buckets_path: 's', window: 2, script: 'MovingFunctions.sum(values)' } },
          }),
          avg: { avg_bucket: { buckets_path: 'h>s' } },
          sum: { sum_bucket: { buckets_path: 'h>s' } },
          min: { min_bucket: { buckets_path: 'h>s' } },
          max: { max_bucket: { buckets_path: 'h>s' } },
          stats: { stats_bucket: { buckets_path: 'h>s' } },
          extended: { extended_stats_bucket: { buckets_path: 'h>s' } },
          percentiles: { percentiles_bucket: { buckets_path: 'h>s' } },
        },
      },
      '&typed_keys=true',
    )
    expect(Object.keys(r).sort()).toEqual([
      'bucket_metric_value#max',
      'bucket_metric_value#min',
      'date_histogram#h',
      'extended_stats_bucket#extended',
      'percentiles_bucket#percentiles',
      'simple_value#avg',
      'simple_value#sum',
      'stats_bucket#stats',
    ])
    expect(Object.keys(r['date_histogram#h'].buckets[1]).sort()).toEqual([
      'avg#a',
      'derivative#d',
      'doc_count',
      'key',
      'key_as_string',
      'simple_value#bs',
      'simple_value#cs',
      'simple_value#mf',
      'simple_value#sd',
      'sum#s',
    ])
  })
})

describe('errors, as OpenSearch answers them (400s)', () => {
  const validation = (...reasons: string[]) => ({
    type: 'action_request_validation_exception',
    reason: `Validation Failed: ${reasons.map((r, i) => `${i + 1}: ${r};`).join('')}`,
  })

  test('validation: where parent pipelines may be, what paths name, every error numbered', async () => {
    const terms = (aggs: Record<string, unknown>) => ({ t: { terms: { field: 'cat' }, aggs } })
    expect(
      await refused({
        aggs: {
          ...terms({ d: { derivative: { buckets_path: '_count' } }, c: { cumulative_sum: { buckets_path: '_count' } } }),
          bs: { bucket_sort: { size: 1 } },
          mb: { max_bucket: { buckets_path: 't' } },
          a: { avg: { field: 'qty' } },
          mb2: { max_bucket: { buckets_path: 'a' } },
        },
      }),
    ).toMatchObject(
      validation(
        'bucket_sort aggregation [bs] must be declared inside of another aggregation',
        'The first aggregation in buckets_path must be a multi-bucket aggregation for aggregation [mb2] found :org.opensearch.search.aggregations.metrics.AvgAggregationBuilder for buckets path: a',
        'derivative aggregation [d] must have a histogram, date_histogram or auto_date_histogram as parent',
        'cumulative_sum aggregation [c] must have a histogram, date_histogram or auto_date_histogram as parent',
      ),
    )
    expect(await refused({ aggs: { ...terms({}), c: { cumulative_sum: { buckets_path: 't>_count' } } } })).toMatchObject(
      validation(
        "cumulative_sum aggregation [c] must have a histogram, date_histogram or auto_date_histogram as parent but doesn't have a parent",
      ),
    )
    expect(
      await refused({
        aggs: {
          h: { histogram: { field: 'price', interval: 10, min_doc_count: 1 }, aggs: { x: { derivative: { buckets_path: '_count' } } } },
        },
      }),
    ).toMatchObject(validation('parent histogram of derivative aggregation [x] must have min_doc_count of 0'))
    expect(await refused({ aggs: daily({ x: { derivative: { buckets_path: 'nope' } } }) })).toMatchObject(
      validation('No aggregation found for path [nope]'),
    )
    expect(await refused({ aggs: { ...daily(), m: { max_bucket: { buckets_path: 'h>nope' } } } })).toMatchObject(
      validation('No aggregation [nope] found for path [h>nope]'),
    )
    expect(
      await refused({
        aggs: { h: { date_histogram: DAY, aggs: { a: { derivative: { buckets_path: 'b' } }, b: { derivative: { buckets_path: 'a' } } } } },
      }),
    ).toMatchObject(validation('Cyclical dependency found with pipeline aggregator [a]'))
    expect(await refused({ aggs: daily({ so: { bucket_sort: {} } }) })).toMatchObject(
      validation('[so] is configured to perform nothing. Please set either of [sort, size, from] to use bucket_sort'),
    )
    expect(await refused({ aggs: daily({ x: { cumulative_sum: { buckets_path: ['s', 's'] } } }) })).toMatchObject(
      validation('buckets_path must contain a single entry for aggregation [x]'),
    )
  })

  test('paths that do not name one number', async () => {
    const must = 'buckets_path must reference either a number value or a single value numeric metric aggregation'
    const failing = async (aggs: Record<string, unknown>, index = 'sales') => {
      const e = await refused({ aggs }, index)
      return [e.type, e.reason]
    }
    const nested = {
      the_terms: {
        terms: { field: 'int_field' },
        aggs: { the_terms_2: { terms: { field: 'int_field' }, aggs: { the_max: { max: { field: 'int_field' } } } } },
      },
    }
    expect(await failing({ ...nested, m: { max_bucket: { buckets_path: 'the_terms>the_terms_2>the_max' } } }, 'ints')).toEqual([
      'aggregation_execution_exception',
      `${must}, got: [Object[]] at aggregation [the_terms_2]`,
    ])
    expect(await failing({ ...nested, m: { max_bucket: { buckets_path: 'the_terms>the_terms_2' } } }, 'ints')).toEqual([
      'aggregation_execution_exception',
      `${must}, got: [LongTerms] at aggregation [the_terms_2]`,
    ])
    const withStats = {
      t: {
        terms: { field: 'cat' },
        aggs: { st: { stats: { field: 'price' } }, av: { avg: { field: 'price' } }, f: { filter: { term: { qty: 1 } } } },
      },
    }
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't>st' } } })).toEqual([
      'aggregation_execution_exception',
      `${must}, but [st] contains multiple values. Please specify which to use.`,
    ])
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't' } } })).toEqual([
      'aggregation_execution_exception',
      `${must}, got: [Bucket] at aggregation [t]`,
    ])
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't>_key' } } })).toEqual([
      'aggregation_execution_exception',
      `${must}, got: [String] at aggregation [_key]`,
    ])
    expect(await failing({ ...daily(), m: { max_bucket: { buckets_path: 'h>_key' } } })).toEqual([
      'aggregation_execution_exception',
      `${must}, got: [ZonedDateTime] at aggregation [_key]`,
    ])
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't>f' } } })).toEqual([
      'aggregation_execution_exception',
      `${must}, got: [InternalFilter] at aggregation [f]`,
    ])
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't>av.foo' } } })).toEqual([
      'illegal_argument_exception',
      'path not supported for [av]: [foo]',
    ])
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't>st.foo' } } })).toEqual([
      'illegal_argument_exception',
      'No enum constant org.opensearch.search.aggregations.metrics.InternalStats.Metrics.foo',
    ])
    expect(await failing({ ...withStats, m: { max_bucket: { buckets_path: 't>f.nope' } } })).toEqual([
      'illegal_argument_exception',
      'Cannot find an aggregation named [nope] in [f]',
    ])
  })

  test('parse errors: window, gap policies (keep_values is not one), unknown and missing fields, lag, sub-aggregations', async () => {
    const windowed = await refused({
      aggs: {
        the_avg: { avg: { field: 'price' } },
        mf: { moving_fn: { buckets_path: 'the_avg', window: -1, script: 'MovingFunctions.max(values)' } },
      },
    })
    expect(windowed).toMatchObject({
      type: 'x_content_parse_exception',
      reason: '[moving_fn] failed to parse field [script]',
      caused_by: { caused_by: { type: 'illegal_argument_exception', reason: '[window] must be a positive, non-zero integer.' } },
    })
    const reason = async (aggs: Record<string, unknown>) => {
      const e = await refused({ aggs })
      return [e.type, e.reason]
    }
    const withTerms = (pipeline: Record<string, unknown>) => ({ t: { terms: { field: 'cat' } }, p: pipeline })
    expect(await reason(withTerms({ max_bucket: { buckets_path: 't>_count', gap_policy: 'keep_values' } }))).toEqual([
      'parsing_exception',
      'Invalid gap policy: [keep_values], accepted values: [insert_zeros, skip]',
    ])
    expect(await reason(withTerms({ max_bucket: { buckets_path: 't>_count', foo: 1 } }))).toEqual([
      'parsing_exception',
      'Unexpected token VALUE_NUMBER [foo] in [p]',
    ])
    expect(await reason(withTerms({ max_bucket: {} }))).toEqual([
      'parsing_exception',
      'Missing required field [buckets_path] for aggregation [p]',
    ])
    expect(await reason(daily({ p: { derivative: {} } }))).toEqual([
      'parsing_exception',
      'Missing required field [buckets_path] for derivative aggregation [p]',
    ])
    expect(await reason(daily({ p: { serial_diff: { buckets_path: 's', foo: 'x' } } }))).toEqual([
      'parsing_exception',
      'Unknown key for a VALUE_STRING in [p]: [foo].',
    ])
    expect(await reason(daily({ p: { serial_diff: { buckets_path: 's', lag: 0 } } }))).toEqual([
      'parsing_exception',
      'Lag must be a positive, non-zero integer.  Value supplied was0 in [p]: [lag].',
    ])
    expect(await reason(daily({ p: { cumulative_sum: { buckets_path: 's', gap_policy: 'skip' } } }))).toEqual([
      'x_content_parse_exception',
      '[cumulative_sum] unknown field [gap_policy]',
    ])
    expect(await reason(daily({ p: { moving_fn: {} } }))).toEqual(['illegal_argument_exception', 'Required [buckets_path, script, window]'])
    expect(await reason(daily({ p: { derivative: { buckets_path: 's' }, aggs: { q: { max: { field: 'qty' } } } } }))).toEqual([
      'illegal_argument_exception',
      'Aggregation [p] cannot define sub-aggregations',
    ])
    expect(await reason({ ...daily(), p: { extended_stats_bucket: { buckets_path: 'h>s', sigma: -1 } } })).toEqual([
      'illegal_argument_exception',
      'sigma must be a non-negative double',
    ])
  })

  test('scripts: compile and runtime errors are script_exceptions', async () => {
    const scriptError = async (pipeline: Record<string, unknown>) => {
      const e = await refused({ aggs: daily({ d: { derivative: { buckets_path: 's' } }, p: pipeline }) })
      expect(e.type).toBe('script_exception')
      return [e.reason, e.caused_by.type, e.caused_by.reason]
    }
    expect(await scriptError({ bucket_script: { buckets_path: { x: 's' }, script: 'params.x +' } })).toEqual([
      'compile error',
      'illegal_argument_exception',
      'unexpected end of script.',
    ])
    expect(await scriptError({ bucket_script: { buckets_path: { a: 's' }, script: 'a * 2' } })).toEqual([
      'compile error',
      'illegal_argument_exception',
      'cannot resolve symbol [a]',
    ])
    expect(await scriptError({ bucket_script: { buckets_path: { x: '_count' }, script: 'params.x > 1' } })).toEqual([
      'compile error',
      'class_cast_exception',
      'Cannot cast from [boolean] to [java.lang.Number].',
    ])
    expect(await scriptError({ bucket_selector: { buckets_path: { x: '_count' }, script: 'params.x + 1' } })).toEqual([
      'runtime error',
      'class_cast_exception',
      'cannot cast def [double] to boolean',
    ])
    // Day 1 has no derivative: its variable is null (OpenSearch's wording of the NPE varies).
    expect((await scriptError({ bucket_selector: { buckets_path: { d: 'd' }, script: 'params.d > 1' } })).slice(0, 2)).toEqual([
      'runtime error',
      'null_pointer_exception',
    ])
  })
})

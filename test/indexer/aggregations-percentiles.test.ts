// percentiles, percentile_ranks and median_absolute_deviation (t-digest) and their `hdr` variants
// over real HTTP. Every expected value below is what OpenSearch 3.4 answered for the same
// documents in a one-shard index: the digests must agree to the last digit, not approximately.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

/** A deterministic stream of numbers in [0, 1) (mulberry32): the same documents in every run, and in OpenSearch. */
function random(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/**
 * 20,000 documents: `v` skewed doubles (every seventh document holds two, so their order within a
 * document matters), `n` small integers with many duplicates, `d` dates, `g` three groups. Large
 * enough for the digests' buffers to fill and merge many times, in both directions.
 */
function manyDocs(): Array<Record<string, unknown>> {
  const r = random(2024)
  return Array.from({ length: 20_000 }, (_, i) => {
    const v = Math.round(Math.exp(r() * 10) * 100) / 100
    return {
      v: i % 7 === 0 ? [v, Math.round(r() * 5000) / 4] : v,
      n: Math.floor(r() * r() * 300),
      d: 1_700_000_000_000 + Math.floor(r() * 86_400_000 * 60),
      g: ['a', 'b', 'c'][i % 3],
    }
  })
}

/** 57 distinct integers in no order. */
const FEW = [
  3, 97, 14, 61, 35, 88, 22, 50, 76, 9, 43, 68, 29, 91, 56, 1, 83, 38, 64, 17, 72, 46, 25, 99, 5, 58, 31, 80, 12, 66, 41, 94, 20, 53, 86, 7,
  48, 74, 27, 62, 33, 96, 11, 57, 79, 44, 18, 70, 37, 90, 24, 52, 84, 2, 60, 39, 73,
]

async function load(index: string, docs: unknown[], properties: Record<string, unknown>) {
  expect((await api.call('admin', 'PUT', `/${index}`, { mappings: { properties } })).status).toBe(200)
  for (let i = 0; i < docs.length; i += 5000) {
    const bulk = await api.call('admin', 'POST', `/${index}/_bulk`, ndjson(docs.slice(i, i + 5000).flatMap((d) => [{ index: {} }, d])))
    expect(bulk.body.errors).toBe(false)
  }
  expect((await api.call('admin', 'POST', `/${index}/_refresh`)).status).toBe(200)
}

async function search(index: string, aggs: Record<string, unknown>) {
  return api.call('admin', 'POST', `/${index}/_search`, { size: 0, aggs })
}
async function aggs(index: string, body: Record<string, unknown>) {
  const r = await search(index, body)
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.aggregations
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await load(
    'few',
    FEW.map((v) => ({ v })),
    { v: { type: 'integer' } },
  )
  await load('many', manyDocs(), { v: { type: 'double' }, n: { type: 'long' }, d: { type: 'date' }, g: { type: 'keyword' } })
  await load('neg', [{ v: 1 }, { v: -10 }, { v: 51 }], { v: { type: 'double' } })
}, 60_000)

afterAll(async () => {
  await api?.stop()
})

describe('t-digest', () => {
  test('57 values: percentiles, ranks and median absolute deviation as OpenSearch interpolates them', async () => {
    const r = await aggs('few', {
      p: { percentiles: { field: 'v', percents: [75, 25, 50] } },
      r: { percentile_ranks: { field: 'v', values: [90, 10, 50] } },
      m: { median_absolute_deviation: { field: 'v' } },
    })
    // Percents and values come back in ascending order whatever the request's.
    expect(r.p).toEqual({ values: { '25.0': 24.875, '50.0': 50, '75.0': 73.4375 } })
    expect(r.r).toEqual({ values: { '10.0': 10.526315789473683, '50.0': 50, '90.0': 90.35087719298247 } })
    expect(r.m).toEqual({ value: 24 })
  })

  test('20,000 values: percentiles at several compressions, keyed or not', async () => {
    const r = await aggs('many', {
      p: { percentiles: { field: 'v' } },
      pc: { percentiles: { field: 'v', percents: [0, 0.1, 50, 99.9, 100], tdigest: { compression: 1000 } } },
      p50: { percentiles: { field: 'v', percents: [1, 50, 99], tdigest: { compression: 50 }, keyed: false } },
    })
    expect(r.p).toEqual({
      values: {
        '1.0': 1.1140974873800706,
        '5.0': 1.8173751484481246,
        '25.0': 18.171435808755124,
        '50.0': 251.19225157631638,
        '75.0': 1326.7503036806754,
        '95.0': 12228.083667118888,
        '99.0': 19701.47781476539,
      },
    })
    expect(r.pc).toEqual({ values: { '0.0': 0.25, '0.1': 1.01, '50.0': 230.80476604185546, '99.9': 21854.81, '100.0': 22026.39 } })
    expect(r.p50).toEqual({
      values: [
        { key: 1, value: 1.11724316435611 },
        { key: 50, value: 298.6329896657939 },
        { key: 99, value: 19694.985341270763 },
      ],
    })
  })

  test('20,000 values: ranks, median absolute deviation, dates and per-bucket digests', async () => {
    const r = await aggs('many', {
      r: { percentile_ranks: { field: 'v', values: [1.5, 100, 2500, 20000], tdigest: { compression: 200 } } },
      m: { median_absolute_deviation: { field: 'v' } },
      mn: { median_absolute_deviation: { field: 'n', compression: 100 } },
      pd: { percentiles: { field: 'd', percents: [50] } },
      t: {
        terms: { field: 'g' },
        aggs: { p: { percentiles: { field: 'v', percents: [50, 95] } }, m: { median_absolute_deviation: { field: 'n' } } },
      },
    })
    expect(r.r).toEqual({
      values: { '1.5': 3.4148822745977734, '100.0': 40.85918258817856, '2500.0': 81.33124765616876, '20000.0': 99.12225655732968 },
    })
    expect(r.m).toEqual({ value: 227.74216001468292 })
    expect(r.mn).toEqual({ value: 43.86603895596438 })
    expect(r.pd).toEqual({ values: { '50.0': 1702630379295.689, '50.0_as_string': '2023-12-15T08:52:59.295Z' } })
    const buckets = r.t.buckets.map((b: Record<string, unknown>) => [b.key, b.p, b.m])
    expect(buckets).toEqual([
      ['a', { values: { '50.0': 249.95143415349804, '95.0': 12557.241335488068 } }, { value: 41.42869466145834 }],
      ['b', { values: { '50.0': 235.57733008039764, '95.0': 11935.600811998289 } }, { value: 42.56692708333333 }],
      ['c', { values: { '50.0': 248.70372430157704, '95.0': 12066.97001378162 } }, { value: 41.876399911816584 }],
    ])
  })

  test('median_absolute_deviation refuses a date field', async () => {
    const r = await search('many', { m: { median_absolute_deviation: { field: 'd' } } })
    expect(r.status).toBe(400)
    expect(r.body.error.root_cause[0]).toEqual({
      type: 'illegal_argument_exception',
      reason: 'Field [d] of type [date] is not supported for aggregation [median_absolute_deviation]',
    })
  })
})

describe('hdr', () => {
  test('percentiles and ranks are bucket edges of the histogram, typed as hdr_*', async () => {
    const few = await aggs('few', {
      h: { percentiles: { field: 'v', percents: [25, 50, 75], hdr: { number_of_significant_value_digits: 1 } } },
      hr: { percentile_ranks: { field: 'v', values: [10, 50, 90], hdr: { number_of_significant_value_digits: 1 } } },
    })
    expect(few.h).toEqual({ values: { '25.0': 25.9375, '50.0': 51.9375, '75.0': 75.9375 } })
    expect(few.hr).toEqual({ values: { '10.0': 10.526315789473685, '50.0': 50.87719298245614, '90.0': 92.98245614035088 } })
    const typed = await api.call('admin', 'POST', '/few/_search?typed_keys=true', {
      size: 0,
      aggs: { h: { percentiles: { field: 'v', hdr: {} } }, hr: { percentile_ranks: { field: 'v', values: [1], hdr: {} } } },
    })
    expect(Object.keys(typed.body.aggregations).sort()).toEqual(['hdr_percentile_ranks#hr', 'hdr_percentiles#h'])
  })

  test('20,000 values at 0, 2 and 3 significant digits', async () => {
    const r = await aggs('many', {
      h: { percentiles: { field: 'v', hdr: { number_of_significant_value_digits: 3 } } },
      hn: { percentiles: { field: 'n', percents: [10, 50, 90], hdr: { number_of_significant_value_digits: 0 } } },
      hr: { percentile_ranks: { field: 'v', values: [0, 1.5, 100, 2500, 20000], hdr: { number_of_significant_value_digits: 2 } } },
    })
    expect(r.h).toEqual({
      values: {
        '1.0': 1.110107421875,
        '5.0': 1.810302734375,
        '25.0': 17.015380859375,
        '50.0': 230.374755859375,
        '75.0': 1227.999755859375,
        '95.0': 12167.999755859375,
        '99.0': 19711.999755859375,
      },
    })
    expect(r.hn).toEqual({ values: { '10.0': 7, '50.0': 63, '90.0': 255 } })
    expect(r.hr).toEqual({
      values: { '0.0': 0, '1.5': 3.482369411147082, '100.0': 41.09720885466795, '2500.0': 81.52069297401347, '20000.0': 99.1687811707061 },
    })
  })

  test('a negative value fails the search with OpenSearch’s shard error, as a 400 (OpenSearch: 500; the request is at fault)', async () => {
    const r = await search('neg', { h: { percentiles: { field: 'v', hdr: {} } } })
    expect(r.status).toBe(400)
    const reason =
      'The value -10.0 is out of bounds for histogram, current covered range [1.0, 8.0) cannot be extended any further.\nCaused by: java.lang.ArrayIndexOutOfBoundsException: Negative values cannot be recorded'
    expect(r.body.error).toMatchObject({
      root_cause: [{ type: 'array_index_out_of_bounds_exception', reason }],
      type: 'search_phase_execution_exception',
      reason: 'all shards failed',
    })
    const rank = await api.call('admin', 'POST', '/neg/_search', {
      size: 0,
      query: { range: { v: { gte: 0 } } },
      aggs: { r: { percentile_ranks: { field: 'v', values: [-5], hdr: {} } } },
    })
    expect(rank.status).toBe(400)
    expect(rank.body.error.root_cause).toEqual([
      { type: 'array_index_out_of_bounds_exception', reason: 'Histogram recorded value cannot be negative.' },
    ])
  })

  test('its parameters are checked as OpenSearch’s parser checks them', async () => {
    const refused = async (spec: Record<string, unknown>) => {
      const r = await search('few', { p: spec })
      expect(r.status).toBe(400)
      return r.body.error
    }
    const digits = await refused({ percentiles: { field: 'v', hdr: { number_of_significant_value_digits: 6 } } })
    expect(digits.reason).toBe('[percentiles] failed to parse field [hdr]')
    expect(digits.caused_by.caused_by).toEqual({
      type: 'illegal_argument_exception',
      reason: '[numberOfSignificantValueDigits] must be between 0 and 5',
    })
    const none = await refused({ percentile_ranks: { field: 'v', values: [1], hdr: { number_of_significant_value_digits: null } } })
    expect(none.caused_by.reason).toBe("[hdr] number_of_significant_value_digits doesn't support values of type: VALUE_NULL")
    expect((await refused({ percentiles: { field: 'v', hdr: { digits: 2 } } })).caused_by.reason).toBe('[hdr] unknown field [digits]')
    expect((await refused({ percentiles: { field: 'v', hdr: 3 } })).reason).toBe(
      "[percentiles] hdr doesn't support values of type: VALUE_NUMBER",
    )
    const both = await refused({ percentiles: { field: 'v', hdr: {}, tdigest: {} } })
    expect(both.caused_by.reason).toBe('Only one percentiles method should be declared.')
    // A number in text, or with a fraction, is taken as OpenSearch takes it.
    const text = await aggs('few', {
      h: { percentiles: { field: 'v', percents: [50], hdr: { number_of_significant_value_digits: '1.9' } } },
    })
    expect(text.h).toEqual({ values: { '50.0': 51.9375 } })
  })
})

// significant_terms and significant_text over real HTTP; every expected answer below is what
// OpenSearch 3.4 answered for the same documents and request (scores compared within 1e-9
// relative: they are doubles computed by the same formulas).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const DOCS = [
  { text: 'good', class: 'good', n: 1, d: '2024-01-01', b: true, f: 1.5 },
  { text: 'good', class: 'good', n: 1, d: '2024-01-01', b: true },
  { text: 'bad', class: 'bad', n: 2, d: '2024-01-02', b: false },
  { text: 'bad', class: 'bad', n: 2, d: '2024-01-02', b: false, ip: '::1' },
  { text: 'good bad', class: 'good', n: 1, d: '2024-01-01', b: true },
  { text: 'good bad', class: 'bad', n: 3 },
  { text: 'bad', class: 'bad', n: 2, d: '2024-01-02', b: false },
]

const DEDUP = [
  ['good noisewords1 g1 g2 g3 g4 g5 g6', 'good'],
  ['good  noisewords2 g1 g2 g3 g4 g5 g6', 'good'],
  ['bad noisewords3 b1 b2 b3 b4 b5 b6', 'bad'],
  ['bad noisewords4 b1 b2 b3 b4 b5 b6', 'bad'],
  ['good bad noisewords5 gb1 gb2 gb3 gb4 gb5 gb6', 'good'],
  ['good bad noisewords6 gb1 gb2 gb3 gb4 gb5 gb6', 'bad'],
  ['bad noisewords7 b1 b2 b3 b4 b5 b6', 'bad'],
  ['the quick brown fox jumps over the lazy dog again and again the quick brown fox jumps over', 'x'],
  [['alpha beta gamma delta epsilon zeta', 'alpha beta gamma delta epsilon zeta eta'], 'x'],
]

async function search(index: string, body: Record<string, unknown>) {
  return api.call('admin', 'POST', `/${index}/_search`, { size: 0, ...body })
}
async function aggs(index: string, aggs: Record<string, unknown>, query?: unknown) {
  const r = await search(index, { aggs, ...(query ? { query } : {}) })
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.aggregations
}
const good = { match: { text: 'good' } }
const keys = (r: { buckets: Array<{ key: unknown }> }) => r.buckets.map((b) => b.key)

function expectScored(got: any, want: any) {
  expect({ ...got, buckets: got.buckets.map((b: any) => ({ ...b, score: undefined })) }).toEqual({
    ...want,
    buckets: want.buckets.map((b: any) => ({ ...b, score: undefined })),
  })
  want.buckets.forEach((b: any, i: number) =>
    expect(Math.abs(got.buckets[i].score - b.score)).toBeLessThanOrEqual(Math.abs(b.score) * 1e-9),
  )
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  const properties = {
    text: { type: 'text', fielddata: true },
    t2: { type: 'text' },
    class: { type: 'keyword' },
    n: { type: 'long' },
    ip: { type: 'ip' },
    d: { type: 'date' },
    b: { type: 'boolean' },
    f: { type: 'double' },
  }
  expect((await api.call('admin', 'PUT', '/goodbad', { mappings: { properties } })).status).toBe(200)
  await api.call('admin', 'POST', '/goodbad/_bulk?refresh=true', ndjson(DOCS.flatMap((d, i) => [{ index: { _id: String(i + 1) } }, d])))
  expect(
    (await api.call('admin', 'PUT', '/dedup', { mappings: { properties: { text: { type: 'text' }, class: { type: 'keyword' } } } })).status,
  ).toBe(200)
  await api.call(
    'admin',
    'POST',
    '/dedup/_bulk?refresh=true',
    ndjson(DEDUP.flatMap(([text, cls], i) => [{ index: { _id: String(i + 1) } }, { text, class: cls }])),
  )
})
afterAll(() => api.stop())

describe('significant_terms', () => {
  test('JLH by default, per parent bucket: doc_count and bg_count of the subset and superset', async () => {
    const r = await aggs('goodbad', { c: { terms: { field: 'class' }, aggs: { sig: { significant_terms: { field: 'text' } } } } })
    expect(r.c.buckets.map((b: any) => b.sig)).toEqual([
      { doc_count: 4, bg_count: 7, buckets: [{ key: 'bad', doc_count: 4, score: 0.39999999999999997, bg_count: 5 }] },
      { doc_count: 3, bg_count: 7, buckets: [{ key: 'good', doc_count: 3, score: 0.75, bg_count: 4 }] },
    ])
  })

  test('keys of numbers, dates, booleans and ips as OpenSearch renders them', async () => {
    const one = (field: string, query: unknown = good) =>
      aggs('goodbad', { sig: { significant_terms: { field, min_doc_count: 1 } } }, query)
    expect((await one('n')).sig).toEqual({
      doc_count: 4,
      bg_count: 7,
      buckets: [
        { key: 1, doc_count: 3, score: 0.5625, bg_count: 3 },
        { key: 3, doc_count: 1, score: 0.1875, bg_count: 1 },
      ],
    })
    expect((await one('d')).sig.buckets).toEqual([
      { key: 1704067200000, key_as_string: '2024-01-01T00:00:00.000Z', doc_count: 3, score: 0.5625, bg_count: 3 },
    ])
    expect((await one('b')).sig.buckets).toEqual([{ key: 1, key_as_string: true, doc_count: 3, score: 0.5625, bg_count: 3 }])
    expect((await one('ip', { exists: { field: 'ip' } })).sig).toEqual({
      doc_count: 1,
      bg_count: 7,
      buckets: [{ key: '::1', doc_count: 1, score: 6, bg_count: 1 }],
    })
  })

  test('the other heuristics, equal scores in the order OpenSearch gives them', async () => {
    const heur = async (h: Record<string, unknown>) =>
      (await aggs('goodbad', { sig: { significant_terms: { field: 'class', min_doc_count: 1, ...h } } }, good)).sig
    expectScored(await heur({ mutual_information: { include_negatives: true } }), {
      doc_count: 4,
      bg_count: 7,
      buckets: [
        { key: 'good', doc_count: 3, score: 0.5216406363433184, bg_count: 3 },
        { key: 'bad', doc_count: 1, score: 0.5216406363433184, bg_count: 4 },
      ],
    })
    expect((await heur({ mutual_information: {} })).buckets.map((b: any) => b.key)).toEqual(['good'])
    expect((await heur({ chi_square: {} })).buckets).toEqual([{ key: 'good', doc_count: 3, score: 3.9375, bg_count: 3 }])
    expectScored(await heur({ gnd: {} }), {
      doc_count: 4,
      bg_count: 7,
      buckets: [
        { key: 'good', doc_count: 3, score: 0.7121057487429688, bg_count: 3 },
        { key: 'bad', doc_count: 1, score: 0.08397591464308383, bg_count: 4 },
      ],
    })
    expect((await heur({ percentage: {} })).buckets).toEqual([
      { key: 'good', doc_count: 3, score: 1, bg_count: 3 },
      { key: 'bad', doc_count: 1, score: 0.25, bg_count: 4 },
    ])
  })

  test('background_filter, background_is_superset, shard_min_doc_count, include/exclude, sub-aggregations', async () => {
    const sig = async (p: Record<string, unknown>, sub?: Record<string, unknown>) =>
      (
        await aggs(
          'goodbad',
          { sig: { significant_terms: { field: 'class', min_doc_count: 1, ...p }, ...(sub ? { aggs: sub } : {}) } },
          good,
        )
      ).sig
    expect(await sig({ background_filter: { term: { b: true } } })).toEqual({ doc_count: 4, bg_count: 3, buckets: [] })
    expect(await sig({ background_filter: { term: { b: true } }, chi_square: { background_is_superset: false } })).toEqual({
      doc_count: 4,
      bg_count: 3,
      buckets: [{ key: 'bad', doc_count: 1, score: 0.875, bg_count: 0 }],
    })
    expect((await sig({ shard_min_doc_count: 4 })).buckets).toEqual([])
    expect(keys(await sig({ include: 'g.*' }))).toEqual(['good'])
    expect(keys(await sig({ exclude: ['good'] }))).toEqual([])
    expect((await sig({}, { m: { max: { field: 'n' } } })).buckets).toEqual([
      { key: 'good', doc_count: 3, score: 0.5625, bg_count: 3, m: { value: 1 } },
    ])
  })

  test('min_doc_count 3 by default; unmapped fields answer no buckets', async () => {
    expect((await aggs('goodbad', { sig: { significant_terms: { field: 'text' } } })).sig).toEqual({
      doc_count: 7,
      bg_count: 7,
      buckets: [],
    })
    expect((await aggs('goodbad', { sig: { significant_terms: { field: 'nope' } } })).sig).toEqual({ buckets: [] })
    expect((await aggs('goodbad', { sig: { significant_terms: { field: 'class' } } }, { match_none: {} })).sig).toEqual({
      doc_count: 0,
      bg_count: 7,
      buckets: [],
    })
  })

  test("requests OpenSearch refuses, in its words (400 where it answers 500 for the request's fault)", async () => {
    const refused = async (p: Record<string, unknown>, query?: unknown) => {
      const r = await search('goodbad', { aggs: { sig: { significant_terms: { field: 'class', ...p } } }, ...(query ? { query } : {}) })
      expect(r.status).toBe(400)
      return r.body.error
    }
    expect((await refused({ jlp: {} })).reason).toBe('[significant_terms] unknown field [jlp] did you mean [jlh]?')
    expect((await refused({ size: 0 })).caused_by.reason).toBe('[size] must be greater than 0. Found [0] in [sig]')
    expect((await refused({ shard_size: -1 })).caused_by.reason).toBe('[shardSize] must be greater than  0. Found [-1] in [sig]')
    expect((await refused({ percentage: { a: 1 } })).reason).toBe('[percentage] unknown field [a]')
    expect((await refused({ gnd: { include_negatives: true } })).reason).toBe('[gnd] unknown field [include_negatives]')
    expect((await refused({ field: 'f' }, good)).root_cause[0]).toEqual({
      type: 'unsupported_operation_exception',
      reason: 'No support for examining floating point numerics',
    })
    expect((await refused({ min_doc_count: 1, chi_square: {}, background_filter: { term: { b: true } } }, good)).root_cause[0].reason).toBe(
      'subsetFreq > supersetFreq, does your background filter not include all documents in the bucket? If so and it is intentional, set "background_is_superset": false',
    )
    expect((await refused({ field: 't2' })).type).toBe('search_phase_execution_exception')
  })
})

describe('significant_text', () => {
  test('reads the analysed text of documents without fielddata', async () => {
    expect(
      (await aggs('goodbad', { sig: { significant_text: { field: 'text', min_doc_count: 1 } } }, { term: { class: 'bad' } })).sig,
    ).toEqual({
      doc_count: 4,
      bg_count: 7,
      buckets: [{ key: 'bad', doc_count: 4, score: 0.39999999999999997, bg_count: 5 }],
    })
  })

  test('filter_duplicate_text drops the repeated passages of a bucket (the YAML test, in full)', async () => {
    const r = await aggs('dedup', {
      class: {
        terms: { field: 'class' },
        aggs: { sig: { significant_text: { field: 'text', filter_duplicate_text: true, min_doc_count: 1, size: 50 } } },
      },
    })
    expect(r.class.buckets.map((b: any) => keys(b.sig))).toEqual([
      ['bad', 'noisewords7', 'noisewords6', 'noisewords3', 'noisewords4', 'gb1', 'gb6', 'gb3', 'gb4', 'gb5', 'gb2'],
      ['good', 'noisewords5', 'noisewords2', 'noisewords1', 'g4', 'gb3', 'g2', 'g6', 'gb5', 'gb2', 'gb1', 'gb4', 'g5', 'gb6', 'g3', 'g1'],
      [
        'over',
        'quick',
        'lazy',
        'again',
        'delta',
        'jumps',
        'brown',
        'fox',
        'epsilon',
        'the',
        'eta',
        'and',
        'alpha',
        'dog',
        'beta',
        'gamma',
        'zeta',
      ],
    ])
    expect(r.class.buckets[0].sig.buckets[1]).toEqual({ key: 'noisewords7', doc_count: 1, score: 0.3125, bg_count: 1 })
    const plain = await aggs('dedup', {
      class: { terms: { field: 'class' }, aggs: { sig: { significant_text: { field: 'text', min_doc_count: 1, size: 50 } } } },
    })
    expect(keys(plain.class.buckets[1].sig).slice(0, 7)).toEqual(['g6', 'g2', 'g3', 'g4', 'g1', 'g5', 'good'])
  })

  test('an unmapped field: OpenSearch fails on the shard (a 500); here a 400 in its words', async () => {
    const r = await search('goodbad', { aggs: { sig: { significant_text: { field: 'nope' } } } })
    expect(r.status).toBe(400)
    expect(r.body.error.root_cause[0].type).toBe('null_pointer_exception')
  })
})

// OpenSearch 3.4 refuses it too, with too_many_buckets_exception ("... [1] but was [2] ...") as the cause.
test('significant_terms counts against search.max_buckets', async () => {
  const r = await api.call('admin', 'PUT', '/_cluster/settings', { persistent: { 'search.max_buckets': 1 } })
  try {
    expect(r.status).toBe(200)
    const res = await search('goodbad', { aggs: { sig: { significant_terms: { field: 'class', min_doc_count: 1, percentage: {} } } } })
    expect(res.status).toBe(400)
    expect(res.body.error.type).toBe('too_many_buckets_exception')
  } finally {
    await api.call('admin', 'PUT', '/_cluster/settings', { persistent: { 'search.max_buckets': null } })
  }
})

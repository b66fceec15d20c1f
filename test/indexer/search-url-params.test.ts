// The search options clients put in the URL or beside the query (terminate_after, explain,
// track_scores, stored_fields; _count's terminate_after and min_score) over real HTTP, answered
// as OpenSearch 3.4 answers them (each expectation was read from a real node).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/pq', {
    mappings: { properties: { k: { type: 'keyword' }, n: { type: 'long' }, t: { type: 'text' }, s: { type: 'keyword', store: true } } },
  })
  const docs = [
    { k: 'a', n: 1, t: 'quick fox', s: 'one' },
    { k: 'b', n: 2, t: 'lazy dog fox', s: 'two' },
    { k: 'c', n: 3, t: 'dog', s: 'three' },
  ]
  const lines = docs.flatMap((d, i) => [{ index: { _id: String(i + 1) } }, d])
  await api.call('admin', 'POST', '/pq/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
})

afterAll(async () => {
  await api?.stop()
})

const get = (path: string) => api.call('admin', 'GET', path)
const search = (body: unknown) => api.call('admin', 'POST', '/pq/_search', body)

describe('search options in the URL', () => {
  test('terminate_after stops after that many matches and says so; a bad value is a 400 naming it', async () => {
    const r = await get('/pq/_search?terminate_after=1')
    expect(r.status).toBe(200)
    expect([r.body.hits.hits.length, r.body.hits.total.value, r.body.terminated_early]).toEqual([1, 1, true])
    const bad = await get('/pq/_search?terminate_after=abc')
    expect([bad.status, bad.body.error.type, bad.body.error.reason]).toEqual([
      400,
      'illegal_argument_exception',
      'Failed to parse int parameter [terminate_after] with value [abc]',
    ])
    expect(bad.body.error.caused_by).toEqual({ type: 'number_format_exception', reason: 'For input string: "abc"' })
    expect(bad.body.error.root_cause).toEqual([{ type: 'illegal_argument_exception', reason: bad.body.error.reason }])
    const negative = await get('/pq/_search?terminate_after=-1')
    expect([negative.status, negative.body.error.reason]).toEqual([400, 'terminateAfter must be > 0'])
  })

  test('explain=true explains each hit by its score, shard and node', async () => {
    const r = await get('/pq/_search?q=t:fox&explain=true')
    expect(r.body.hits.hits).toHaveLength(2)
    for (const h of r.body.hits.hits) {
      expect(h._explanation.value).toBe(h._score)
      expect(h._shard).toBe('[pq][0]')
      expect(typeof h._node).toBe('string')
    }
    const plain = await get('/pq/_search?q=t:fox')
    expect(plain.body.hits.hits[0]._explanation).toBeUndefined()
  })

  test('track_scores=true scores a field-sorted search', async () => {
    const r = await get('/pq/_search?q=t:fox&sort=n:desc&track_scores=true')
    expect(r.body.hits.hits.map((h: any) => h._id)).toEqual(['2', '1'])
    for (const h of r.body.hits.hits) expect(h._score).toBeGreaterThan(0)
    expect(r.body.hits.max_score).toBe(Math.max(...r.body.hits.hits.map((h: any) => h._score)))
  })

  test('scores are printed as the 32-bit floats OpenSearch computes', async () => {
    const r = await get('/pq/_search?q=t:fox')
    for (const h of r.body.hits.hits) {
      // Shortest digits that read back as the same float: at most 9 significant digits.
      expect(String(h._score).replace(/^0\.0*/, '').length).toBeLessThanOrEqual(9)
      expect(Math.fround(Number(Math.fround(h._score).toPrecision(9)))).toBe(Math.fround(h._score))
    }
    // OpenSearch's own value for this corpus (BM25 of one `fox` in two of three documents).
    expect(r.body.hits.hits[0]._score).toBe(0.21363801)
  })
})

describe('stored_fields', () => {
  test('_none_ answers hits without _id or _source; other names drop _source and answer stored fields', async () => {
    const none = await get('/pq/_search?stored_fields=_none_&size=1')
    expect(none.body.hits.hits).toEqual([{ _index: 'pq', _score: 1 }])
    const named = await search({ size: 1, stored_fields: ['k', 's'] })
    expect(named.body.hits.hits).toEqual([{ _index: 'pq', _id: '1', _score: 1, fields: { s: ['one'] } }])
    const withSource = await search({ size: 1, stored_fields: ['k'], _source: ['n'] })
    expect(withSource.body.hits.hits[0]._source).toEqual({ n: 1 })
    const sourceNamed = await search({ size: 1, stored_fields: ['_source'] })
    expect(sourceNamed.body.hits.hits[0]._source).toEqual({ k: 'a', n: 1, t: 'quick fox', s: 'one' })
    const disabled = await search({ size: 1, stored_fields: '_none_', _source: false, version: true })
    expect(disabled.body.hits.hits).toEqual([{ _index: 'pq', _score: 1, _version: 1 }])
  })

  test('beside stored_fields, fields and docvalue_fields still read the source (330_fetch_fields), which stays out of the answer', async () => {
    for (const source of [false, undefined]) {
      const r = await search({
        size: 1,
        stored_fields: ['s'],
        fields: ['k'],
        docvalue_fields: ['n'],
        ...(source === undefined ? {} : { _source: source }),
      })
      expect(r.body.hits.hits).toEqual([{ _index: 'pq', _id: '1', _score: 1, fields: { s: ['one'], k: ['a'], n: [1] } }])
    }
    const shown = await search({ size: 1, stored_fields: ['s'], fields: ['k'], _source: ['t'] })
    expect(shown.body.hits.hits[0]).toMatchObject({ _source: { t: 'quick fox' }, fields: { s: ['one'], k: ['a'] } })
    const marked = await search({ stored_fields: ['s'], query: { term: { k: 'a' } }, highlight: { fields: { k: {} } } })
    expect(marked.body.hits.hits).toEqual([{ _index: 'pq', _id: '1', _score: 1, fields: { s: ['one'] }, highlight: { k: ['<em>a</em>'] } }])
  })

  test('conflicting options are refused as OpenSearch refuses them', async () => {
    const mixed = await get('/pq/_search?stored_fields=_none_,k')
    expect([mixed.status, mixed.body.error.type, mixed.body.error.reason]).toEqual([
      400,
      'illegal_argument_exception',
      'cannot combine _none_ with other fields',
    ])
    const source = await get('/pq/_search?stored_fields=_none_&_source=true')
    expect([source.status, source.body.error.type, source.body.error.reason]).toEqual([
      400,
      'search_phase_execution_exception',
      'all shards failed',
    ])
    expect(source.body.error.root_cause).toEqual([
      { type: 'search_exception', reason: '[stored_fields] cannot be disabled if [_source] is requested' },
    ])
    const fields = await search({ stored_fields: '_none_', fields: ['k'] })
    expect([fields.status, fields.body.error.root_cause[0].reason]).toEqual([
      400,
      '[stored_fields] cannot be disabled when using the [fields] option',
    ])
    const typed = await search({ stored_fields: 7 })
    expect([typed.status, typed.body.error.type, typed.body.error.reason]).toEqual([
      400,
      'parsing_exception',
      'Expected [VALUE_STRING] or [START_ARRAY] in [stored_fields] but found [VALUE_NUMBER]',
    ])
  })
})

describe('_count options', () => {
  test('terminate_after keeps the count exact and says whether collecting would stop early', async () => {
    expect((await get('/pq/_count?terminate_after=2')).body).toMatchObject({ terminated_early: true, count: 3 })
    expect((await get('/pq/_count?terminate_after=3')).body).toMatchObject({ terminated_early: false, count: 3 })
    const zero = await get('/pq/_count?terminate_after=0')
    expect([zero.body.count, zero.body.terminated_early]).toEqual([3, undefined])
    expect((await get('/pq/_count?q=t:fox&terminate_after=1')).body).toMatchObject({ terminated_early: true, count: 2 })
    expect((await get('/pq/_count?terminate_after=-1')).body.error.reason).toBe('terminateAfter must be > 0')
  })

  test('min_score counts the matches that score at least that much', async () => {
    const all = await get('/pq/_search?q=t:fox')
    const [best, other] = all.body.hits.hits.map((h: any) => h._score)
    expect((await get(`/pq/_count?q=t:fox&min_score=${best}`)).body.count).toBe(1)
    expect((await get(`/pq/_count?q=t:fox&min_score=${other}`)).body.count).toBe(2)
    const bad = await get('/pq/_count?min_score=abc')
    expect([bad.status, bad.body.error.reason]).toEqual([400, 'Failed to parse float parameter [min_score] with value [abc]'])
  })
})

describe('index-level fetch limits', () => {
  test('a scroll batch past index.max_result_window is refused with the scroll message', async () => {
    const r = await get('/pq/_search?scroll=1m&size=10001')
    expect([r.status, r.body.error.reason]).toEqual([
      400,
      'Batch size is too large, size must be less than or equal to: [10000] but was [10001]. Scroll batch sizes cost as much memory as result windows so they are controlled by the [index.max_result_window] index level setting.',
    ])
    expect((await get('/pq/_search?scroll=1m&size=10000')).status).toBe(200)
  })

  test('docvalue_fields past index.max_docvalue_fields_search are refused', async () => {
    await api.call('admin', 'PUT', '/few', { settings: { 'index.max_docvalue_fields_search': 2 } })
    await api.call('admin', 'POST', '/few/_doc?refresh=true', { a: 1, b: 2, c: 3 })
    const ok = await api.call('admin', 'POST', '/few/_search', { docvalue_fields: ['a', 'b'] })
    expect(ok.body.hits.hits[0].fields).toEqual({ a: [1], b: [2] })
    const over = await api.call('admin', 'POST', '/few/_search', { docvalue_fields: ['a', 'b', 'c'] })
    expect([over.status, over.body.error.root_cause[0].reason]).toEqual([
      400,
      'Trying to retrieve too many docvalue_fields. Must be less than or equal to: [2] but was [3]. This limit can be set by changing the [index.max_docvalue_fields_search] index level setting.',
    ])
  })
})

describe('typed_keys', () => {
  test('aggregations are named <type>#<name>, terms by their key type, sub-aggregations too (as OpenSearch 3.4 names them)', async () => {
    await api.call('admin', 'PUT', '/tk', {
      mappings: {
        properties: { k: { type: 'keyword' }, n: { type: 'long' }, d: { type: 'double' }, b: { type: 'boolean' }, ts: { type: 'date' } },
      },
    })
    await api.call('admin', 'POST', '/tk/_doc?refresh=true', { k: 'a', n: 1, d: 1.5, b: true, ts: '2024-01-01' })
    const aggs = {
      tk: { terms: { field: 'k' } },
      tn: { terms: { field: 'n' } },
      td: { terms: { field: 'd' } },
      tb: { terms: { field: 'b' } },
      tts: { terms: { field: 'ts' } },
      tun: { terms: { field: 'nope' } },
      pc: { percentiles: { field: 'n' } },
      mx: { max: { field: 'n' } },
      fi: { filter: { term: { k: 'a' } }, aggs: { inner: { terms: { field: 'k' }, aggs: { m: { max: { field: 'n' } } } } } },
      rk: { range: { field: 'n', keyed: true, ranges: [{ key: 'low', to: 5 }] }, aggs: { c: { value_count: { field: 'n' } } } },
    }
    const r = await api.call('admin', 'POST', '/tk/_search?typed_keys=true', { size: 0, aggs })
    expect(Object.keys(r.body.aggregations).sort()).toEqual(
      [
        'dterms#td',
        'filter#fi',
        'lterms#tb',
        'lterms#tn',
        'lterms#tts',
        'max#mx',
        'range#rk',
        'sterms#tk',
        'sterms#tun',
        'tdigest_percentiles#pc',
      ].sort(),
    )
    expect(r.body.aggregations['filter#fi']['sterms#inner'].buckets[0]['max#m']).toEqual({ value: 1 })
    expect(r.body.aggregations['range#rk'].buckets.low['value_count#c']).toEqual({ value: 1 })
    const plain = await api.call('admin', 'POST', '/tk/_search', { size: 0, aggs })
    expect(Object.keys(plain.body.aggregations).sort()).toEqual(Object.keys(aggs).sort())
    const ms = await api.call(
      'admin',
      'POST',
      '/_msearch?typed_keys=true',
      '{"index":"tk"}\n{"size":0,"aggs":{"m":{"max":{"field":"n"}}}}\n',
    )
    expect(ms.body.responses[0].aggregations).toEqual({ 'max#m': { value: 1 } })
  })
})

describe('execution options and sort-dependent answers', () => {
  test('search_type: the one-shard fetch types are refused as OpenSearch refuses them, an unknown one named', async () => {
    const reasons = async (type: string) => {
      const r = await get(`/pq/_search?search_type=${type}`)
      return [r.status, r.body.error?.type, r.body.error?.reason]
    }
    expect(await reasons('query_and_fetch')).toEqual([400, 'illegal_argument_exception', 'Unsupported search type [query_and_fetch]'])
    expect(await reasons('dfs_query_and_fetch')).toEqual([
      400,
      'illegal_argument_exception',
      'Unsupported search type [dfs_query_and_fetch]',
    ])
    expect(await reasons('bogus')).toEqual([400, 'illegal_argument_exception', 'No search type for [bogus]'])
    expect((await get('/pq/_search?search_type=dfs_query_then_fetch')).status).toBe(200)
    const low = await get('/pq/_search?batched_reduce_size=1')
    expect([low.status, low.body.error.reason]).toEqual([400, 'batchedReduceSize must be >= 2'])
    expect((await get('/pq/_search?batched_reduce_size=2')).status).toBe(200)
  })

  test('max_score is reported when relevance leads the sort (or track_scores asks); _score ascending is a sort with values', async () => {
    const q = { match: { t: 'fox' } }
    const pick = async (body: Record<string, unknown>) => {
      const r = await search({ query: q, ...body })
      return { max: r.body.hits.max_score, sorts: r.body.hits.hits.map((h: any) => h.sort ?? 'none') }
    }
    const relevance = await pick({ sort: [{ _score: 'desc' }] })
    expect(relevance.max).toBeGreaterThan(0)
    expect(relevance.sorts).toEqual(['none', 'none'])
    const ascending = await pick({ sort: [{ _score: 'asc' }] })
    expect(ascending.max).toBeNull()
    expect(ascending.sorts.every((s: unknown) => Array.isArray(s) && s.length === 1)).toBe(true)
    expect((await pick({ sort: [{ n: 'asc' }, { _score: 'desc' }] })).max).toBeNull()
    expect((await pick({ sort: [{ _score: 'desc' }, { n: 'asc' }] })).max).toBe(relevance.max)
    expect((await pick({ sort: [{ n: 'asc' }], track_scores: true })).max).toBe(relevance.max)
  })

  test('an aggregation without field or script, and a bad extended_stats sigma, fail as OpenSearch parses them', async () => {
    for (const agg of [{ terms: { size: 1 } }, { avg: {} }, { histogram: { interval: 1 } }]) {
      const r = await search({ size: 0, aggs: { a: agg } })
      expect([r.status, r.body.error.reason]).toEqual([400, 'Required one of fields [field, script], but none were specified. '])
    }
    const negative = await search({ size: 0, aggs: { s: { extended_stats: { field: 'n', sigma: -1 } } } })
    expect([negative.status, negative.body.error.type, negative.body.error.caused_by]).toEqual([
      400,
      'x_content_parse_exception',
      { type: 'illegal_argument_exception', reason: '[sigma] must be greater than or equal to 0. Found [-1.0] in [s]' },
    ])
    const text = await search({ size: 0, aggs: { s: { extended_stats: { field: 'n', sigma: 'abc' } } } })
    expect(text.body.error.caused_by).toEqual({ type: 'number_format_exception', reason: 'For input string: "abc"' })
  })
})

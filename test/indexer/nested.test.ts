// The `nested` field type over real HTTP: nested queries, their scores and errors, and the nested,
// reverse_nested and top_hits aggregations over nested documents. Every expected value is what
// OpenSearch 3.4 answered for the same request on the same mapping and documents (one shard).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { indexDocs, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const MAPPING = {
  properties: {
    group: { type: 'keyword' },
    obj: { properties: { x: { type: 'keyword' } } },
    users: {
      type: 'nested',
      properties: {
        first: { type: 'keyword' },
        last: { type: 'keyword' },
        age: { type: 'integer' },
        bio: { type: 'text' },
        addresses: { type: 'nested', properties: { city: { type: 'keyword' }, zip: { type: 'integer' } } },
      },
    },
    tags: { type: 'nested', include_in_parent: true, properties: { t: { type: 'keyword' } } },
  },
}

const DOCS = [
  {
    _id: '1',
    group: 'fans',
    users: [
      {
        first: 'john',
        last: 'smith',
        age: 30,
        bio: 'likes cold rain',
        addresses: [
          { city: 'paris', zip: 1 },
          { city: 'rome', zip: 2 },
        ],
      },
      { first: 'alice', last: 'white', age: 25, bio: 'cold cold weather fan', addresses: { city: 'berlin', zip: 3 } },
    ],
    tags: [{ t: 'a' }, { t: 'b' }],
  },
  { _id: '2', group: 'other', users: { first: 'john', last: 'white', age: 40, bio: 'hot weather' }, tags: { t: 'a' } },
  { _id: '3', group: 'none', obj: { x: 'y' } },
]

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(api.call('admin', 'PUT', '/nh', { mappings: MAPPING }))
  await indexDocs(api, 'nh', DOCS)
})

afterAll(async () => {
  await api?.stop()
})

/** [_id, _score] of each hit, in the order of the answer. */
async function scored(query: unknown): Promise<Array<[string, number]>> {
  const body = await ok(api.call('admin', 'POST', '/nh/_search', { query }))
  return body.hits.hits.map((h: any) => [h._id, h._score])
}

/** The refusal's status and root cause. */
async function refused(body: unknown): Promise<[number, string, string]> {
  const r = await api.call('admin', 'POST', '/nh/_search', body)
  return [r.status, r.body.error.root_cause[0].type, r.body.error.root_cause[0].reason]
}

const aggs = async (a: unknown) => (await ok(api.call('admin', 'POST', '/nh/_search', { size: 0, aggs: a }))).aggregations

const nested = (query: unknown, more: Record<string, unknown> = {}) => ({ nested: { path: 'users', query, ...more } })

describe('nested query', () => {
  test('its query is tested on each nested object alone', async () => {
    const both = { bool: { must: [{ term: { 'users.first': 'john' } }, { term: { 'users.last': 'white' } }] } }
    expect(await scored(nested(both))).toEqual([['2', 2]])
    // A root field is not in nested documents, nor a deeper nested path's.
    expect(await scored(nested({ term: { group: 'fans' } }))).toEqual([])
    expect(await scored(nested({ term: { 'users.addresses.city': 'paris' } }))).toEqual([])
    expect(await scored(nested({ bool: { must_not: [{ exists: { field: 'users.addresses.city' } }] } }))).toEqual([
      ['1', 0],
      ['2', 0],
    ])
    // Nested documents carry their root's _id.
    expect(await scored(nested({ ids: { values: ['1'] } }))).toEqual([['1', 1]])
    expect(await scored(nested({ query_string: { query: 'john' } }))).toEqual([
      ['1', 1],
      ['2', 1],
    ])
  })

  test('multi-level paths, from the root or inside the parent path', async () => {
    const paris = { term: { 'users.addresses.city': 'paris' } }
    expect(await scored({ nested: { path: 'users.addresses', query: paris } })).toEqual([['1', 1]])
    expect(await scored(nested({ nested: { path: 'users.addresses', query: paris } }))).toEqual([['1', 1]])
  })

  test('a nested field is not in root documents, unless include_in_parent copies it there', async () => {
    expect(await scored({ term: { 'users.first': 'john' } })).toEqual([])
    expect(await scored({ match: { 'users.bio': 'cold' } })).toEqual([])
    expect(await scored({ exists: { field: 'users' } })).toEqual([])
    expect(await scored({ query_string: { query: 'john' } })).toEqual([])
    expect(await scored({ term: { 'tags.t': 'a' } })).toEqual([
      ['1', 1],
      ['2', 1],
    ])
    expect(await scored({ nested: { path: 'tags', query: { term: { 'tags.t': 'b' } } } })).toEqual([['1', 1]])
  })

  test('score_mode: BM25 per nested document (their own statistics), combined', async () => {
    const cold = { match: { 'users.bio': 'cold' } }
    expect(await scored(nested(cold))).toEqual([['1', 0.24110577]])
    expect(await scored(nested(cold, { score_mode: 'min' }))).toEqual([['1', 0.21363801]])
    expect(await scored(nested(cold, { score_mode: 'sum' }))).toEqual([['1', 0.48221153]])
    expect(await scored(nested(cold, { score_mode: 'none' }))).toEqual([['1', 0]])
    const john = { term: { 'users.first': 'john' } }
    expect(await scored(nested(john, { score_mode: 'sum' }))).toEqual([
      ['1', 1],
      ['2', 1],
    ])
    expect(await scored(nested({ term: { 'users.first': { value: 'john', boost: 2 } } }, { boost: 3 }))).toEqual([
      ['1', 6],
      ['2', 6],
    ])
    expect(await scored({ bool: { must: [nested(john), { term: { group: 'fans' } }] } })).toEqual([['1', 2]])
  })

  test('ignore_unmapped, and the refusals', async () => {
    expect(await scored({ nested: { path: 'nope', ignore_unmapped: true, query: { match_all: {} } } })).toEqual([])
    expect(await refused({ query: { nested: { path: 'nope', query: { match_all: {} } } } })).toEqual([
      400,
      'query_shard_exception',
      'failed to create query: [nested] failed to find nested object under path [nope]',
    ])
    expect(await refused({ query: { nested: { path: 'obj', query: { match_all: {} } } } })).toEqual([
      400,
      'query_shard_exception',
      'failed to create query: [nested] nested object under path [obj] is not of nested type',
    ])
    expect(await refused({ query: nested({ match_all: {} }, { score_mode: 'bad' }) })).toEqual([
      400,
      'illegal_argument_exception',
      'No score mode for child query [bad] found',
    ])
    expect(await refused({ query: { nested: { query: { match_all: {} } } } })).toEqual([
      400,
      'illegal_argument_exception',
      "[nested] requires 'path' field",
    ])
    expect(await refused({ query: { nested: { path: 'users' } } })).toEqual([
      400,
      'illegal_argument_exception',
      "[nested] requires 'query' field",
    ])
  })
})

const terms = (buckets: Array<[string, number]>, more: (b: [string, number]) => Record<string, unknown> = () => ({})) => ({
  doc_count_error_upper_bound: 0,
  sum_other_doc_count: 0,
  buckets: buckets.map((b) => ({ key: b[0], doc_count: b[1], ...more(b) })),
})

describe('nested and reverse_nested aggregations', () => {
  test('nested documents counted, their fields aggregated, reverse_nested back to the root or a parent path', async () => {
    const got = await aggs({
      u: {
        nested: { path: 'users' },
        aggs: {
          f: { terms: { field: 'users.first' }, aggs: { back: { reverse_nested: {}, aggs: { g: { terms: { field: 'group' } } } } } },
          ages: { avg: { field: 'users.age' } },
          addr: {
            nested: { path: 'users.addresses' },
            aggs: {
              c: { terms: { field: 'users.addresses.city' } },
              tou: { reverse_nested: { path: 'users' }, aggs: { n: { terms: { field: 'users.first' } } } },
              root: { reverse_nested: {} },
            },
          },
        },
      },
    })
    const groups: Record<string, Array<[string, number]>> = {
      john: [
        ['fans', 1],
        ['other', 1],
      ],
      alice: [['fans', 1]],
    }
    expect(got).toEqual({
      u: {
        doc_count: 3,
        f: terms(
          [
            ['john', 2],
            ['alice', 1],
          ],
          ([k, n]) => ({ back: { doc_count: n, g: terms(groups[k]) } }),
        ),
        ages: { value: 31.666666666666668 },
        addr: {
          doc_count: 3,
          c: terms([
            ['berlin', 1],
            ['paris', 1],
            ['rome', 1],
          ]),
          tou: {
            doc_count: 2,
            n: terms([
              ['alice', 1],
              ['john', 1],
            ]),
          },
          root: { doc_count: 1 },
        },
      },
    })
  })

  test('fields of the other scope are not seen', async () => {
    expect(await aggs({ t: { terms: { field: 'users.first' } }, tt: { terms: { field: 'tags.t' } } })).toEqual({
      t: terms([]),
      tt: terms([
        ['a', 2],
        ['b', 1],
      ]),
    })
    expect(await aggs({ u: { nested: { path: 'users' }, aggs: { g: { terms: { field: 'group' } } } } })).toEqual({
      u: { doc_count: 3, g: terms([]) },
    })
  })

  test('unmapped paths count nothing; plain objects and a reverse_nested outside nested are refused', async () => {
    expect(await aggs({ u: { nested: { path: 'nope' } } })).toEqual({ u: { doc_count: 0 } })
    expect(await aggs({ u: { nested: { path: 'users' }, aggs: { r: { reverse_nested: { path: 'nope' } } } } })).toEqual({
      u: { doc_count: 3, r: { doc_count: 0 } },
    })
    // OpenSearch fails the shard with a 500 for a plain object path; the request is at fault, so a 400 here.
    expect(await refused({ size: 0, aggs: { u: { nested: { path: 'obj' } } } })).toEqual([
      400,
      'aggregation_execution_exception',
      '[nested] nested path [obj] is not nested',
    ])
    expect(
      await refused({ size: 0, aggs: { u: { nested: { path: 'users' }, aggs: { r: { reverse_nested: { path: 'obj' } } } } } }),
    ).toEqual([400, 'aggregation_execution_exception', '[reverse_nested] nested path [obj] is not nested'])
    expect(await refused({ size: 0, aggs: { u: { nested: {} } } })).toEqual([
      400,
      'parsing_exception',
      'Missing [path] field for nested aggregation [u]',
    ])
    expect(await refused({ size: 0, aggs: { u: { reverse_nested: {} } } })).toEqual([
      400,
      'illegal_argument_exception',
      'Reverse nested aggregation [u] can only be used inside a [nested] aggregation',
    ])
  })

  test('top_hits of nested documents: their own source and place (_nested)', async () => {
    const got = await aggs({
      u: {
        nested: { path: 'users' },
        aggs: {
          top: { top_hits: { size: 1, _source: ['users.first'] } },
          a: { nested: { path: 'users.addresses' }, aggs: { top: { top_hits: { size: 1, sort: [{ 'users.addresses.zip': 'desc' }] } } } },
        },
      },
    })
    expect(got.u.top.hits).toEqual({
      total: { value: 3, relation: 'eq' },
      max_score: 1,
      hits: [{ _index: 'nh', _id: '1', _nested: { field: 'users', offset: 0 }, _score: 1, _source: { first: 'john' } }],
    })
    expect(got.u.a.top.hits.hits).toEqual([
      {
        _index: 'nh',
        _id: '1',
        _nested: { field: 'users', offset: 1, _nested: { field: 'addresses', offset: 0 } },
        _score: null,
        _source: { zip: 3, city: 'berlin' },
        sort: [3],
      },
    ])
  })
})

describe('a sort on a field of nested documents (answers of OpenSearch 3.4 on the same documents)', () => {
  const sorted = async (sort: unknown) => {
    const body = await ok(api.call('admin', 'POST', '/nsort/_search', { sort: [sort] }))
    return body.hits.hits.map((h: any) => [h._id, h.sort[0]])
  }

  test('nested.path reads the nested documents values, by the mode; nested.filter keeps those it matches', async () => {
    await ok(
      api.call('admin', 'PUT', '/nsort', {
        mappings: { properties: { nf: { type: 'nested', properties: { d: { type: 'long' }, k: { type: 'keyword' } } } } },
      }),
    )
    await indexDocs(api, 'nsort', [
      {
        _id: '1',
        nf: [
          { d: 5, k: 'a' },
          { d: 1, k: 'b' },
        ],
      },
      { _id: '2', nf: [{ d: 3, k: 'a' }] },
      { _id: '3', x: 1 },
    ])
    // The document without a value sorts last (its sort value is OpenSearch's extreme there, null here: README).
    expect((await sorted({ 'nf.d': { order: 'asc', nested: { path: 'nf' } } })).slice(0, 2)).toEqual([
      ['1', 1],
      ['2', 3],
    ])
    expect((await sorted({ 'nf.d': { order: 'desc', nested: { path: 'nf', filter: { term: { 'nf.k': 'a' } } } } })).slice(0, 2)).toEqual([
      ['1', 5],
      ['2', 3],
    ])
    expect((await sorted({ 'nf.d': { order: 'asc', mode: 'avg', nested: { path: 'nf' } } })).slice(0, 2)).toEqual([
      ['1', 3],
      ['2', 3],
    ])
    expect((await sorted({ 'nf.d': { order: 'desc', nested: { path: 'nf', filter: { term: { 'nf.k': 'b' } } } } })).slice(0, 1)).toEqual([
      ['1', 1],
    ])
    // Without the nested context no root document holds a value: index order.
    expect((await sorted({ 'nf.d': 'desc' })).map(([id]: [string]) => id)).toEqual(['1', '2', '3'])
    const r = await api.call('admin', 'POST', '/nsort/_search', { sort: [{ 'nf.d': { order: 'asc', nested: { path: 'nope' } } }] })
    expect(r.status).toBe(400)
    expect(r.body.error.root_cause[0]).toMatchObject({
      type: 'query_shard_exception',
      reason: '[nested] failed to find nested object under path [nope]',
    })
  })
})

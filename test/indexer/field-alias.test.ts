// Field aliases (`type: alias`) over real HTTP: queries, sorts, aggregations and fetched fields read
// the field an alias names, writes to an alias and aliases of nothing are refused. Expected values are
// what OpenSearch 3.4 answered to the same requests on the same documents.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { indexDocs, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const MAPPINGS = {
  properties: {
    msg: { type: 'text', fields: { raw: { type: 'keyword' } } },
    msg_alias: { type: 'alias', path: 'msg' },
    raw_alias: { type: 'alias', path: 'msg.raw' },
    n: { type: 'long' },
    n_alias: { type: 'alias', path: 'n' },
    ts: { type: 'date' },
    ts_alias: { type: 'alias', path: 'ts' },
  },
}

async function search(body: Record<string, unknown>) {
  return ok(api.call('admin', 'POST', '/al/_search', body))
}
const ids = async (query: unknown) => (await search({ query, size: 100 })).hits.hits.map((h: any) => h._id).sort()

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(api.call('admin', 'PUT', '/al', { mappings: MAPPINGS }))
  await indexDocs(api, 'al', [
    { _id: '1', msg: 'hello world', n: 5, ts: '2026-01-01T00:00:00Z' },
    { _id: '2', msg: 'goodbye world', n: 7, ts: '2026-01-02T00:00:00Z' },
    { _id: '3', msg: 'hello again', n: 9 },
  ])
})

afterAll(async () => {
  await api?.stop()
})

describe('an alias reads the field it names', () => {
  test('queries: match, term on a multi-field, range, exists, prefix, query_string, multi_match', async () => {
    expect(await ids({ match: { msg_alias: 'hello' } })).toEqual(['1', '3'])
    expect(await ids({ term: { raw_alias: 'hello world' } })).toEqual(['1'])
    expect(await ids({ range: { n_alias: { gte: 6 } } })).toEqual(['2', '3'])
    expect(await ids({ exists: { field: 'ts_alias' } })).toEqual(['1', '2'])
    expect(await ids({ prefix: { raw_alias: 'good' } })).toEqual(['2'])
    expect(await ids({ query_string: { query: 'msg_alias:hello AND n_alias:>6' } })).toEqual(['3'])
    expect(await ids({ query_string: { query: 'msg_alias:/h[a-z].*/' } })).toEqual(['1', '3'])
    expect(await ids({ multi_match: { query: 'again', fields: ['msg_alias'] } })).toEqual(['3'])
  })

  test('a field pattern counts an alias once, as its field: the same score as the field alone', async () => {
    const alone = await search({ query: { multi_match: { query: 'hello', fields: ['msg'], type: 'most_fields' } } })
    const both = await search({ query: { multi_match: { query: 'hello', fields: ['msg*'], type: 'most_fields' } } })
    expect(both.hits.hits.map((h: any) => [h._id, h._score])).toEqual(alone.hits.hits.map((h: any) => [h._id, h._score]))
  })

  test('sort, aggregations, docvalue_fields and fields', async () => {
    const sorted = await search({ sort: [{ n_alias: 'desc' }] })
    expect(sorted.hits.hits.map((h: any) => [h._id, h.sort])).toEqual([
      ['3', [9]],
      ['2', [7]],
      ['1', [5]],
    ])
    const aggs = await search({ size: 0, aggs: { t: { terms: { field: 'raw_alias' } }, m: { max: { field: 'n_alias' } } } })
    expect(aggs.aggregations.t.buckets).toEqual([
      { key: 'goodbye world', doc_count: 1 },
      { key: 'hello again', doc_count: 1 },
      { key: 'hello world', doc_count: 1 },
    ])
    expect(aggs.aggregations.m.value).toBe(9)
    const one = { query: { ids: { values: ['1'] } } }
    expect((await search({ ...one, docvalue_fields: ['n_alias'] })).hits.hits[0].fields).toEqual({ n_alias: [5] })
    expect((await search({ ...one, fields: ['n_alias', 'msg_alias'] })).hits.hits[0].fields).toEqual({
      n_alias: [5],
      msg_alias: ['hello world'],
    })
  })
})

test('field capabilities report an alias as the field it names; _mapping/field shows the alias', async () => {
  const caps = await ok(api.call('admin', 'GET', '/al/_field_caps?fields=*alias'))
  expect(caps.fields).toEqual({
    msg_alias: { text: { type: 'text', searchable: true, aggregatable: false } },
    raw_alias: { keyword: { type: 'keyword', searchable: true, aggregatable: true } },
    n_alias: { long: { type: 'long', searchable: true, aggregatable: true } },
    ts_alias: { date: { type: 'date', searchable: true, aggregatable: true } },
  })
  const field = await ok(api.call('admin', 'GET', '/al/_mapping/field/n_alias'))
  expect(field).toEqual({ al: { mappings: { n_alias: { full_name: 'n_alias', mapping: { n_alias: { type: 'alias', path: 'n' } } } } } })
})

describe('what OpenSearch refuses', () => {
  test('a document with a value under an alias', async () => {
    const r = await api.call('admin', 'POST', '/al/_doc/9', { n_alias: 3 })
    expect(r.status).toBe(400)
    expect(r.body.error).toMatchObject({
      type: 'mapper_parsing_exception',
      reason: 'failed to parse',
      caused_by: { type: 'illegal_argument_exception', reason: 'Cannot write to a field alias [n_alias].' },
    })
  })

  test('an alias of nothing, of an object or of an alias; one without a path', async () => {
    const refused = async (properties: Record<string, unknown>, index = 'alv') => {
      const r = await api.call('admin', 'PUT', `/${index}`, { mappings: { properties } })
      expect(r.status).toBe(400)
      return r.body.error
    }
    const invalid = (target: string, alias: string, why: string) =>
      `Invalid [path] value [${target}] for field alias [${alias}]: an alias ${why}`
    expect((await refused({ a: { type: 'alias', path: 'nope' } })).reason).toBe(
      invalid('nope', 'a', 'must refer to an existing field in the mappings.'),
    )
    expect((await refused({ o: { properties: { x: { type: 'long' } } }, a: { type: 'alias', path: 'o' } })).reason).toBe(
      invalid('o', 'a', 'must refer to an existing field in the mappings.'),
    )
    expect((await refused({ x: { type: 'long' }, a: { type: 'alias', path: 'x' }, b: { type: 'alias', path: 'a' } })).reason).toBe(
      invalid('a', 'b', 'cannot refer to another alias.'),
    )
    expect(await refused({ a: { type: 'alias' } })).toMatchObject({
      root_cause: [{ type: 'mapper_parsing_exception', reason: 'The [path] property must be specified for field [a].' }],
      reason: 'Failed to parse mapping [_doc]: The [path] property must be specified for field [a].',
    })
    // A put mapping is checked against the whole mapping it makes.
    const r = await api.call('admin', 'PUT', '/al/_mapping', { properties: { zz: { type: 'alias', path: 'missing' } } })
    expect(r.status).toBe(400)
    expect(r.body.error.reason).toBe(invalid('missing', 'zz', 'must refer to an existing field in the mappings.'))
    await ok(api.call('admin', 'PUT', '/al/_mapping', { properties: { n2_alias: { type: 'alias', path: 'n' } } }))
    expect(await ids({ term: { n2_alias: 7 } })).toEqual(['2'])
  })
})

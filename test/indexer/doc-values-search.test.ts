// Searching fields mapped with `index: false` (OpenSearch 3.0+ answers from their doc values) and
// fields with neither index nor doc_values, over real HTTP. Every expected value is what
// OpenSearch 3.4 answered to the same requests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

async function ids(index: string, query: unknown): Promise<string[]> {
  const r = await api.call('admin', 'POST', `/${index}/_search`, { query, size: 100 })
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.hits.hits.map((h: any) => h._id).sort()
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/dv', {
    mappings: {
      properties: {
        kw: { type: 'keyword', index: false },
        n: { type: 'integer', index: false },
        d: { type: 'date', index: false },
        ip: { type: 'ip', index: false },
        b: { type: 'boolean', index: false },
      },
    },
  })
  await api.call(
    'admin',
    'POST',
    '/dv/_bulk?refresh=true',
    ndjson([
      { index: { _id: '1' } },
      { kw: 'Keyword1', n: 1290, d: '2018-10-29T12:12:12.987Z', ip: '192.168.0.1', b: true },
      { index: { _id: '2' } },
      { kw: 'keyword1', n: 1291, d: '2020-10-29T12:12:12.987Z', ip: '192.168.0.2', b: false },
      { index: { _id: '3' } },
      { kw: '400', n: 1292, ip: '192.168.0.3' },
    ]),
  )
  await api.call('admin', 'PUT', '/nx', {
    mappings: {
      properties: {
        k: { type: 'keyword', index: false, doc_values: false },
        n: { type: 'long', index: false, doc_values: false },
        t: { type: 'text', index: false },
        kd: { type: 'keyword', index: false },
        w: { type: 'wildcard', index: false },
        kdf: { type: 'keyword', index: false, fields: { raw: { type: 'keyword' } } },
      },
    },
  })
  await api.call('admin', 'PUT', '/nx/_doc/1?refresh=true', { k: 'abc', n: 5, t: 'hello world', kd: 'Abc', w: 'xyz', kdf: 'Q' })
})

afterAll(async () => {
  await api?.stop()
})

test('index: false with doc values: every query answers from the values', async () => {
  expect(await ids('dv', { term: { kw: 'Keyword1' } })).toEqual(['1'])
  // case_insensitive as the string "true", as OpenSearch reads it
  expect(await ids('dv', { term: { kw: { value: 'keyword1', case_insensitive: 'true' } } })).toEqual(['1', '2'])
  expect(await ids('dv', { range: { kw: { lt: 500 } } })).toEqual(['3'])
  expect(await ids('dv', { prefix: { kw: 'key' } })).toEqual(['2'])
  expect(await ids('dv', { terms: { n: [1290, 1291] } })).toEqual(['1', '2'])
  expect(await ids('dv', { range: { n: { gte: 1291 } } })).toEqual(['2', '3'])
  expect(await ids('dv', { term: { ip: '192.168.0.1/31' } })).toEqual(['1'])
  expect(await ids('dv', { range: { d: { lte: '2019-01-01' } } })).toEqual(['1'])
  expect(await ids('dv', { term: { b: false } })).toEqual(['2'])
  expect(await ids('dv', { exists: { field: 'd' } })).toEqual(['1', '2'])
})

describe('fields with nothing to search', () => {
  const error = async (query: unknown) => {
    const r = await api.call('admin', 'POST', '/nx/_search', { query })
    expect(r.status).toBe(400)
    expect(r.body.error.type).toBe('search_phase_execution_exception')
    expect(r.body.error.failed_shards[0].reason.caused_by.type).toBe('illegal_argument_exception')
    return r.body.error.root_cause[0]
  }

  test('term, terms, range and prefix are refused: query_shard_exception, failed to create query', async () => {
    // A query_shard_exception names the index and its uuid, as OpenSearch's does.
    const both = (f: string) => ({
      type: 'query_shard_exception',
      reason: `failed to create query: Cannot search on field [${f}] since it is both not indexed, and does not have doc_values enabled.`,
      index: 'nx',
      index_uuid: expect.any(String),
    })
    expect(await error({ term: { k: 'abc' } })).toEqual(both('k'))
    expect(await error({ terms: { k: ['abc'] } })).toEqual(both('k'))
    expect(await error({ prefix: { k: 'a' } })).toEqual(both('k'))
    expect(await error({ term: { n: 5 } })).toEqual(both('n'))
    expect(await error({ range: { n: { gte: 1 } } })).toEqual(both('n'))
    expect(await error({ match: { t: 'hello' } })).toEqual({
      type: 'query_shard_exception',
      reason: 'failed to create query: Cannot search on field [t] since it is not indexed.',
      index: 'nx',
      index_uuid: expect.any(String),
    })
  })

  test('exists and query_string find nothing there', async () => {
    expect(await ids('nx', { exists: { field: 'k' } })).toEqual([])
    expect(await ids('nx', { exists: { field: 'n' } })).toEqual([])
    expect(await ids('nx', { exists: { field: 't' } })).toEqual([])
    expect(await ids('nx', { query_string: { query: 'k:abc' } })).toEqual([])
    expect(await ids('nx', { query_string: { query: 't:hello' } })).toEqual([])
  })

  test('a keyword kept as doc values, its multi-field, and a wildcard field (always indexed) answer', async () => {
    expect(await ids('nx', { exists: { field: 'kd' } })).toEqual(['1'])
    expect(await ids('nx', { wildcard: { kd: 'A*' } })).toEqual(['1'])
    expect(await ids('nx', { regexp: { kd: 'A.*' } })).toEqual(['1'])
    expect(await ids('nx', { fuzzy: { kd: 'Abd' } })).toEqual(['1'])
    expect(await ids('nx', { match: { kd: 'Abc' } })).toEqual(['1'])
    expect(await ids('nx', { term: { kdf: 'Q' } })).toEqual(['1'])
    expect(await ids('nx', { term: { 'kdf.raw': 'Q' } })).toEqual(['1'])
    expect(await ids('nx', { term: { w: 'xyz' } })).toEqual(['1'])
    const m = await api.call('admin', 'GET', '/nx/_mapping')
    expect(m.body.nx.mappings.properties.w).toEqual({ type: 'wildcard', doc_values: true })
  })
})

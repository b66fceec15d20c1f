// The dynamic cluster setting `search.allow_expensive_queries` over real HTTP. Every expected value
// (counts, error types and words) is what OpenSearch 3.4 answered to the same requests.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startIndexApi, type TestServer } from './helpers'

let api: TestServer

const search = (query: unknown) => api.call('admin', 'POST', '/ex/_search', { query })

async function count(query: unknown): Promise<number> {
  const r = await search(query)
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.hits.total.value
}

const OFF = "cannot be executed when 'search.allow_expensive_queries' is set to false."
const PREFIX = `[prefix] queries ${OFF} For optimised prefix queries on text fields please enable [index_prefixes].`

async function refused(query: unknown): Promise<string> {
  const r = await search(query)
  expect(r.status).toBe(400)
  return r.body.error.root_cause[0].reason
}

const setting = (value: string | null) =>
  api.call('admin', 'PUT', '/_cluster/settings?flat_settings=true', { transient: { 'search.allow_expensive_queries': value } })

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/ex', {
    mappings: {
      properties: {
        text: { type: 'text', fields: { raw: { type: 'keyword' } } },
        k: { type: 'keyword' },
        w: { type: 'wildcard' },
        n: { type: 'long' },
        nested1: { type: 'nested' },
        tp: { type: 'text', index_prefixes: {} },
      },
    },
  })
  await api.call('admin', 'PUT', '/ex/_doc/1?refresh=true', {
    text: 'outside',
    k: 'out',
    w: 'out',
    n: 1,
    nested1: [{ foo: 'bar' }],
    tp: 'outside',
  })
})

afterAll(async () => {
  await api?.stop()
})

describe('search.allow_expensive_queries: false', () => {
  beforeAll(async () => {
    const r = await setting('false')
    expect(r.body).toEqual({ acknowledged: true, persistent: {}, transient: { 'search.allow_expensive_queries': 'false' } })
  })
  afterAll(() => setting(null))

  test('prefix, wildcard, regexp, fuzzy, string ranges and nested are refused, with their words', async () => {
    expect(await refused({ prefix: { text: 'out' } })).toBe(PREFIX)
    expect(await refused({ prefix: { k: 'out' } })).toBe(PREFIX)
    expect(await refused({ match_bool_prefix: { text: 'out' } })).toBe(PREFIX)
    expect(await refused({ match_bool_prefix: { k: 'ou' } })).toBe(PREFIX)
    expect(await refused({ bool: { must_not: { prefix: { k: 'o' } } } })).toBe(PREFIX)
    expect(await refused({ wildcard: { k: { value: 'o*', case_insensitive: true } } })).toBe(`[wildcard] queries ${OFF}`)
    expect(await refused({ regexp: { text: '.*ou.*id.*' } })).toBe(`[regexp] queries ${OFF}`)
    expect(await refused({ fuzzy: { k: 'oot' } })).toBe(`[fuzzy] queries ${OFF}`)
    expect(await refused({ match: { text: { query: 'outsde', fuzziness: 1 } } })).toBe(`[fuzzy] queries ${OFF}`)
    expect(await refused({ multi_match: { query: 'outsde', fields: ['text'], fuzziness: 1 } })).toBe(`[fuzzy] queries ${OFF}`)
    expect(await refused({ range: { k: { gte: 'a' } } })).toBe(`[range] queries on [text] or [keyword] fields ${OFF}`)
    expect(await refused({ range: { 'text.raw': { gte: 'a' } } })).toBe(`[range] queries on [text] or [keyword] fields ${OFF}`)
    expect(await refused({ nested: { path: 'nested1', query: { match_all: {} } } })).toBe(`[joining] queries ${OFF}`)
  })

  test('the error: search_phase_execution_exception over the shard query_shard_exception, caused by an `exception`', async () => {
    const r = await search({ fuzzy: { k: 'oot' } })
    const why = { type: 'exception', reason: `[fuzzy] queries ${OFF}` }
    expect(r.body.status).toBe(400)
    expect(r.body.error).toMatchObject({
      root_cause: [why],
      type: 'search_phase_execution_exception',
      reason: 'all shards failed',
      phase: 'query',
      grouped: true,
      caused_by: why,
    })
    expect(r.body.error.failed_shards[0].reason).toMatchObject({
      type: 'query_shard_exception',
      reason: `failed to create query: [fuzzy] queries ${OFF}`,
      caused_by: why,
    })
  })

  test('wildcard fields, index_prefixes, numeric ranges and plain terms still answer', async () => {
    expect(await count({ prefix: { tp: 'out' } })).toBe(1)
    expect(await count({ prefix: { w: 'out' } })).toBe(1)
    expect(await count({ wildcard: { w: 'o*' } })).toBe(1)
    expect(await count({ regexp: { w: 'o.*' } })).toBe(1)
    expect(await count({ range: { n: { gte: 0 } } })).toBe(1)
    expect(await count({ match_phrase_prefix: { text: 'out' } })).toBe(1)
    expect(await count({ term: { k: { value: 'OUT', case_insensitive: true } } })).toBe(1)
    expect(await count({ terms: { k: ['out'] } })).toBe(1)
    expect(await count({ match: { k: 'out' } })).toBe(1)
    expect(await count({ prefix: { _index: 'e' } })).toBe(1)
  })

  test('in a query_string a refused clause matches nothing', async () => {
    expect(await count({ query_string: { query: 'out*' } })).toBe(1)
    expect(await count({ simple_query_string: { query: 'out*' } })).toBe(1)
    expect(await count({ query_string: { query: 'k:o*' } })).toBe(0)
    expect(await count({ query_string: { query: 'text:outsde~' } })).toBe(0)
  })
})

test('reset (null), the queries answer again', async () => {
  await setting('false')
  await setting(null)
  const r = await api.call('admin', 'GET', '/_cluster/settings?flat_settings=true')
  expect(r.body).toEqual({ persistent: {}, transient: {} })
  expect(await count({ prefix: { text: 'out' } })).toBe(1)
  expect(await count({ nested: { path: 'nested1', query: { match_all: {} } } })).toBe(1)
})

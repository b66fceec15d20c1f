// The `intervals` query over real HTTP. Every expected hit list, score and error is what OpenSearch
// 3.4 answered for the same query on the same documents (one shard).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { indexDocs, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

// The documents of the REST suite's search/230_interval_query.yml, a multi-valued one, and repeats.
const DOCS = [
  { _id: '1', text: 'Some like hot and dry, some like it cold and wet' },
  { _id: '2', text: 'Its cold outside, theres no kind of atmosphere' },
  { _id: '3', text: 'Baby its cold there outside' },
  { _id: '4', text: 'Outside it is cold and wet' },
  { _id: '5', text: 'cold rain makes it wet' },
  { _id: '6', text: 'that is some cold cold rain' },
  { _id: '7', text: ['cold wet', 'outside rain'] },
  { _id: '8', text: 'cold cold cold wet wet', kw: 'x' },
]

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(api.call('admin', 'PUT', '/iv', { mappings: { properties: { text: { type: 'text' }, kw: { type: 'keyword' } } } }))
  await indexDocs(api, 'iv', DOCS)
})

afterAll(async () => {
  await api?.stop()
})

const search = (rule: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  api.call('admin', 'POST', '/iv/_search', { query: { intervals: { text: { ...rule, ...extra } } }, size: 100 })

/** [_id, _score] of each hit, in the order of the answer. */
async function scored(rule: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Array<[string, number]>> {
  const body = await ok(search(rule, extra))
  return body.hits.hits.map((h: any) => [h._id, h._score])
}

/** The 400's type and reason (the root cause's, as the REST tests read them). */
async function refused(query: unknown, status = 400): Promise<[string, string]> {
  const r = await api.call('admin', 'POST', '/iv/_search', { query })
  expect(r.status).toBe(status)
  return [r.body.error.root_cause[0].type, r.body.error.root_cause[0].reason]
}

describe('intervals: matches and scores (Lucene minimal intervals)', () => {
  test('match: unordered by default, ordered, phrase (max_gaps 0), unordered_no_overlap', async () => {
    expect(await scored({ match: { query: 'cold outside' } })).toEqual([
      ['2', 0.5],
      ['3', 0.3333333],
      ['4', 0.25],
      ['7', 0.009708703],
    ])
    expect(await scored({ match: { query: 'cold outside', mode: 'ordered', max_gaps: 0 } })).toEqual([['2', 0.5]])
    expect(await scored({ match: { query: 'cold wet it', mode: 'unordered_no_overlap' } })).toEqual([
      ['1', 0.3333333],
      ['4', 0.25],
    ])
    // A repeated term needs as many occurrences.
    expect(await scored({ match: { query: 'cold cold', mode: 'ordered' } })).toEqual([
      ['8', 0.5],
      ['6', 0.3333333],
    ])
    expect(await scored({ match: { query: 'cold outside' } }, { boost: 2 })).toEqual([
      ['2', 1],
      ['3', 0.6666666],
      ['4', 0.5],
      ['7', 0.019417405],
    ])
  })

  test('the values of a multi-valued field are 100 positions apart', async () => {
    expect(await scored({ match: { query: 'wet outside', max_gaps: 99 } })).toEqual([['4', 0.16666669]])
    expect(await scored({ match: { query: 'wet outside', max_gaps: 100 } })).toEqual([
      ['4', 0.16666669],
      ['7', 0.009803951],
    ])
  })

  test('all_of over an any_of, without overlaps', async () => {
    const either = { any_of: { intervals: [{ match: { query: 'cold' } }, { match: { query: 'hot' } }] } }
    expect(await scored({ all_of: { intervals: [either, { match: { query: 'cold' } }], mode: 'unordered_no_overlap' } })).toEqual([
      ['8', 0.6666666],
      ['6', 0.5],
      ['1', 0.14285713],
    ])
  })

  test('filters', async () => {
    const cold = (filter: Record<string, unknown>) => scored({ match: { query: 'cold', filter } })
    expect(await cold({ before: { match: { query: 'outside' } } })).toEqual([
      ['2', 0.5],
      ['3', 0.5],
      ['7', 0.5],
    ])
    expect(await cold({ after: { match: { query: 'outside' } } })).toEqual([['4', 0.5]])
    expect(await scored({ match: { query: 'is', filter: { contained_by: { match: { query: 'cold outside' } } } } })).toEqual([['4', 0.5]])
    expect(await scored({ match: { query: 'cold wet', filter: { not_containing: { match: { query: 'and' } } } } })).toEqual([
      ['7', 0.5],
      ['8', 0.5],
      ['5', 0.19999999],
    ])
  })

  test('prefix, wildcard and fuzzy are lower-cased as the field is; regexp is not unless case_insensitive', async () => {
    expect(await scored({ all_of: { intervals: [{ fuzzy: { term: 'cald' } }, { prefix: { prefix: 'OUT' } }] } })).toEqual([
      ['2', 0.5],
      ['3', 0.3333333],
      ['4', 0.25],
      ['7', 0.009708703],
    ])
    expect(
      await scored({ all_of: { intervals: [{ match: { query: 'cold' } }, { wildcard: { pattern: 'out?ide' } }], mode: 'ordered' } }),
    ).toEqual([
      ['2', 0.5],
      ['3', 0.3333333],
      ['7', 0.009708703],
    ])
    expect(await scored({ regexp: { pattern: 'AT[a-z]{2,}HERE' } })).toEqual([])
    expect(await scored({ regexp: { pattern: 'AT[a-z]{2,}HERE', case_insensitive: true } })).toEqual([['2', 0.5]])
  })

  test('an unmapped field (or use_field) matches nothing', async () => {
    const r = await ok(api.call('admin', 'POST', '/iv/_search', { query: { intervals: { nope: { match: { query: 'cold' } } } } }))
    expect(r.hits.total.value).toBe(0)
    expect(await scored({ match: { query: 'cold', use_field: 'nope' } })).toEqual([])
  })
})

describe('intervals: refusals', () => {
  test('malformed rules are 400s with OpenSearch’s parse errors', async () => {
    expect(await refused({ intervals: { text: { bogus: {} } } })).toEqual([
      'parsing_exception',
      'Unknown interval type [bogus], expecting one of [match, any_of, all_of, prefix, wildcard, regexp]',
    ])
    expect(await refused({ intervals: { text: {} } })).toEqual(['parsing_exception', 'Missing intervals from interval query definition'])
    expect(await refused({ intervals: { text: { match: { query: 'a' }, prefix: { prefix: 'b' } } } })).toEqual([
      'parsing_exception',
      'Only one interval rule can be specified, found [match] and [prefix]',
    ])
    expect(await refused({ intervals: { text: { match: {} } } })).toEqual(['illegal_argument_exception', 'Required [query]'])
    expect(await refused({ intervals: { text: { match: { query: 'a', bogus: 1 } } } })).toEqual([
      'x_content_parse_exception',
      '[match] unknown field [bogus]',
    ])
    expect(await refused({ intervals: { text: { match: { query: 'a', mode: 'weird' } } } })).toEqual([
      'x_content_parse_exception',
      'Failed to build [match] after last required field arrived',
    ])
    // The root cause is the innermost parse error.
    expect(await refused({ intervals: { text: { all_of: { intervals: [{}] } } } })).toEqual([
      'parsing_exception',
      'Expected [FIELD_NAME] but got [END_OBJECT]',
    ])
  })

  test('what the field cannot do is refused when the query is created', async () => {
    expect(await refused({ intervals: { kw: { match: { query: 'x' } } } })).toEqual([
      'query_shard_exception',
      'failed to create query: Can only use interval queries on text fields - not on [kw] which is of type [keyword]',
    ])
    expect(await refused({ intervals: { text: { match: { query: 'x', filter: { weird: { match: { query: 'y' } } } } } } })).toEqual([
      'query_shard_exception',
      'failed to create query: Unknown filter type [weird]',
    ])
    expect(await refused({ intervals: { text: { fuzzy: { term: 'cold', prefix_length: -1 } } } })).toEqual([
      'query_shard_exception',
      'failed to create query: prefixLength cannot be negative.',
    ])
  })

  test('every term of the (pulled-up) source counts towards the clause limit, past one more than it', async () => {
    const anyOf = (n: number) => ({ any_of: { intervals: Array.from({ length: n }, (_, i) => ({ match: { query: `w${i}` } })) } })
    expect((await ok(search(anyOf(1025)))).hits.total.value).toBe(0)
    // OpenSearch answers 500 here; bad input is a 400 on this server.
    expect(await refused({ intervals: { text: anyOf(1026) } })).toEqual([
      'too_many_nested_clauses',
      'Query contains too many nested clauses; maxClauseCount is set to 1024',
    ])
  })

  test('a script filter is refused: no scripts run here', async () => {
    const [type] = await refused({
      intervals: { text: { match: { query: 'cold', filter: { script: { source: 'interval.start > 1' } } } } },
    })
    expect(type).toBe('illegal_argument_exception')
  })

  test('a multi-term rule stands for at most 128 terms of the index (max_expansions up to the clause limit)', async () => {
    await ok(api.call('admin', 'PUT', '/iv-many', { mappings: { properties: { t: { type: 'text' } } } }))
    await indexDocs(
      api,
      'iv-many',
      Array.from({ length: 200 }, (_, i) => ({ _id: String(i), t: `pre${String(i).padStart(3, '0')} word${i % 3}` })),
    )
    const many = (rule: unknown) => api.call('admin', 'POST', '/iv-many/_search', { query: { intervals: { t: rule } }, size: 0 })
    const r = await many({ prefix: { prefix: 'pre' } })
    // OpenSearch fails the shard with Lucene's IllegalStateException, a 500; bad input is a 400 here.
    expect(r.status).toBe(400)
    expect(r.body.error.root_cause[0]).toEqual({
      type: 'illegal_state_exception',
      reason: 'Automaton [pre*] expanded to too many terms (limit 128)',
    })
    expect((await ok(many({ prefix: { prefix: 'pre1' } }))).hits.total.value).toBe(100)
    expect((await ok(many({ wildcard: { pattern: 'pre*', max_expansions: 500 } }))).hits.total.value).toBe(200)
    // pre100 within two edits: 128 terms, just within the limit.
    expect((await ok(many({ fuzzy: { term: 'pre100', fuzziness: 2 } }))).hits.total.value).toBe(128)
    const big = await many({ wildcard: { pattern: 'pre*', max_expansions: 5000 } })
    expect(big.status).toBe(400)
    expect(big.body.error.reason).toBe(
      'failed to create query: maxExpansions [5000] cannot be greater than BooleanQuery.getMaxClauseCount [1024]',
    )
  })
})

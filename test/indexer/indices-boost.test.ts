// indices_boost over real HTTP, answered as OpenSearch 3.4 answers it (each expectation read from a
// real node): a factor per index named by index, alias or wildcard, the first entry naming an
// index winning, a missing name a 404 unless ignore_unavailable, malformed entries OpenSearch's 400s.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({
    roles: `
_meta: { type: roles, config_version: 2 }
only_one:
  index_permissions:
    - index_patterns: ["ib_1"]
      allowed_actions: ["read"]
`,
    users: { admin: { roles: ['all_access'] }, reader: { roles: ['only_one'] } },
  })
  for (const index of ['ib_1', 'ib_2']) {
    await api.call('admin', 'PUT', `/${index}`, { mappings: { properties: { foo: { type: 'text' } } } })
    await api.call('admin', 'PUT', `/${index}/_doc/1?refresh=true`, { foo: 'bar baz' })
  }
  await api.call('admin', 'PUT', '/ib_1/_doc/2?refresh=true', { foo: 'bar' })
  await api.call('admin', 'PUT', '/ib_1/_alias/ibalias_1')
})

afterAll(async () => {
  await api?.stop()
})

const hits = async (body: unknown, query = '', user = 'admin') => {
  const r = await api.call(user, 'POST', `/ib_1,ib_2/_search${query}`, body)
  return r.status === 200
    ? r.body.hits.hits.map((h: any) => [h._index, h._id, h._score])
    : [r.status, r.body.error.type, r.body.error.reason]
}

describe('indices_boost', () => {
  test('each index scores by its factor, named by index, alias or wildcard; the first entry naming an index wins', async () => {
    expect(await hits({ indices_boost: [{ ib_1: 2.0 }, { ib_2: 1.0 }] })).toEqual([
      ['ib_1', '1', 2],
      ['ib_1', '2', 2],
      ['ib_2', '1', 1],
    ])
    expect(await hits({ indices_boost: { ib_1: 1, ib_2: 3 } })).toEqual([
      ['ib_2', '1', 3],
      ['ib_1', '1', 1],
      ['ib_1', '2', 1],
    ])
    expect(await hits({ indices_boost: [{ 'ib_*': 3 }, { ib_2: 1 }] })).toEqual([
      ['ib_1', '1', 3],
      ['ib_1', '2', 3],
      ['ib_2', '1', 3],
    ])
    expect(await hits({ indices_boost: [{ ibalias_1: 0.5 }] })).toEqual([
      ['ib_2', '1', 1],
      ['ib_1', '1', 0.5],
      ['ib_1', '2', 0.5],
    ])
  })

  test('relevance scores are multiplied, in ranked and in score-sorted searches', async () => {
    const plain = await hits({ query: { match: { foo: 'bar' } } })
    const boosted = await hits({ query: { match: { foo: 'bar' } }, indices_boost: [{ ib_2: 2 }] })
    const ib2 = (rows: any[]) => rows.find((r) => r[0] === 'ib_2')[2]
    expect(ib2(boosted)).toBeCloseTo(2 * ib2(plain), 6)
    expect(boosted[0][0]).toBe('ib_2')
    const sorted = await api.call('admin', 'POST', '/ib_1,ib_2/_search', {
      query: { match: { foo: 'bar' } },
      indices_boost: [{ ib_2: 2 }],
      sort: ['_score', { _id: 'asc' }],
    })
    expect(sorted.body.hits.hits[0]._score).toBeCloseTo(2 * ib2(plain), 6)
  })

  test('a name that resolves to nothing is a 404 unless ignore_unavailable', async () => {
    expect(await hits({ indices_boost: [{ nonexistent: 2 }, { ib_1: 2 }] })).toEqual([
      404,
      'index_not_found_exception',
      'no such index [nonexistent]',
    ])
    expect(await hits({ indices_boost: [{ nonexistent: 2 }, { ib_2: 2 }] }, '?ignore_unavailable=true')).toEqual([
      ['ib_2', '1', 2],
      ['ib_1', '1', 1],
      ['ib_1', '2', 1],
    ])
  })

  test('an index the caller cannot read may be named: it boosts nothing the caller reads', async () => {
    expect((await api.call('reader', 'POST', '/ib_2/_search', {})).status).toBe(403)
    const r = await api.call('reader', 'POST', '/ib_1/_search', { indices_boost: [{ ib_2: 5 }, { ib_1: 2 }] })
    expect(r.body.hits.hits.map((h: any) => [h._index, h._score])).toEqual([
      ['ib_1', 2],
      ['ib_1', 2],
    ])
  })

  test('malformed entries are the 400s of OpenSearch parser', async () => {
    const reason = async (indices_boost: unknown) => (await hits({ indices_boost }))[2]
    expect(await reason('x')).toBe('Unknown key for a VALUE_STRING in [indices_boost].')
    expect(await reason(5)).toBe('Unknown key for a VALUE_NUMBER in [indices_boost].')
    expect(await reason([{ ib_1: 'x' }])).toBe('Expected [VALUE_NUMBER] in [indices_boost] but found [VALUE_STRING]')
    expect(await reason([{ ib_1: null }])).toBe('Expected [VALUE_NUMBER] in [indices_boost] but found [VALUE_NULL]')
    expect(await reason([{ ib_1: 1, ib_2: 2 }])).toBe('Expected [END_OBJECT] in [indices_boost] but found [FIELD_NAME]')
    expect(await reason([{}])).toBe('Expected [FIELD_NAME] in [indices_boost] but found [END_OBJECT]')
    expect(await reason([5])).toBe('Expected [START_OBJECT] in [null] but found [VALUE_NUMBER]')
  })
})

// The `wildcard` field type and the `lowercase` normalizer over real HTTP. Every expected value is
// what OpenSearch 3.4 answered to the same requests (a node started with scripts/opensearch/start.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startIndexApi, type TestServer } from './helpers'

let api: TestServer

async function ids(query: unknown): Promise<string[]> {
  const r = await api.call('admin', 'POST', '/w1/_search', { query, size: 100 })
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.hits.hits.map((h: any) => h._id).sort()
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/w1', {
    mappings: {
      properties: {
        a: { type: 'wildcard' },
        b: { type: 'wildcard', normalizer: 'lowercase' },
        c: { type: 'wildcard', doc_values: false },
        d: { type: 'keyword', normalizer: 'lowercase' },
        e: { type: 'wildcard', fields: { x: { type: 'wildcard' } } },
      },
    },
  })
  await api.call('admin', 'PUT', '/w1/_doc/1?refresh=true', { a: 'AbCd', b: 'AbCd XyZ', c: 'AbCd', d: 'AbCd' })
  await api.call('admin', 'PUT', '/w1/_doc/2?refresh=true', { a: 'abcd', b: 'abcd xyz', c: 'abcd', d: 'abcd' })
})

afterAll(async () => {
  await api?.stop()
})

test('GET _mapping shows a wildcard field with doc_values (true unless set), after its normalizer', async () => {
  const r = await api.call('admin', 'GET', '/w1/_mapping')
  expect(r.body.w1.mappings.properties).toEqual({
    a: { type: 'wildcard', doc_values: true },
    b: { type: 'wildcard', normalizer: 'lowercase', doc_values: true },
    c: { type: 'wildcard', doc_values: false },
    d: { type: 'keyword', normalizer: 'lowercase' },
    e: { type: 'wildcard', doc_values: true, fields: { x: { type: 'wildcard', doc_values: true } } },
  })
  expect(Object.keys(r.body.w1.mappings.properties.b)).toEqual(['type', 'normalizer', 'doc_values'])
})

describe('a lowercase-normalized wildcard field', () => {
  test('term, prefix, wildcard, regexp and match compare normalized values', async () => {
    expect(await ids({ term: { b: 'ABCD XYZ' } })).toEqual(['1', '2'])
    expect(await ids({ term: { b: { value: 'ABCD XYZ', case_insensitive: true } } })).toEqual(['1', '2'])
    expect(await ids({ prefix: { b: 'ABC' } })).toEqual(['1', '2'])
    expect(await ids({ wildcard: { b: '*D X*' } })).toEqual(['1', '2'])
    expect(await ids({ wildcard: { b: { value: 'ABC*', case_insensitive: false } } })).toEqual(['1', '2'])
    expect(await ids({ regexp: { b: 'A.*' } })).toEqual(['1', '2'])
    expect(await ids({ regexp: { b: '[A-Z]+ .*' } })).toEqual(['1', '2'])
    expect(await ids({ match: { b: 'ABCD xyz' } })).toEqual(['1', '2'])
    expect(await ids({ match: { b: 'abcd' } })).toEqual([])
    expect(await ids({ match_phrase: { b: 'ABCD XYZ' } })).toEqual(['1', '2'])
    expect(await ids({ query_string: { query: 'b:ABCD*' } })).toEqual(['1', '2'])
  })

  test('a regexp pattern is lowercased whole: \\W becomes \\w, \\S becomes \\s', async () => {
    expect(await ids({ regexp: { b: '\\W.*' } })).toEqual(['1', '2'])
    expect(await ids({ regexp: { b: '.*\\S' } })).toEqual([])
  })

  test('terms is the exception: its values are compared as given', async () => {
    expect(await ids({ terms: { b: ['ABCD XYZ'] } })).toEqual([])
    expect(await ids({ terms: { b: ['abcd xyz'] } })).toEqual(['1', '2'])
  })
})

test('a lowercase-normalized keyword field normalizes terms and range values too', async () => {
  expect(await ids({ term: { d: 'ABCD' } })).toEqual(['1', '2'])
  expect(await ids({ terms: { d: ['ABCD'] } })).toEqual(['1', '2'])
  expect(await ids({ prefix: { d: 'ABC' } })).toEqual(['1', '2'])
  expect(await ids({ wildcard: { d: 'ABC*' } })).toEqual(['1', '2'])
  expect(await ids({ regexp: { d: 'ABC.*' } })).toEqual(['1', '2'])
  expect(await ids({ match: { d: 'ABCD' } })).toEqual(['1', '2'])
  expect(await ids({ range: { d: { gte: 'ABCD', lte: 'ABCD' } } })).toEqual(['1', '2'])
})

test('without a normalizer, values compare as written (doc_values or not)', async () => {
  expect(await ids({ match: { a: 'AbCd' } })).toEqual(['1'])
  expect(await ids({ term: { c: 'AbCd' } })).toEqual(['1'])
  expect(await ids({ wildcard: { c: 'AbC*' } })).toEqual(['1'])
})

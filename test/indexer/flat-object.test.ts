// flat_object over the real index API: queries on the root and on dotted paths (`_search`,
// `q=`, `_count`), a DLS role whose query reads a path, the mapping holding the root only, the
// aggregations OpenSearch answers, and OpenSearch's 400s for what it refuses.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const DOCS: Record<string, Record<string, unknown>> = {
  1: { host: 'a', sd: { origin: { ip: '10.0.0.1' }, meta: { sequenceId: '7', team: 'blue' } } },
  2: { host: 'b', sd: { origin: { ip: '10.0.0.2' }, meta: { sequenceId: '12', team: 'red' } } },
  3: { host: 'c', sd: { 'origin.ip': '10.0.0.1', exampleSDID: { iut: 3, eventSource: 'Application' } } },
  4: { host: 'd' },
}

const ids = async (user: string, body: Record<string, unknown>, path = '/logs/_search') => {
  const r = await api.call(user, 'POST', path, { size: 100, ...body })
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return (r.body.hits.hits as any[]).map((h) => h._id).sort()
}

beforeAll(async () => {
  api = await startIndexApi({
    roles: `
_meta: { type: roles, config_version: 2 }
blue_team:
  index_permissions:
    - index_patterns: ["logs"]
      allowed_actions: ["read"]
      dls: '{"term": {"sd.meta.team": "blue"}}'
`,
    users: { admin: { roles: ['all_access'] }, bob: { roles: ['blue_team'] } },
  })
  const put = await api.call('admin', 'PUT', '/logs', {
    mappings: { properties: { host: { type: 'keyword' }, sd: { type: 'flat_object' } } },
  })
  expect(put.status).toBe(200)
  const lines = Object.entries(DOCS).flatMap(([id, d]) => [{ index: { _id: id } }, d])
  const bulk = await api.call('admin', 'POST', '/logs/_bulk?refresh=true', ndjson(lines))
  expect(bulk.body.errors).toBe(false)
})

afterAll(async () => {
  await api?.stop()
})

describe('flat_object over the index API', () => {
  test('the root matches any leaf, a dotted path the leaves at that path', async () => {
    expect(await ids('admin', { query: { term: { sd: '10.0.0.1' } } })).toEqual(['1', '3'])
    expect(await ids('admin', { query: { term: { 'sd.origin.ip': '10.0.0.1' } } })).toEqual(['1', '3'])
    expect(await ids('admin', { query: { term: { 'sd.meta.sequenceId': '10.0.0.1' } } })).toEqual([])
    expect(await ids('admin', { query: { match: { 'sd.exampleSDID.eventSource': 'Application' } } })).toEqual(['3'])
    expect(await ids('admin', { query: { term: { 'sd.exampleSDID.iut': 3 } } })).toEqual(['3'])
    expect(await ids('admin', { query: { prefix: { 'sd.origin.ip': '10.0.0.' } } })).toEqual(['1', '2', '3'])
    expect(await ids('admin', { query: { wildcard: { sd: 'Appl*' } } })).toEqual(['3'])
    expect(await ids('admin', { query: { exists: { field: 'sd.meta.team' } } })).toEqual(['1', '2'])
    // Keyword order: "12" < "7".
    expect(await ids('admin', { query: { range: { 'sd.meta.sequenceId': { lt: '7' } } } })).toEqual(['2'])
    expect(await ids('admin', {}, '/logs/_search?q=sd.meta.team:red')).toEqual(['2'])
    const count = await api.call('admin', 'POST', '/logs/_count', { query: { terms: { 'sd.meta.team': ['blue', 'red'] } } })
    expect(count.body.count).toBe(2)
  })

  test('a DLS query on a path hides the other documents from every read', async () => {
    expect(await ids('bob', { query: { match_all: {} } })).toEqual(['1'])
    expect(await ids('bob', { query: { term: { 'sd.origin.ip': '10.0.0.1' } } })).toEqual(['1'])
    expect((await api.call('bob', 'POST', '/logs/_count', { query: { exists: { field: 'sd' } } })).body.count).toBe(1)
    expect((await api.call('bob', 'GET', '/logs/_doc/2')).status).toBe(404)
  })

  test('GET _mapping shows the root only; paths are not fields of their own', async () => {
    const r = await api.call('admin', 'GET', '/logs/_mapping')
    expect(r.body.logs.mappings.properties).toEqual({ host: { type: 'keyword' }, sd: { type: 'flat_object' } })
  })

  test('terms aggregations on a path; on the root a 400 as OpenSearch answers it', async () => {
    const r = await api.call('admin', 'POST', '/logs/_search', { size: 0, aggs: { t: { terms: { field: 'sd.origin.ip' } } } })
    expect(r.body.aggregations.t.buckets).toEqual([
      { key: '10.0.0.1', doc_count: 2 },
      { key: '10.0.0.2', doc_count: 1 },
    ])
    const root = await api.call('admin', 'POST', '/logs/_search', { size: 0, aggs: { t: { terms: { field: 'sd' } } } })
    expect(root.status).toBe(400)
    expect(root.body.error.type).toBe('illegal_argument_exception')
  })

  test('a value that is not an object is a 400 mapper_parsing_exception', async () => {
    const r = await api.call('admin', 'PUT', '/logs/_doc/bad', { sd: 'notobject' })
    expect(r.status).toBe(400)
    expect(r.body.error.type).toBe('mapper_parsing_exception')
    expect(r.body.error.reason).toBe(
      "failed to parse field [sd] of type [flat_object] in document with id 'bad'. Preview of field's value: 'notobject'",
    )
    expect(r.body.error.caused_by).toEqual({
      type: 'parsing_exception',
      reason: '[sd] unexpected token [VALUE_STRING] in flat_object field value',
    })
  })
})

// `ignore_malformed` (field and index level) over real HTTP: the document is kept, the value is
// skipped by queries and stored fields, and `_ignored` lists the field in hits, GET and queries,
// in the order OpenSearch 3.4 lists it (checked against it with these documents).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  const mappings = {
    properties: {
      my_date: { type: 'date', ignore_malformed: true, store: true },
      my_ip: { type: 'ip', ignore_malformed: true },
      n: { type: 'integer', ignore_malformed: true },
      b: { type: 'boolean' },
    },
  }
  expect((await api.call('admin', 'PUT', '/im', { mappings })).status).toBe(200)
  const level = {
    settings: { 'index.mapping.ignore_malformed': true },
    mappings: { properties: { d: { type: 'date', ignore_malformed: false }, ip: { type: 'ip' } } },
  }
  expect((await api.call('admin', 'PUT', '/level', level)).status).toBe(200)
  for (const [id, doc] of [
    ['1', { my_date: '2018-05-11', my_ip: ':::1' }],
    ['2', { my_date: 'bar', my_ip: '192.168.1.42', n: [1, 'x', 3e10] }],
    ['3', { my_date: 'bar', my_ip: 'quux' }],
    ['4', { my_date: '2020-01-01', my_ip: '10.0.0.1', n: 7 }],
  ] as const)
    expect((await api.call('admin', 'PUT', `/im/_doc/${id}?refresh=true`, doc)).status).toBe(201)
})

afterAll(async () => {
  await api?.stop()
})

const ids = (r: any) => r.body.hits.hits.map((h: any) => [h._id, h._ignored])

describe('ignore_malformed', () => {
  test('malformed values are skipped, the documents kept; _ignored lists their fields', async () => {
    const r = await api.call('admin', 'POST', '/im/_search', { query: { exists: { field: '_ignored' } }, sort: ['_doc'] })
    expect(ids(r)).toEqual([
      ['1', ['my_ip']],
      ['2', ['my_date', 'n']],
      ['3', ['my_ip', 'my_date']],
    ])
    const term = await api.call('admin', 'POST', '/im/_search', { query: { term: { _ignored: 'my_date' } }, sort: ['_doc'] })
    expect(ids(term).map(([id]: [string]) => id)).toEqual(['2', '3'])
    // The skipped values are in no query: only the values that fit answer the range.
    const range = await api.call('admin', 'POST', '/im/_search', { query: { range: { n: { gte: 0 } } }, sort: ['_doc'] })
    expect(ids(range).map(([id]: [string]) => id)).toEqual(['2', '4'])
  })

  test('GET shows _ignored; a stored malformed value is not returned; no _ignored when every value fits', async () => {
    const got = await api.call('admin', 'GET', '/im/_doc/2')
    expect(got.body._ignored).toEqual(['my_date', 'n'])
    expect(Object.keys(got.body)).toEqual(['_index', '_id', '_version', '_seq_no', '_primary_term', '_ignored', 'found', '_source'])
    expect((await api.call('admin', 'GET', '/im/_doc/4')).body._ignored).toBeUndefined()
    const stored = await api.call('admin', 'POST', '/im/_search?stored_fields=my_date', {
      query: { ids: { values: ['3', '4'] } },
      sort: ['_doc'],
    })
    expect(stored.body.hits.hits.map((h: any) => h.fields)).toEqual([undefined, { my_date: ['2020-01-01T00:00:00.000Z'] }])
  })

  test('the index setting applies to fields without their own; a field false still refuses; booleans are never ignored', async () => {
    expect((await api.call('admin', 'PUT', '/level/_doc/1', { ip: 'quux' })).status).toBe(201)
    const refused = await api.call('admin', 'PUT', '/level/_doc/2', { d: 'bar' })
    expect(refused.status).toBe(400)
    expect(refused.body.error.reason).toContain('failed to parse field [d] of type [date]')
    expect((await api.call('admin', 'PUT', '/im/_doc/9', { b: 'maybe' })).status).toBe(400)
  })

  test('_ignored has no field data for aggregations', async () => {
    const r = await api.call('admin', 'POST', '/im/_search', { size: 0, aggs: { t: { terms: { field: '_ignored' } } } })
    expect(r.status).toBe(400)
    expect(r.body.error.reason).toBe('Fielddata is not supported on field [_ignored] of type [_ignored]')
  })
})

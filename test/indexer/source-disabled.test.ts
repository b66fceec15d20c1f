// An index whose mapping disables `_source` over real HTTP: no source is shown, what needs one is
// refused, what OpenSearch reads from doc values still answers. Every expected value is what
// OpenSearch 3.4 answered to the same requests (a node started with scripts/opensearch/start.ts).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ndjson, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer
const call = (method: string, path: string, body?: unknown) => api.call('admin', method, path, body)
const root = (r: { body: any }) => [r.body.error?.root_cause?.[0]?.type, r.body.error?.root_cause?.[0]?.reason]

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(
    call('PUT', '/nosrc', {
      mappings: { _source: { enabled: false }, properties: { a: { type: 'keyword' }, n: { type: 'long' }, t: { type: 'text' } } },
    }),
  )
  await ok(call('PUT', '/nosrc/_doc/1?refresh=true', { a: 'x', n: 5, t: 'hello world' }), 201)
})
afterAll(() => api?.stop())

test('get, mget and searches answer no source; the _source endpoint answers 404', async () => {
  expect(await ok(call('GET', '/nosrc/_doc/1?_source_includes=a'))).toEqual({
    _index: 'nosrc',
    _id: '1',
    _version: 1,
    _seq_no: 0,
    _primary_term: 1,
    found: true,
  })
  expect((await ok(call('POST', '/_mget', { docs: [{ _index: 'nosrc', _id: '1' }] }))).docs[0]._source).toBeUndefined()
  const hits = (await ok(call('POST', '/nosrc/_search', { query: { match: { t: 'hello' } }, _source: true }))).hits.hits
  expect(hits.map((h: any) => [h._id, h._source])).toEqual([['1', undefined]])
  const source = await call('GET', '/nosrc/_source/1')
  expect([source.status, ...root(source)]).toEqual([404, 'resource_not_found_exception', 'Source not found [nosrc]/[1]'])
  expect((await call('HEAD', '/nosrc/_source/1')).status).toBe(404)
  // A document that is not there is still "Document not found".
  expect(root(await call('GET', '/nosrc/_source/9'))).toEqual(['resource_not_found_exception', 'Document not found [nosrc]/[9]'])
})

test('the _source endpoint refuses `_source=false` on any index', async () => {
  await ok(call('PUT', '/withsrc/_doc/1?refresh=true', { a: 'x' }), 201)
  for (const index of ['nosrc', 'withsrc']) {
    const r = await call('GET', `/${index}/_source/1?_source=false`)
    expect([r.status, ...root(r)]).toEqual([
      400,
      'action_request_validation_exception',
      'Validation Failed: 1: fetching source can not be disabled;',
    ])
  }
})

test('doc values still answer (docvalue_fields, collapse); highlights need a source and give none', async () => {
  const dv = await ok(call('POST', '/nosrc/_search', { query: { term: { a: 'x' } }, docvalue_fields: ['n'], sort: ['n'] }))
  expect(dv.hits.hits.map((h: any) => [h._id, h._source, h.fields, h.sort])).toEqual([['1', undefined, { n: [5] }, [5]]])
  const collapsed = await ok(call('POST', '/nosrc/_search', { collapse: { field: 'a' } }))
  expect(collapsed.hits.hits.map((h: any) => [h._id, h._source, h.fields])).toEqual([['1', undefined, { a: ['x'] }]])
  const lit = await ok(call('POST', '/nosrc/_search', { query: { match: { t: 'hello' } }, highlight: { fields: { t: {} } } }))
  expect(lit.hits.hits.map((h: any) => [h._id, h._source, h.highlight])).toEqual([['1', undefined, undefined]])
})

test('a source filter is refused, beside the extras too', async () => {
  const reason = 'unable to fetch fields from _source field: _source is disabled in the mappings for index [nosrc]'
  for (const [path, body] of [
    ['/nosrc/_search', { _source: ['a'] }],
    ['/nosrc/_search?_source_includes=a', undefined],
    ['/nosrc/_search', { _source: { excludes: ['t'] }, docvalue_fields: ['n'] }],
    ['/nosrc/_search', { size: 0, aggs: { h: { top_hits: { _source: ['a'] } } } }],
  ] as const) {
    const r = await call('POST', path, body)
    expect([r.status, r.body.error?.type, ...root(r)]).toEqual([
      400,
      'search_phase_execution_exception',
      'illegal_argument_exception',
      reason,
    ])
  }
})

test('updates (partial, scripted, in a bulk), update_by_query and reindex are refused; a new document is upserted', async () => {
  const missing = ['document_source_missing_exception', '[1]: document source missing']
  for (const body of [{ doc: { a: 'y' } }, { script: { source: 'ctx._source.n += 1' } }, { doc: { a: 'y' }, upsert: { a: 'q' } }]) {
    const r = await call('POST', '/nosrc/_update/1', body)
    expect([r.status, ...root(r)]).toEqual([400, ...missing])
  }
  const bulk = await ok(call('POST', '/_bulk', ndjson([{ update: { _index: 'nosrc', _id: '1' } }, { doc: { a: 'z' } }])))
  expect([bulk.items[0].update.status, bulk.items[0].update.error.type]).toEqual([400, missing[0]])
  for (const [path, body] of [
    ['/nosrc/_update_by_query', {}],
    ['/_reindex', { source: { index: 'nosrc' }, dest: { index: 'nosrc-copy' } }],
  ] as const) {
    const r = await call('POST', path, body)
    expect([r.status, ...root(r)]).toEqual([400, 'illegal_argument_exception', "[nosrc][1] didn't store _source"])
  }
  // Nothing was written: the document keeps its values, which queries still find.
  const found = await ok(call('POST', '/nosrc/_search', { query: { term: { a: 'x' } }, docvalue_fields: ['n'] }))
  expect(found.hits.hits.map((h: any) => h.fields)).toEqual([{ n: [5] }])
  expect((await ok(call('POST', '/nosrc/_update/2?refresh=true', { doc: { a: 'y' }, doc_as_upsert: true }), 201)).result).toBe('created')
  expect((await ok(call('POST', '/nosrc/_delete_by_query?refresh=true', { query: { term: { a: 'y' } } }))).deleted).toBe(1)
})

// Ingest pipelines are not supported yet (issue 29 item 8e), over real HTTP: a request naming one is
// refused with OpenSearch's error for a pipeline that does not exist, never written without it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../helpers/server'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server?.stop())

const MISSING = { type: 'illegal_argument_exception', reason: 'pipeline with id [p1] does not exist' }
const ndjson = (lines: unknown[]) => ({
  body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
  headers: { 'content-type': 'application/x-ndjson' },
})

describe('?pipeline= on writes', () => {
  test('index with a missing pipeline: 400 with OpenSearch error, nothing written', async () => {
    for (const path of ['/pl-a/_doc/1?pipeline=p1', '/pl-a/_doc?pipeline=p1', '/pl-a/_create/2?pipeline=p1']) {
      const r = await server.request(path.includes('_create') || path.endsWith('/1?pipeline=p1') ? 'PUT' : 'POST', path, { body: { a: 1 } })
      expect(r.status).toBe(400)
      expect(r.body).toEqual({ error: { root_cause: [MISSING], ...MISSING }, status: 400 })
    }
    expect((await server.request('GET', '/pl-a/_doc/1')).status).toBe(404)
    const none = await server.request('PUT', '/pl-a/_doc/3?pipeline=_none&refresh=true', { body: { a: 3 } })
    expect(none.status).toBe(201)
  })

  test('bulk: the items that would run a pipeline fail alone, each with the error', async () => {
    const r = await server.request(
      'POST',
      '/_bulk?pipeline=p1&refresh=true',
      ndjson([
        { index: { _index: 'pl-b', _id: '1' } },
        { a: 1 },
        { create: { _index: 'pl-b', _id: '2', pipeline: '_none' } },
        { a: 2 },
        { delete: { _index: 'pl-b', _id: '9' } },
      ]),
    )
    expect(r.status).toBe(200)
    expect(r.body.errors).toBe(true)
    expect(r.body.items[0].index).toMatchObject({ _id: '1', status: 400, error: MISSING })
    expect(r.body.items[1].create).toMatchObject({ _id: '2', status: 201 })
    expect(r.body.items[2].delete.status).toBe(404)
    const item = await server.request('POST', '/_bulk', ndjson([{ index: { _index: 'pl-b', _id: '3', pipeline: 'p1' } }, { a: 3 }]))
    expect(item.body.items[0].index).toMatchObject({ status: 400, error: MISSING })
    expect((await server.request('GET', '/pl-b/_doc/1')).status).toBe(404)
  })

  test('reindex into a pipeline and update_by_query through one are refused', async () => {
    const re = await server.request('POST', '/_reindex', { body: { source: { index: 'pl-a' }, dest: { index: 'pl-c', pipeline: 'p1' } } })
    expect(re.status).toBe(400)
    expect(re.body.error).toMatchObject(MISSING)
    const ubq = await server.request('POST', '/pl-a/_update_by_query?pipeline=p1')
    expect(ubq.status).toBe(400)
    expect(ubq.body.error).toMatchObject(MISSING)
  })
})

describe('GET _ingest/pipeline', () => {
  test('lists none; a named one is 404 with an empty object', async () => {
    const all = await server.request('GET', '/_ingest/pipeline')
    expect(all.status).toBe(200)
    expect(all.body).toEqual({})
    const one = await server.request('GET', '/_ingest/pipeline/p1')
    expect(one.status).toBe(404)
    expect(one.body).toEqual({})
  })
})

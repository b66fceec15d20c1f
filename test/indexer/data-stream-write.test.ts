// Issue 14 item 6: an auto-id write to a data stream is op_type=create, as in OpenSearch,
// through the index API and through the Store itself.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  const tpl = await api.call('admin', 'PUT', '/_index_template/events-tpl', {
    index_patterns: ['events-*'],
    data_stream: {},
    priority: 100,
  })
  expect(tpl.status).toBe(200)
})

afterAll(async () => {
  await api?.stop()
})

test('POST <data stream>/_doc without an id creates the document (and the stream)', async () => {
  const res = await api.call('admin', 'POST', '/events-a/_doc?refresh=true', { '@timestamp': '2026-01-01T00:00:00Z', n: 1 })
  expect(res.status).toBe(201)
  expect(res.body.result).toBe('created')
  expect(res.body._index).toStartWith('.ds-events-a-')
  expect((await api.call('admin', 'GET', '/events-a/_count')).body.count).toBe(1)
  // An explicit op_type=index keeps its meaning, and a data stream refuses it.
  const explicit = await api.call('admin', 'POST', '/events-a/_doc?op_type=index', { '@timestamp': '2026-01-01T00:00:00Z' })
  expect(explicit.status).toBe(400)
  // A plain index still takes auto-id writes.
  expect((await api.call('admin', 'POST', '/plain/_doc', { n: 1 })).status).toBe(201)
})

test('the Store: index() without an id into a data stream is a create', async () => {
  const res = await api.store.index({ index: 'events-a', body: { '@timestamp': '2026-01-02T00:00:00Z', n: 2 }, refresh: true })
  expect(res.result).toBe('created')
  await expect(api.store.index({ index: 'events-a', op_type: 'index', body: { '@timestamp': '2026-01-02T00:00:00Z' } })).rejects.toThrow(
    'op_type of create',
  )
})

// `_stats` and `_nodes/stats` over real HTTP: the counters move with what is done to an index
// (indexing, get, search and its stats groups, refresh, flush and the translog), levels, and the
// status counter of document writes and searches.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const stats = async (path: string) => {
  const r = await api.call('admin', 'GET', path)
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  expect((await api.call('admin', 'PUT', '/s1', { mappings: { properties: { n: { type: 'long' } } } })).status).toBe(200)
  expect((await api.call('admin', 'PUT', '/s2')).status).toBe(200)
})

afterAll(async () => {
  await api?.stop()
})

describe('indices stats', () => {
  test('indexing, deletes, noop updates and failures are counted per index', async () => {
    const before = (await stats('/s1/_stats/indexing')).indices.s1.primaries.indexing
    expect(before.index_total).toBe(0)
    await api.call('admin', 'PUT', '/s1/_doc/1', { n: 1 })
    await api.call('admin', 'PUT', '/s1/_doc/2', { n: 2 })
    await api.call('admin', 'POST', '/s1/_update/1', { doc: { n: 1 } }) // changes nothing: a noop
    await api.call('admin', 'DELETE', '/s1/_doc/2')
    // Refused by the mapping (not counted as failed, as in OpenSearch), then by a version conflict (counted).
    expect((await api.call('admin', 'PUT', '/s1/_doc/3', { n: 'not a number' })).status).toBe(400)
    expect((await api.call('admin', 'PUT', '/s1/_create/1', { n: 1 })).status).toBe(409)
    const bulk = await api.call(
      'admin',
      'POST',
      '/_bulk',
      ndjson([{ index: { _index: 's1', _id: '4' } }, { n: 4 }, { delete: { _index: 's1', _id: 'none' } }]),
    )
    expect(bulk.status).toBe(200)
    const after = (await stats('/s1/_stats/indexing')).indices.s1.primaries.indexing
    expect(after).toMatchObject({ index_total: 3, delete_total: 2, noop_update_total: 1, index_failed: 1, index_current: 0 })
    expect(typeof after.index_time_in_millis).toBe('number')
  })

  test('gets count found and missing documents; searches count under their stats groups', async () => {
    await api.call('admin', 'GET', '/s1/_doc/1')
    await api.call('admin', 'GET', '/s1/_doc/nope')
    await api.call('admin', 'POST', '/s1/_search', { stats: ['bar', 'baz'], size: 0 })
    await api.call('admin', 'POST', '/s1,s2/_search', { stats: ['bar'] })
    const s1 = await stats('/s1/_stats/get,search?groups=ba*')
    expect(s1.indices.s1.primaries.get).toMatchObject({ total: 2, exists_total: 1, missing_total: 1 })
    expect(s1.indices.s1.primaries.get.getTime).toMatch(/^\d+(\.\d)?(ms|s)$/)
    const search = s1.indices.s1.primaries.search
    expect(search.query_total).toBeGreaterThanOrEqual(2)
    expect(search.groups.bar.query_total).toBe(2)
    expect(search.groups.baz.query_total).toBe(1)
    const one = await stats('/s2/_stats/search?groups=baz')
    expect(one.indices.s2.primaries.search.groups).toEqual({})
    expect((await stats('/s2/_stats/search')).indices.s2.primaries.search.groups).toBeUndefined()
  })

  test('refresh counts external refreshes; a flush empties the translog', async () => {
    await api.call('admin', 'POST', '/s2/_refresh')
    expect((await stats('/s2/_stats/refresh')).indices.s2.primaries.refresh.external_total).toBe(1)
    await api.call('admin', 'POST', '/s2/_flush')
    const empty = (await stats('/s2/_stats/translog')).indices.s2.primaries.translog
    expect(empty.operations).toBe(0)
    await api.call('admin', 'PUT', '/s2/_doc/1', { a: 'b' })
    const one = (await stats('/s2/_stats/translog')).indices.s2.primaries.translog
    expect(one.operations).toBe(1)
    expect(one.size_in_bytes).toBeGreaterThan(empty.size_in_bytes)
    await api.call('admin', 'POST', '/s2/_flush')
    expect((await stats('/s2/_stats/translog')).indices.s2.primaries.translog).toEqual(empty)
  })

  test('only the metrics asked for; _all sums the indices; level cluster and shards', async () => {
    const r = await stats('/s1,s2/_stats/docs,merge')
    expect(Object.keys(r._all.total).sort()).toEqual(['docs', 'merges'])
    expect(r._all.total.docs.count).toBe(r.indices.s1.total.docs.count + r.indices.s2.total.docs.count)
    expect((await stats('/_stats?level=cluster')).indices).toBeUndefined()
    const shards = await stats('/s1/_stats/docs?level=shards')
    const copy = shards.indices.s1.shards['0'][0]
    expect(copy.routing).toMatchObject({ state: 'STARTED', primary: true })
    expect(copy.docs.count).toBe(2)
    expect(typeof copy.commit.id).toBe('string')
    const bad = await api.call('admin', 'GET', '/_stats?level=bogus')
    expect(bad.status).toBe(400)
  })

  test('an unknown metric is refused with a suggestion', async () => {
    const r = await api.call('admin', 'GET', '/_stats/fieldata')
    expect(r.status).toBe(400)
    expect(r.body.error.reason).toBe('request [/_stats/fieldata] contains unrecognized metric: [fieldata] -> did you mean [fielddata]?')
    const n = await api.call('admin', 'GET', '/_nodes/stats/transprot')
    expect(n.body.error.reason).toBe(
      'request [/_nodes/stats/transprot] contains unrecognized metric: [transprot] -> did you mean [transport]?',
    )
  })
})

describe('nodes stats', () => {
  test('status_counter counts document writes (each bulk item) and searches by outcome', async () => {
    const node = async () => Object.values((await stats('/_nodes/stats/indices')).nodes)[0] as any
    const before = (await node()).indices.status_counter
    await api.call('admin', 'PUT', '/s1/_doc/9', { n: 9 })
    await api.call('admin', 'PUT', '/s1/_doc/10', { n: 'x' })
    await api.call('admin', 'POST', '/_bulk', ndjson([{ index: { _index: 's1' } }, { n: 1 }, { index: { _index: 's1' } }, { n: 'y' }]))
    await api.call('admin', 'POST', '/s1/_search', { query: { bogus: {} } })
    await api.call('admin', 'POST', '/s1/_search', {})
    const after = (await node()).indices.status_counter
    expect(after.doc_status.success - before.doc_status.success).toBe(2)
    expect(after.doc_status.user_error - before.doc_status.user_error).toBe(2)
    expect(after.search_response_status.success - before.search_response_status.success).toBe(1)
    expect(after.search_response_status.user_error - before.search_response_status.user_error).toBe(1)
  })

  test('level=indices lists each index; jvm threads and buffer pools; indexing pressure', async () => {
    const body = await stats('/_nodes/stats/indices,jvm,indexing_pressure?level=indices')
    const node = Object.values(body.nodes)[0] as any
    expect(node.indices.indices.s1.docs.count).toBeGreaterThan(0)
    expect(node.jvm.threads.count).toBeGreaterThan(0)
    expect(node.jvm.buffer_pools.direct.used_in_bytes).toBeGreaterThanOrEqual(0)
    expect(node.indexing_pressure.memory.current.combined_coordinating_and_primary_in_bytes).toBe(0)
  })
})

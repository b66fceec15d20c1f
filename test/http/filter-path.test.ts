// OpenSearch's response filtering (issue 29 item 8d), over real HTTP on several routes of the index
// API: plain paths, `*` and `**` wildcards, `-` exclusions, arrays, and answers left empty.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../helpers/server'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
  const lines = [1, 2, 3].flatMap((i) => [{ index: { _index: 'fp-a', _id: `d${i}` } }, { n: i, user: { name: `u${i}`, id: i } }])
  const r = await server.request('POST', '/_bulk?refresh=true', {
    body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
    headers: { 'content-type': 'application/x-ndjson' },
  })
  expect(r.body.errors).toBe(false)
})
afterAll(() => server?.stop())

const get = async (path: string) => (await server.request('GET', path)).body

describe('filter_path', () => {
  test('one field of the cluster health', async () => {
    const full = await get('/_cluster/health')
    expect(Object.keys(full).length).toBeGreaterThan(3)
    expect(await get('/_cluster/health?filter_path=status')).toEqual({ status: full.status })
    expect(await get('/_cluster/health?filter_path=status,cluster_name')).toEqual({ status: full.status, cluster_name: full.cluster_name })
  })

  test('through arrays: the ids of the hits', async () => {
    const r = await get('/fp-a/_search?filter_path=hits.hits._id&sort=n:asc')
    expect(r).toEqual({ hits: { hits: [{ _id: 'd1' }, { _id: 'd2' }, { _id: 'd3' }] } })
  })

  test('`*` within a name, `**` across levels', async () => {
    const star = await get('/fp-a/_search?filter_path=hits.hits._source.user.na*&sort=n:asc')
    expect(star.hits.hits.map((h: any) => h._source)).toEqual([
      { user: { name: 'u1' } },
      { user: { name: 'u2' } },
      { user: { name: 'u3' } },
    ])
    const deep = await get('/fp-a/_search?filter_path=**.id&sort=n:asc')
    expect(deep).toEqual({ hits: { hits: [1, 2, 3].map((id) => ({ _source: { user: { id } } })) } })
    expect(Object.keys(await get('/fp-a/_search?filter_path=took,hits.total.*'))).toEqual(['took', 'hits'])
  })

  test('exclusions, and exclusions before inclusions', async () => {
    const r = await get('/fp-a/_doc/d1?filter_path=-_source,-_seq_no,-_primary_term')
    expect(r).toEqual({ _index: 'fp-a', _id: 'd1', _version: 1, found: true })
    const both = await get('/fp-a/_search?filter_path=hits.hits._source,-**.user.id&sort=n:asc')
    expect(both.hits.hits[0]).toEqual({ _source: { n: 1, user: { name: 'u1' } } })
  })

  test('nothing matching answers {}; errors are filtered too; a text answer is left alone', async () => {
    expect(await get('/fp-a/_search?filter_path=nothing.here')).toEqual({})
    expect(await get('/fp-a/_search?q=n:99&filter_path=hits.hits._id')).toEqual({})
    const missing = await server.request('GET', '/nope/_search?filter_path=status')
    expect(missing.status).toBe(404)
    expect(missing.body).toEqual({ status: 404 })
    const cat = await server.request('GET', '/_cat/indices/fp-a?h=index&filter_path=x')
    expect(cat.text.trim()).toBe('fp-a')
    expect(await get('/_cat/indices/fp-a?format=json&h=index,docs.count&filter_path=index')).toEqual([{ index: 'fp-a' }])
  })
})

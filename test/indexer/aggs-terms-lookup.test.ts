// Terms lookups inside aggregations (`filter`, `filters`, `adjacency_matrix`), over real HTTP:
// resolved through the caller's read gate like a query's lookup. Counts are what a real
// OpenSearch 3.4 node answered to the same documents and request.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const lookup = { terms: { mentions: { index: 'sources', id: 'src', path: 'notifications' } } }
const AGGS = {
  f: { filter: lookup, aggs: { m: { terms: { field: 'mentions' } } } },
  fs: { filters: { filters: { hit: lookup, ghi: { term: { mentions: 'ghi' } } } } },
  adj: { adjacency_matrix: { filters: { hit: lookup, ghi: { term: { mentions: 'ghi' } } } } },
}

beforeAll(async () => {
  api = await startIndexApi({
    roles: `
_meta: { type: roles, config_version: 2 }
docs_only:
  index_permissions:
    - index_patterns: ["docs"]
      allowed_actions: ["read"]
`,
    users: { admin: { roles: ['all_access'] }, dora: { roles: ['docs_only'] } },
  })
  await ok(api.call('admin', 'PUT', '/sources', { mappings: { properties: { notifications: { type: 'keyword' } } } }))
  await ok(api.call('admin', 'PUT', '/docs', { mappings: { properties: { mentions: { type: 'keyword' } } } }))
  await ok(api.call('admin', 'PUT', '/sources/_doc/src?refresh=true', { notifications: ['abc', 'def'] }), 201)
  const lines = [{ index: { _id: 'd1' } }, { mentions: ['abc'] }, { index: { _id: 'd2' } }, { mentions: ['def', 'ghi'] }]
  expect((await ok(api.call('admin', 'POST', '/docs/_bulk?refresh=true', ndjson(lines)))).errors).toBe(false)
})

afterAll(async () => {
  await api?.stop()
})

describe('terms lookups in aggregations', () => {
  test('filter, filters and adjacency_matrix read the looked-up terms', async () => {
    const { aggregations: a } = await ok(api.call('admin', 'POST', '/docs/_search', { size: 0, aggs: AGGS }))
    expect(a.f.doc_count).toBe(2)
    expect(a.f.m.buckets).toEqual([
      { key: 'abc', doc_count: 1 },
      { key: 'def', doc_count: 1 },
      { key: 'ghi', doc_count: 1 },
    ])
    expect(a.fs.buckets).toEqual({ ghi: { doc_count: 1 }, hit: { doc_count: 2 } })
    expect(a.adj.buckets).toEqual([
      { key: 'ghi', doc_count: 1 },
      { key: 'ghi&hit', doc_count: 1 },
      { key: 'hit', doc_count: 2 },
    ])
  })

  test("a caller without read rights on the lookup index gets the query lookup's 403 in every position", async () => {
    const query = await api.call('dora', 'POST', '/docs/_search', { size: 0, query: lookup })
    expect(query.status).toBe(403)
    for (const [name, agg] of Object.entries(AGGS)) {
      const r = await api.call('dora', 'POST', '/docs/_search', { size: 0, aggs: { [name]: agg } })
      expect({ name, status: r.status, error: r.body.error }).toEqual({ name, status: 403, error: query.body.error })
      expect(r.text.includes('abc')).toBe(false)
    }
    // Nested below another aggregation too.
    const nested = await api.call('dora', 'POST', '/docs/_search', { size: 0, aggs: { t: { terms: { field: 'mentions' }, aggs: AGGS } } })
    expect(nested.status).toBe(403)
  })
})

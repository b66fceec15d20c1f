/**
 * Issue 12's cost attacks, as an attacker sends them over real HTTP: each answers a 4xx or a
 * correct result instead of stalling the node, crashing with 500, or growing the data directory.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer } from '../helpers/server'

let server: TestServer

beforeAll(async () => {
  server = await startTestServer({ logLines: [] })
  const lines: string[] = []
  for (let i = 0; i < 2000; i++)
    lines.push(JSON.stringify({ index: { _index: 'docs' } }), JSON.stringify({ title: 'a'.repeat(31), n: i, text: 'x'.repeat(400) }))
  const r = await server.request('POST', '/_bulk?refresh=true', {
    body: lines.join('\n') + '\n',
    headers: { 'content-type': 'application/x-ndjson' },
  })
  expect(r.status).toBe(200)
}, 60_000)
afterAll(() => server?.stop())

const dataBytes = () => readdirSync(server.dataDir).reduce((n, f) => n + statSync(join(server.dataDir, f)).size, 0)

test('a _count with dozens of (a+)+ regexps over 31-character titles answers at once, and right', async () => {
  const should = Array.from({ length: 40 }, () => ({ regexp: { 'title.keyword': '(a+)+b' } }))
  const r = await server.request('POST', '/docs/_count', { body: { query: { bool: { should } } } })
  expect(r.status).toBe(200)
  expect(r.body).toMatchObject({ count: 0 })
})

test('a query nested 20,000 levels deep is a 400, not a 500', async () => {
  const n = 20_000
  const body = `{"query":${'{"bool":{"must":['.repeat(n)}{"match_all":{}}${']}}'.repeat(n)}}`
  for (const path of ['/docs/_search', '/docs/_count']) {
    const r = await server.request('POST', path, { body })
    expect(r.status).toBe(400)
    expect(JSON.stringify(r.body)).toContain('x_content_parse_exception')
  }
})

test('a document with a 3,000-level object is refused; exists stays cheap', async () => {
  const n = 3000
  const doc = `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`
  const r = await server.request('PUT', '/docs/_doc/deep', { body: doc })
  expect(r.status).toBe(400)
  const mid = 400
  const r2 = await server.request('PUT', '/docs/_doc/deep', { body: `${'{"a":'.repeat(mid)}1${'}'.repeat(mid)}` })
  expect(r2.status).toBe(400)
  expect(JSON.stringify(r2.body)).toContain('Limit of mapping depth [20] has been exceeded')
  const c = await server.request('POST', '/docs/_count', { body: { query: { exists: { field: 'a' } } } })
  expect(c.body).toMatchObject({ count: 0 })
})

test('twenty PITs do not copy the index; a 10-year keep-alive is refused', async () => {
  const long = await server.request('POST', '/docs/_search/point_in_time?keep_alive=3650d')
  expect(long.status).toBe(400)
  expect(JSON.stringify(long.body)).toContain('point_in_time.max_keep_alive')
  await server.request('POST', '/_flush')
  const before = dataBytes()
  const ids: string[] = []
  for (let i = 0; i < 20; i++) {
    const r = await server.request('POST', '/docs/_search/point_in_time?keep_alive=24h')
    expect(r.status).toBe(200)
    ids.push((r.body as { pit_id: string }).pit_id)
  }
  // The index holds ~1 MB of sources: twenty copies would be ~20 MB.
  expect(dataBytes() - before).toBeLessThan(512 * 1024)
  const page = await server.request('POST', '/_search', { body: { pit: { id: ids[19] }, size: 0, track_total_hits: true } })
  expect(page.body).toMatchObject({ hits: { total: { value: 2000 } } })
  await server.request('DELETE', '/_search/point_in_time/_all')
})

/**
 * Hostile query DSL over real HTTP (issue 12): deep, wide, pathological regexes and wildcards,
 * huge terms lists. No answer is a 5xx, each answer comes within its budget, and `GET /` from
 * another client keeps being answered while the heavy searches run (counted, not timed).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../helpers/server'
import { basicAuth } from '../helpers/calls'
import { nextSeed } from '../../scripts/bench/lib/random'

let server: TestServer
let auth: string
const BUDGET_MS = 1000

beforeAll(async () => {
  server = await startTestServer({ settings: { 'search.default_search_timeout': `${BUDGET_MS}ms` }, logLines: [] })
  auth = basicAuth(server.admin)
  const lines: unknown[] = []
  for (let i = 0; i < 2000; i++)
    lines.push({ index: { _index: 'hostile' } }, { title: 'a'.repeat(20 + (i % 40)), n: i, tag: `t${i % 50}`, body: 'ab'.repeat(200) })
  const r = await fetch(`${server.url}/_bulk?refresh=true`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/x-ndjson' },
    body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
  })
  expect(r.status).toBe(200)
}, 60_000)
afterAll(() => server?.stop())

const post = (path: string, body: unknown) =>
  fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })

/** Polls `GET /` until `done` resolves; answers how many polls completed meanwhile. */
async function pollRoot(done: Promise<unknown>): Promise<number> {
  let finished = false
  void done.finally(() => (finished = true))
  let answered = 0
  while (!finished) {
    const r = await fetch(`${server.url}/`, { headers: { authorization: auth } })
    await r.arrayBuffer()
    if (r.status === 200 && !finished) answered++
  }
  return answered
}

// A seeded generator, so that a failure can be replayed.
function rng(seed: number) {
  return () => {
    seed = nextSeed(seed)
    return seed / 0x7fffffff
  }
}

/** A query as JSON text (a 20,000-level query is built as text: JSON.stringify cannot nest that deep). */
function hostile(rand: () => number): string {
  const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)]
  const regex = () => pick(['(a+)+b', '(a|aa)*c', '(.*a){12}', '((a*)*)*b', 'a{1,1000}b', '[a-z]*[a-z]*[a-z]*x', '(?=a)'])
  const leaf = (huge = false): unknown =>
    pick([
      () => ({ regexp: { 'title.keyword': regex() } }),
      () => ({ regexp: { body: { value: regex(), flags: 'ALL' } } }),
      () => ({ wildcard: { 'title.keyword': '*a*a*a*a*a*a*a*a*a*a*a*a*a*?b' } }),
      () => ({ wildcard: { 'body.keyword': '*' + 'ab*'.repeat(60) + 'c' } }),
      () =>
        huge
          ? { terms: { 'tag.keyword': Array.from({ length: 60_000 + Math.floor(rand() * 10_000) }, (_, i) => `t${i}`) } }
          : { terms: { 'tag.keyword': Array.from({ length: 200 }, (_, i) => `t${i}`) } },
      () => ({ regexp: { 'title.keyword': 'a'.repeat(1001) } }),
      () => ({ regexp: { 'title.keyword': { value: 'x', _pcre: { pattern: '^(a|a?)+$', flags: 'i' } } } }),
    ])()
  const kind = Math.floor(rand() * 5)
  // Allowed but costly: hundreds of regexps over every document (runs into the time budget).
  if (kind === 4)
    return JSON.stringify({ bool: { should: Array.from({ length: 300 }, (_, i) => ({ regexp: { body: `(ab)*a${i}(ab)*` } })) } })
  if (kind === 0) {
    const depth = pick([10, 300, 2000, 20_000])
    return '{"bool":{"must":['.repeat(depth) + JSON.stringify(leaf()) + ']}}'.repeat(depth)
  }
  if (kind === 1) return JSON.stringify({ bool: { should: Array.from({ length: pick([30, 1024, 1500]) }, () => leaf()) } })
  if (kind === 2) return JSON.stringify({ bool: { must_not: [leaf(true)], should: [leaf(), leaf()] } })
  return JSON.stringify(leaf(true))
}

test('hostile queries: no 5xx, each within its budget, GET / answered meanwhile', async () => {
  const rand = rng(12)
  const until = performance.now() + 15_000
  let sent = 0
  let longBatches = 0
  let stalled = 0
  const statuses = new Map<number, number>()
  while (performance.now() < until) {
    const batch = Array.from({ length: 4 }, async () => {
      const query = hostile(rand)
      const path = rand() < 0.5 ? '/hostile/_search' : '/hostile/_count'
      const body = `{"query":${query}}`
      const started = performance.now()
      const r = await fetch(`${server.url}${path}`, {
        method: 'POST',
        headers: { authorization: auth, 'content-type': 'application/json' },
        body,
      })
      const text = await r.text()
      const elapsed = performance.now() - started
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)
      expect(r.status, text.slice(0, 300)).toBeLessThan(500)
      // Its budget, plus the time the other three of the batch (and building the query) may take.
      expect(elapsed).toBeLessThan(4 * BUDGET_MS + 3000)
      sent++
    })
    const all = Promise.all(batch)
    const batchStart = performance.now()
    const answered = await pollRoot(all)
    await all
    // A batch that kept the node busy for a while must have let GET / through meanwhile.
    if (performance.now() - batchStart > 300) {
      longBatches++
      if (answered === 0) stalled++
    }
  }
  expect(sent).toBeGreaterThan(8)
  expect(statuses.get(400) ?? 0).toBeGreaterThan(0)
  expect(statuses.get(200) ?? 0).toBeGreaterThan(0)
  // A stalled event loop answers no GET / while a search runs.
  expect(longBatches).toBeGreaterThan(0)
  expect(stalled).toBe(0)
}, 60_000)

test('while a search evaluates for seconds, GET / keeps being answered', async () => {
  const regexps = Array.from({ length: 200 }, (_, i) => ({ regexp: { body: `(ab)*a${i}` } }))
  const heavy = post('/hostile/_search', { query: { bool: { should: regexps } }, timeout: '3s', size: 0 })
  const answered = await pollRoot(heavy)
  const r = await heavy
  expect(r.status).toBe(200)
  await r.json()
  expect(answered).toBeGreaterThan(10)
}, 30_000)

test('a significant_terms background that reads for seconds yields to GET / and stops at the time budget', async () => {
  // The background filter is what costs here: 200 regular expressions over every document, about
  // 2 s of work on CI's machine; a budget a quarter of that is spent whatever the machine's pace
  // (with 2 s, a quick run finished its work in 1.99 s and did not time out).
  const regexps = Array.from({ length: 200 }, (_, i) => ({ regexp: { body: `(ab)*a${i}` } }))
  const heavy = post('/hostile/_search', {
    size: 0,
    timeout: '500ms',
    aggs: { s: { significant_terms: { field: 'tag.keyword', background_filter: { bool: { should: regexps } } } } },
  })
  const answered = await pollRoot(heavy)
  const r = await heavy
  expect(r.status).toBe(200)
  expect(((await r.json()) as { timed_out: boolean }).timed_out).toBe(true)
  expect(answered).toBeGreaterThan(10)
}, 30_000)

// _mget, _msearch, scroll and _explain over real HTTP: OpenSearch's shapes, and the same
// authorization and DLS as `GET <index>/_doc` and `_search` by the same caller.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ndjson, ok, startIndexApi, type TestServer } from './helpers'

const ROLES = `
_meta: { type: roles, config_version: 2 }
reader:
  index_permissions:
    - index_patterns: ["logs-*"]
      allowed_actions: ["read"]
    - index_patterns: ["shared"]
      allowed_actions: ["read"]
      dls: '{"term": {"owner": "\${user.name}"}}'
`

let api: TestServer

const ids = (hits: any[]) => hits.map((h) => h._id).sort()

beforeAll(async () => {
  api = await startIndexApi({
    roles: ROLES,
    users: { admin: { roles: ['all_access'] }, alice: { roles: ['reader'] }, bob: { roles: ['reader'] } },
  })
  await ok(api.call('admin', 'PUT', '/shared', { mappings: { properties: { owner: { type: 'keyword' }, n: { type: 'long' } } } }))
  await ok(api.call('admin', 'PUT', '/logs-a', { mappings: { properties: { n: { type: 'long' } } } }))
  await ok(api.call('admin', 'PUT', '/secret', {}))
  const lines: unknown[] = []
  for (let i = 0; i < 25; i++) lines.push({ index: { _index: 'logs-a', _id: `l${i}` } }, { n: i })
  for (let i = 0; i < 6; i++) lines.push({ index: { _index: 'shared', _id: `s${i}` } }, { owner: i % 2 ? 'bob' : 'alice', n: i })
  lines.push({ index: { _index: 'secret', _id: 'x1' } }, { owner: 'alice' })
  await ok(api.call('admin', 'POST', '/_bulk?refresh=true', ndjson(lines)))
})

afterAll(async () => {
  await api?.stop()
})

describe('_mget', () => {
  test('docs and ids forms, per-document not found and missing index', async () => {
    const body = await ok(
      api.call('admin', 'POST', '/_mget', {
        docs: [
          { _index: 'logs-a', _id: 'l1' },
          { _index: 'logs-a', _id: 'nope' },
          { _index: 'missing-index', _id: '1' },
        ],
      }),
    )
    expect(body.docs[0]).toMatchObject({ _index: 'logs-a', _id: 'l1', found: true, _source: { n: 1 } })
    expect(body.docs[1]).toMatchObject({ _id: 'nope', found: false })
    expect(body.docs[2].error.type).toBe('index_not_found_exception')
    const byIds = await ok(api.call('admin', 'POST', '/logs-a/_mget?_source=false', { ids: ['l2', 'l3'] }))
    expect(byIds.docs.map((d: any) => [d._id, d.found, d._source])).toEqual([
      ['l2', true, undefined],
      ['l3', true, undefined],
    ])
  })

  test('DLS hides other users’ documents; an unauthorized index refuses the request', async () => {
    const body = await ok(api.call('alice', 'POST', '/shared/_mget', { ids: ['s0', 's1'] }))
    expect(body.docs.map((d: any) => d.found)).toEqual([true, false])
    const refused = await api.call('alice', 'POST', '/_mget', {
      docs: [
        { _index: 'logs-a', _id: 'l1' },
        { _index: 'secret', _id: 'x1' },
      ],
    })
    expect(refused.status).toBe(403)
    expect(refused.body.error.type).toBe('security_exception')
  })

  test('malformed requests are 400s', async () => {
    expect((await api.call('admin', 'POST', '/_mget', {})).status).toBe(400)
    expect((await api.call('admin', 'POST', '/_mget', { ids: ['a'] })).body.error.reason).toContain('index is missing for doc 0')
    expect((await api.call('admin', 'POST', '/_mget', { docs: [{ _index: 'x', _id: '1', bogus: 1 }] })).status).toBe(400)
  })
})

describe('_msearch', () => {
  test('each search answers in its slot; errors stay in their slot', async () => {
    const body = await ok(
      api.call(
        'admin',
        'POST',
        '/_msearch',
        ndjson([{ index: 'logs-a' }, { query: { range: { n: { lt: 3 } } } }, { index: 'missing-index' }, {}, {}, { size: 0 }]),
      ),
    )
    expect(body.responses).toHaveLength(3)
    expect(ids(body.responses[0].hits.hits)).toEqual(['l0', 'l1', 'l2'])
    expect(body.responses[0].status).toBe(200)
    expect(body.responses[1].status).toBe(404)
    expect(body.responses[1].error.type).toBe('index_not_found_exception')
    expect(body.responses[2].hits.total.value).toBeGreaterThan(25)
  })

  test('the path index is the default; DLS and authorization apply per search', async () => {
    const body = await ok(api.call('alice', 'POST', '/shared/_msearch', ndjson([{}, {}, { index: 'secret' }, {}])))
    expect(ids(body.responses[0].hits.hits)).toEqual(['s0', 's2', 's4'])
    expect(body.responses[1].status).toBe(403)
  })

  test('malformed bodies are 400s', async () => {
    expect((await api.call('admin', 'POST', '/_msearch', '{}')).status).toBe(400)
    expect((await api.call('admin', 'POST', '/_msearch', ndjson([{ bogus: 1 }, {}]))).status).toBe(400)
    expect((await api.call('admin', 'POST', '/_msearch', ndjson([{}, { nope: 1 }]))).status).toBe(400)
    expect((await api.call('admin', 'POST', '/_msearch', '{}\n{"query":\n')).status).toBe(400)
  })
})

describe('scroll', () => {
  async function drain(user: string, first: any) {
    const seen = [...first.hits.hits]
    let id = first._scroll_id
    for (;;) {
      const page = await ok(api.call(user, 'POST', '/_search/scroll', { scroll: '1m', scroll_id: id }))
      expect(page.hits.total.value).toBe(first.hits.total.value)
      if (page.hits.hits.length === 0) break
      seen.push(...page.hits.hits)
      id = page._scroll_id
    }
    return { seen, id, clear: () => ok(api.call(user, 'DELETE', `/_search/scroll/${id}`)) }
  }

  test('pages through every document once; later writes are not part of it; clear frees it', async () => {
    const first = await ok(api.call('admin', 'POST', '/logs-a/_search?scroll=1m', { size: 7 }))
    expect(first.hits.hits).toHaveLength(7)
    expect(first.hits.total.value).toBe(25)
    expect(first._scroll_id).toBeString()
    await ok(api.call('admin', 'PUT', '/logs-a/_doc/late?refresh=true', { n: 100 }), 201)
    const { seen, id } = await drain('admin', first)
    expect(seen.map((h) => h._id).sort()).toEqual(Array.from({ length: 25 }, (_, i) => `l${i}`).sort())
    expect(new Set(seen.map((h) => h._id)).size).toBe(25)
    expect(await ok(api.call('admin', 'DELETE', '/_search/scroll', { scroll_id: [id] }))).toEqual({ succeeded: true, num_freed: 1 })
    const gone = await api.call('admin', 'POST', '/_search/scroll', { scroll: '1m', scroll_id: id })
    expect(gone.status).toBe(404)
    expect(gone.body.error.type).toBe('search_context_missing_exception')
    await ok(api.call('admin', 'DELETE', '/logs-a/_doc/late?refresh=true'))
  })

  test('a sorted scroll follows the sort across indices', async () => {
    const first = await ok(api.call('admin', 'POST', '/logs-a,shared/_search?scroll=1m', { size: 4, sort: [{ n: 'desc' }] }))
    const { seen, clear } = await drain('admin', first)
    await clear()
    expect(seen).toHaveLength(31)
    const ns = seen.map((h) => h._source.n)
    expect(ns).toEqual([...ns].sort((a, b) => b - a))
    expect(seen[0].sort).toEqual([24])
  })

  test('DLS applies to every page; another user cannot continue the scroll', async () => {
    const first = await ok(api.call('alice', 'POST', '/shared/_search?scroll=1m&size=1'))
    expect(first.hits.total.value).toBe(3)
    const { seen, clear } = await drain('alice', first)
    expect(ids(seen)).toEqual(['s0', 's2', 's4'])
    // Bob may not learn whether the context exists: refused like an unknown id (he cannot read every index).
    const other = await api.call('bob', 'POST', '/_search/scroll', { scroll: '1m', scroll_id: first._scroll_id })
    expect(other.status).toBe(403)
    await clear()
  })

  test('scroll validation: from, size 0, keep-alive above search.max_keep_alive', async () => {
    expect((await api.call('admin', 'POST', '/logs-a/_search?scroll=1m', { from: 5 })).status).toBe(400)
    expect((await api.call('admin', 'POST', '/logs-a/_search?scroll=1m', { size: 0 })).status).toBe(400)
    const long = await api.call('admin', 'POST', '/logs-a/_search?scroll=2d')
    expect(long.status).toBe(400)
    expect(long.body.error.reason).toContain('search.max_keep_alive')
    expect((await api.call('admin', 'POST', '/logs-a/_search?scroll=abc')).status).toBe(400)
  })

  test('search.max_open_scroll_context caps open contexts', async () => {
    await api.call('admin', 'DELETE', '/_search/scroll/_all')
    await ok(api.call('admin', 'PUT', '/_cluster/settings', { transient: { 'search.max_open_scroll_context': 2 } }))
    try {
      await ok(api.call('admin', 'POST', '/logs-a/_search?scroll=1m'))
      await ok(api.call('admin', 'POST', '/logs-a/_search?scroll=1m'))
      const third = await api.call('admin', 'POST', '/logs-a/_search?scroll=1m')
      expect(third.status).toBe(429)
      expect(third.body.error.reason).toContain('search.max_open_scroll_context')
      expect((await ok(api.call('admin', 'DELETE', '/_search/scroll/_all'))).num_freed).toBe(2)
      await ok(api.call('admin', 'POST', '/logs-a/_search?scroll=1m'))
    } finally {
      await ok(api.call('admin', 'PUT', '/_cluster/settings', { transient: { 'search.max_open_scroll_context': null } }))
      await api.call('admin', 'DELETE', '/_search/scroll/_all')
    }
  })
})

describe('_explain', () => {
  test('matched and not matched; a document hidden by DLS is not found', async () => {
    const yes = await ok(api.call('admin', 'POST', '/logs-a/_explain/l3', { query: { term: { n: 3 } } }))
    expect(yes).toMatchObject({ _index: 'logs-a', _id: 'l3', matched: true })
    expect(yes.explanation.value).toBeGreaterThan(0)
    const no = await ok(api.call('admin', 'POST', '/logs-a/_explain/l3', { query: { term: { n: 4 } } }))
    expect(no.matched).toBe(false)
    const hidden = await api.call('alice', 'POST', '/shared/_explain/s1', { query: { match_all: {} } })
    expect(hidden.status).toBe(404)
    expect(hidden.body.matched).toBe(false)
    expect((await ok(api.call('alice', 'POST', '/shared/_explain/s0', { query: { match_all: {} } }))).matched).toBe(true)
    expect((await api.call('alice', 'POST', '/secret/_explain/x1', { query: { match_all: {} } })).status).toBe(403)
    expect((await api.call('admin', 'POST', '/logs-a/_explain/l3', {})).status).toBe(400)
  })
})

// Issue 12, items 1 and 5, as an attacker tries them: real HTTP against the full composition
// (front door, security, index API, plugin routes, embedded store). Each test is one attack of
// the list; it fails on a node without the read gate / the authentication fixes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { readdirSync } from 'node:fs'
import { MAX_CONCURRENT_HASH_CHECKS, type SecurityService } from '../../src/security/service'
import { startTestServer, type TestServer } from '../helpers/server'
import { basicAuth } from '../helpers/calls'

const ROLES = {
  logs_reader: { index_permissions: [{ index_patterns: ['logs*'], allowed_actions: ['read', 'manage_point_in_time'] }] },
  notes_owner: {
    index_permissions: [{ index_patterns: ['notes'], allowed_actions: ['read', 'write'], dls: '{"term": {"owner": "${user.name}"}}' }],
  },
  drop_writer: { index_permissions: [{ index_patterns: ['drop'], allowed_actions: ['write'] }] },
}
const PASSWORD = 'User-pass-1'
const alice = { name: 'alice', password: PASSWORD }
const bob = { name: 'bob', password: PASSWORD }
const carol = { name: 'carol', password: PASSWORD }

/** What must never reach an unauthorized caller. */
const TOKEN = 'CTI-TOKEN-7f3a9c-never-shown'
const TOKEN_STORED = Buffer.from(TOKEN, 'utf8').toString('base64')
const NOTE = 'TOP-SECRET-NOTE-of-alice'

let s: TestServer
const logLines: string[] = []

const lookup = (index: string, id: string, path: string) => ({ index, id, path })
const leaks = (text: string) => text.includes(TOKEN) || text.includes(TOKEN_STORED) || text.includes(NOTE)

beforeAll(async () => {
  s = await startTestServer({
    users: [
      { ...alice, roles: ['logs_reader', 'notes_owner'] },
      { ...bob, roles: ['logs_reader', 'notes_owner'] },
      { ...carol, roles: ['drop_writer'] },
    ],
    roles: ROLES,
    settings: { 'security.auth_failures.max_attempts': 0, 'log.level': 'info' },
    logLines,
  })
  // The CTI token where the product keeps it, written with the service's rights.
  await s.server.app.deps.store.index({
    index: '.svc-internal-state',
    id: 'credentials',
    body: { access_token: TOKEN_STORED },
    refresh: true,
  })
  const put = async (path: string, body: unknown) => {
    const r = await s.request('PUT', path, { body })
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.text}`)
  }
  await put('/logs-1', { mappings: { properties: { ts: { type: 'date' }, user: { type: 'keyword' } } } })
  await put('/notes', { mappings: { properties: { owner: { type: 'keyword' }, text: { type: 'keyword' } } } })
  await put('/drop', {})
  await put('/logs-1/_doc/1?refresh=true', { ts: '2024-01-01T00:00:00Z', user: 'x' })
  await put('/logs-1/_doc/2?refresh=true', { ts: '2024-01-02T00:00:00Z', user: NOTE })
  await put('/logs-1/_doc/3?refresh=true', { ts: '2024-01-03T00:00:00Z', user: 'bob-note' })
  await put('/notes/_doc/a1?refresh=true', { owner: 'alice', text: NOTE })
  await put('/notes/_doc/b1?refresh=true', { owner: 'bob', text: 'bob-note' })
  await put('/drop/_doc/d1?refresh=true', { v: 'dropped-value' })
})

afterAll(async () => {
  await s?.stop()
})

describe('item 1: one gate for every read', () => {
  test('a terms lookup into the system index is a 403 security exception, whatever the field type', async () => {
    for (const [field, path] of [
      ['ts', '/logs-1/_search'],
      ['user', '/logs-1/_search'],
      ['ts', '/logs-1/_count'],
      ['user', '/logs-1/_count'],
    ]) {
      const query = { bool: { filter: [{ terms: { [field]: lookup('.svc-internal-state', 'credentials', 'access_token') } }] } }
      const r = await s.request('POST', path, { user: bob, body: { query } })
      expect({ path, field, status: r.status }).toEqual({ path, field, status: 403 })
      expect((r.body as any).error.type).toBe('security_exception')
      expect(leaks(r.text)).toBe(false)
    }
  })

  test('a terms lookup is refused inside a point-in-time search too', async () => {
    const pit = await s.request('POST', '/logs-1/_search/point_in_time?keep_alive=1m', { user: bob })
    expect(pit.status).toBe(200)
    const r = await s.request('POST', '/_search', {
      user: bob,
      body: {
        pit: { id: (pit.body as any).pit_id },
        query: { terms: { ts: lookup('.svc-internal-state', 'credentials', 'access_token') } },
      },
    })
    expect(r.status).toBe(403)
    expect(leaks(r.text)).toBe(false)
  })

  test("a terms lookup on another user's DLS-hidden document finds no terms; one on the caller's own document works", async () => {
    const hidden = await s.request('POST', '/logs-1/_search', {
      user: bob,
      body: { query: { terms: { user: lookup('notes', 'a1', 'text') } } },
    })
    expect(hidden.status).toBe(200)
    expect((hidden.body as any).hits.hits).toEqual([])
    expect(leaks(hidden.text)).toBe(false)
    const own = await s.request('POST', '/logs-1/_search', {
      user: bob,
      body: { query: { terms: { user: lookup('notes', 'b1', 'text') } } },
    })
    expect((own.body as any).hits.hits.map((h: any) => h._id)).toEqual(['3'])
    // And the hidden document reads as missing directly, as the lookup treated it.
    expect((await s.request('GET', '/notes/_doc/a1', { user: bob })).status).toBe(404)
  })

  test("another user's AI assistant transcript cannot be looked up by session id", async () => {
    const transcript = 'TRANSCRIPT-of-alice-9d2e'
    await s.request('PUT', '/logs-1/_doc/4?refresh=true', { body: { ts: '2024-01-04T00:00:00Z', user: transcript } })
    const created = await s.request('POST', '/_plugins/_setup/ai_assistant/sessions', {
      user: alice,
      body: { title: 'private', messages: [{ role: 'user', content: transcript }] },
    })
    expect(created.status).toBeLessThan(300)
    const id = (created.body as any).id as string
    const probe = (user: typeof alice) =>
      s.request('POST', '/logs-1/_search', {
        user,
        body: { query: { terms: { user: lookup('svc-ai-assistant-sessions', id, 'messages.content') } } },
      })
    const r = await probe(bob)
    expect(r.status).toBe(200)
    expect((r.body as any).hits.hits).toEqual([])
    expect(r.text).not.toContain(transcript)
    // The owner's own lookup finds it: the gate applies the sessions filter, not a blanket refusal.
    expect(((await probe(alice)).body as any).hits.hits.map((h: any) => h._id)).toEqual(['4'])
  })

  test('a terms lookup on an index the caller may not read is a 403; the admin (read on every index) still looks up', async () => {
    const r = await s.request('POST', '/logs-1/_count', {
      user: carol,
      body: { query: { terms: { user: lookup('logs-1', '2', 'user') } } },
    })
    expect(r.status).toBe(403)
    const denied = await s.request('POST', '/logs-1/_count', { user: bob, body: { query: { terms: { user: lookup('drop', 'd1', 'v') } } } })
    expect(denied.status).toBe(403)
    expect(denied.text).not.toContain('dropped-value')
    const admin = await s.request('POST', '/logs-1/_count', { body: { query: { terms: { user: lookup('notes', 'a1', 'text') } } } })
    expect(admin.status).toBe(200)
    expect((admin.body as any).count).toBe(1)
  })

  test('a query too deep to walk is a 400 from the gate, not a 500', async () => {
    const deep = `{"query": ${'{"bool": {"must": ['.repeat(20_000)}{"terms": {"user": {"index": "notes", "id": "a1", "path": "text"}}}${']}}'.repeat(20_000)}}`
    for (const path of ['/logs-1/_search', '/logs-1/_count']) {
      const r = await s.request('POST', path, { user: bob, body: deep })
      expect({ path, status: r.status }).toEqual({ path, status: 400 })
    }
  })

  test('an aggregation filter cannot look documents up', async () => {
    const r = await s.request('POST', '/logs-1/_search', {
      user: bob,
      body: { size: 0, aggs: { f: { filter: { terms: { ts: lookup('.svc-internal-state', 'credentials', 'access_token') } } } } },
    })
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(r.status).toBeLessThan(500)
    expect(leaks(r.text)).toBe(false)
  })

  test('plugin _search routes (run with the service rights) refuse document lookups', async () => {
    const r = await s.request('POST', '/_plugins/_security_analytics/rules/_search', {
      body: { query: { terms: { 'rule.title': lookup('.svc-internal-state', 'credentials', 'access_token') } } },
    })
    expect(r.status).toBe(400)
    expect(leaks(r.text)).toBe(false)
  })

  test('a no-op _update with _source=true on a DLS-hidden document is refused (403), nothing applied or echoed', async () => {
    const r = await s.request('POST', '/notes/_update/a1?_source=true', { user: bob, body: { doc: {} } })
    expect(r.status).toBe(403)
    expect((r.body as any).error.type).toBe('security_exception')
    expect((r.body as any).error.reason).toBe('Update is not supported when FLS or DLS or Fieldmasking is activated')
    expect(leaks(r.text)).toBe(false)
    // Even the caller's own document: the index is DLS-filtered for the caller, as on the platform.
    expect((await s.request('POST', '/notes/_update/b1', { user: bob, body: { doc: { text: 'changed' } } })).status).toBe(403)
    const still = await s.request('GET', '/notes/_doc/b1', { user: bob })
    expect((still.body as any)._source.text).toBe('bob-note')
  })

  test('a bulk update item on a DLS-filtered index is refused per item, the document neither echoed nor changed', async () => {
    const body =
      [{ update: { _index: 'notes', _id: 'a1', _source: true } }, { doc: { owner: 'bob' } }].map((l) => JSON.stringify(l)).join('\n') + '\n'
    const r = await s.request('POST', '/_bulk?_source=true', { user: bob, body, headers: { 'content-type': 'application/x-ndjson' } })
    expect(r.status).toBe(200)
    const item = (r.body as any).items[0].update
    expect(item.status).toBe(403)
    expect(item.error.type).toBe('security_exception')
    expect(leaks(r.text)).toBe(false)
    const admin = await s.request('GET', '/notes/_doc/a1')
    expect((admin.body as any)._source.owner).toBe('alice')
  })

  test('where reads are not filtered, an update still echoes the document', async () => {
    const r = await s.request('POST', '/notes/_update/b1?_source=true', { body: { doc: {} } })
    expect(r.status).toBe(200)
    expect((r.body as any).get._source).toEqual({ owner: 'bob', text: 'bob-note' })
  })

  test('aggregations count only what the caller may read', async () => {
    const r = await s.request('POST', '/notes/_search', { user: bob, body: { size: 0, aggs: { owners: { terms: { field: 'owner' } } } } })
    expect(r.status).toBe(200)
    expect((r.body as any).aggregations.owners.buckets).toEqual([{ key: 'bob', doc_count: 1 }])
    expect(r.text).not.toContain('alice')
  })

  test('an update that would echo the document needs read rights on it; without _source it is a write like any other', async () => {
    const echoed = await s.request('POST', '/drop/_update/d1?_source=true', { user: carol, body: { doc: {} } })
    expect(echoed.status).toBe(403)
    expect(echoed.text).not.toContain('dropped-value')
    const bulk = await s.request('POST', '/_bulk', {
      user: carol,
      body: JSON.stringify({ update: { _index: 'drop', _id: 'd1' } }) + '\n' + JSON.stringify({ doc: {}, _source: true }) + '\n',
      headers: { 'content-type': 'application/x-ndjson' },
    })
    expect((bulk.body as any).items[0].update.status).toBe(403)
    expect(bulk.text).not.toContain('dropped-value')
    const plain = await s.request('POST', '/drop/_update/d1', { user: carol, body: { doc: { w: 1 } } })
    expect(plain.status).toBe(200)
    expect(plain.text).not.toContain('dropped-value')
  })

  test('_create of an existing DLS-hidden document answers a conflict that carries nothing of it', async () => {
    const r = await s.request('PUT', '/notes/_create/a1', { user: bob, body: { owner: 'bob' } })
    expect(r.status).toBe(409)
    expect(leaks(r.text)).toBe(false)
  })

  test('a direct read of the system index stays refused', async () => {
    for (const path of ['/.svc-internal-state/_doc/credentials', '/.svc-internal-state/_source/credentials']) {
      const r = await s.request('GET', path)
      expect(r.status).toBe(403)
      expect(leaks(r.text)).toBe(false)
    }
  })
})

describe('item 5: authentication', () => {
  test('user names that are Object members are just unknown users: 401, nothing logged as an error', async () => {
    const before = logLines.length
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf']) {
      const r = await s.request('GET', '/', { user: { name, password: 'x' } })
      expect({ name, status: r.status }).toEqual({ name, status: 401 })
      expect(r.text).not.toContain('stack')
    }
    const logged = logLines.slice(before).join('\n')
    expect(logged).not.toContain('"level":"error"')
    expect(logged).not.toContain('stack')
  })
})

/** A raw HTTP/1.1 exchange: the head of the answer and whether the server closed the connection. */
function rawExchange(port: number, head: string, body = '', waitMs = 5000): Promise<{ status: number; closed: boolean; text: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(head + body))
    let text = ''
    const timer = setTimeout(() => {
      socket.destroy()
      resolve({ status: Number(text.split(' ')[1]), closed: false, text })
    }, waitMs)
    socket.on('data', (d) => (text += d))
    socket.on('close', () => {
      clearTimeout(timer)
      resolve({ status: Number(text.split(' ')[1]), closed: true, text })
    })
    socket.on('error', reject)
  })
}

const openDescriptors = () => readdirSync('/proc/self/fd').length

describe('item 5: a refused request with a body does not hold its connection', () => {
  test('unauthenticated, large Content-Length, body never sent: the 401 arrives and the server closes', async () => {
    const r = await rawExchange(
      s.server.port,
      'POST /logs-1/_doc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n',
      '{"a":',
    )
    expect(r.status).toBe(401)
    expect(r.closed).toBe(true)
    expect(r.text.toLowerCase()).toContain('connection: close')
  })

  test('a refused (403) request with an unsent body is answered and closed', async () => {
    const auth = basicAuth({ name: 'carol', password: PASSWORD })
    const forbidden = await rawExchange(
      s.server.port,
      `POST /logs-1/_doc HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`,
    )
    expect(forbidden.status).toBe(403)
    expect(forbidden.closed).toBe(true)
    // An accepted body that was read keeps the connection open (the exchange times out instead).
    const body = '{"a":1}'
    const kept = await rawExchange(
      s.server.port,
      `PUT /drop/_doc/k1 HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
      body,
      500,
    )
    expect(kept.status).toBe(201)
    expect(kept.closed).toBe(false)
  })

  // Below http.max_body_bytes: larger ones Bun itself refuses (413) before the app sees them.
  test('2,000 such requests leave no descriptors behind, and GET / keeps answering', async () => {
    const base = openDescriptors()
    const head = 'PUT /logs-1/_doc/9 HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n'
    let n = 0
    let unclosed = 0
    const worker = async () => {
      while (n < 2000) {
        n++
        const r = await rawExchange(s.server.port, head, '{')
        if (r.status !== 401 || !r.closed) unclosed++
      }
    }
    await Promise.all(Array.from({ length: 50 }, worker))
    expect(unclosed).toBe(0)
    const root = await s.request('GET', '/')
    expect(root.status).toBe(200)
    expect(openDescriptors()).toBeLessThan(base + 50)
  })
})

describe('item 5: bcrypt checks are bounded node-wide', () => {
  test(`30 parallel logins with distinct wrong passwords run at most ${MAX_CONCURRENT_HASH_CHECKS} bcrypt checks at once`, async () => {
    const security = s.server.app.deps.security as SecurityService
    const before = security.stats.verifications
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => s.request('GET', '/', { user: { name: i % 2 ? 'alice' : `nobody-${i}`, password: `p-${i}` } })),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(401))
    expect(security.stats.verifications - before).toBe(30)
    expect(security.stats.peakConcurrentChecks).toBeGreaterThan(0)
    expect(security.stats.peakConcurrentChecks).toBeLessThanOrEqual(MAX_CONCURRENT_HASH_CHECKS)
  })
})

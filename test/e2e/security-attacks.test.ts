// Issue 12 attacks against the compiled binary, as an operator runs it (npm test builds
// dist/svc-ext first): a terms lookup into an index the user may not read, a cross-site
// Content-Type, and a flood of unauthenticated requests announcing large bodies.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { basicAuth, writeSecurityConfig } from '../helpers/app'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'

const SECRET = 'SECRET-VALUE-42-never-shown'
const alice = { name: 'alice', password: 'Alice-pass-1' }
let node: SpawnedServer

async function call(method: string, path: string, body?: unknown, user?: { name: string; password: string }, type = 'application/json') {
  const headers: Record<string, string> = { authorization: user ? basicAuth(user) : node.auth }
  if (body !== undefined) headers['content-type'] = type
  const r = await fetch(node.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  })
  const text = await r.text()
  return { status: r.status, text, json: () => JSON.parse(text) }
}

beforeAll(async () => {
  requireBinary()
  const configDir = mkdtempSync(join(tmpdir(), 'svc-e2e-sec-'))
  const config = join(configDir, 'svc-ext.yml')
  writeFileSync(config, 'node.name: e2e-security\n')
  await writeSecurityConfig(configDir, {
    users: [
      { name: 'admin', password: 'e2e-Admin-pass-1', backend_roles: ['admin'], roles: ['all_access'] },
      { ...alice, roles: ['logs_reader'] },
    ],
    roles: { logs_reader: { index_permissions: [{ index_patterns: ['logs*'], allowed_actions: ['read'] }] } },
  })
  node = await spawnBinary({ args: ['serve', '--config', config] })
  for (const [path, body] of [
    ['/logs-1', { mappings: { properties: { ts: { type: 'date' }, user: { type: 'keyword' } } } }],
    ['/logs-1/_doc/1?refresh=true', { ts: '2024-01-01T00:00:00Z', user: 'x' }],
    ['/secret/_doc/1?refresh=true', { v: SECRET }],
  ] as const) {
    const r = await call('PUT', path, body)
    if (r.status >= 300) throw new Error(`${path}: ${r.status} ${r.text}`)
  }
})

afterAll(async () => {
  await node?.stop()
})

describe('the compiled binary', () => {
  test('a terms lookup into an index the user may not read is a 403 that carries nothing of the document', async () => {
    for (const field of ['ts', 'user']) {
      const r = await call('POST', '/logs-1/_search', { query: { terms: { [field]: { index: 'secret', id: '1', path: 'v' } } } }, alice)
      expect({ field, status: r.status }).toEqual({ field, status: 403 })
      expect(r.json().error.type).toBe('security_exception')
      expect(r.text).not.toContain(SECRET)
    }
    const system = await call(
      'POST',
      '/logs-1/_count',
      { query: { terms: { user: { index: '.svc-internal-state', id: 'credentials', path: 'access_token' } } } },
      alice,
    )
    expect(system.status).toBe(403)
  })

  test("a text/plain _bulk is OpenSearch's 406 and writes nothing", async () => {
    const body = JSON.stringify({ index: { _index: 'logs-csrf', _id: '1' } }) + '\n' + JSON.stringify({ a: 1 }) + '\n'
    const r = await call('POST', '/_bulk', body, undefined, 'text/plain')
    expect(r.status).toBe(406)
    expect(r.json()).toEqual({ error: 'Content-Type header [text/plain] is not supported', status: 406 })
    expect((await call('GET', '/logs-csrf/_doc/1')).status).toBe(404)
  })

  test('2,000 unauthenticated requests announcing 50 MB bodies are answered and closed: no descriptors pile up, GET / answers', async () => {
    const descriptors = () => readdirSync(`/proc/${node.pid}/fd`).length
    const before = descriptors()
    const port = Number(new URL(node.url).port)
    const head = 'POST /logs-1/_doc HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n{'
    const one = () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(head))
        let text = ''
        const timer = setTimeout(() => (socket.destroy(), resolve(false)), 5000)
        socket.on('data', (d) => (text += d))
        socket.on('close', () => (clearTimeout(timer), resolve(text.startsWith('HTTP/1.1 401'))))
        socket.on('error', () => (clearTimeout(timer), resolve(false)))
      })
    let sent = 0
    let failed = 0
    await Promise.all(
      Array.from({ length: 50 }, async () => {
        while (sent < 2000) {
          sent++
          if (!(await one())) failed++
        }
      }),
    )
    expect(failed).toBe(0)
    expect((await call('GET', '/')).status).toBe(200)
    expect(descriptors()).toBeLessThan(before + 50)
  })
})

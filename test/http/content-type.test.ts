// Issue 12, item 6: a body is read only when its Content-Type is one its route takes, so a web
// page that a browser holding Basic credentials visits cannot write through "simple" requests
// (text/plain, form-encoded, multipart). Real HTTP against the full composition.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../helpers/server'
import { basicAuth } from '../helpers/calls'

let s: TestServer
const SESSIONS = '/_plugins/_setup/ai_assistant/sessions'
const CSRF_TYPES = ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']

/** Sends bytes, so that fetch adds no Content-Type of its own. */
function send(method: string, path: string, body: string, contentType?: string) {
  const headers: Record<string, string> = { authorization: basicAuth(s.admin) }
  if (contentType !== undefined) headers['content-type'] = contentType
  return fetch(s.url + path, { method, headers, body: new TextEncoder().encode(body) }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }))
}

const ndjson = (...lines: unknown[]) => lines.map((l) => JSON.stringify(l) + '\n').join('')

beforeAll(async () => {
  s = await startTestServer()
})

afterAll(async () => {
  await s?.stop()
})

describe('index API', () => {
  test("JSON routes answer OpenSearch's 406 to the types a browser sends cross-site, and write nothing", async () => {
    for (const type of CSRF_TYPES) {
      const r = await send('PUT', '/ct/_doc/1', '{"a":1}', type)
      expect({ type, status: r.status }).toEqual({ type, status: 406 })
      expect(JSON.parse(r.text)).toEqual({ error: `Content-Type header [${type}] is not supported`, status: 406 })
    }
    expect((await s.request('GET', '/ct/_doc/1')).status).toBe(404)
  })

  test('_bulk takes NDJSON and JSON, nothing else', async () => {
    const body = ndjson({ index: { _index: 'ct-bulk', _id: 'b1' } }, { a: 1 })
    expect((await send('POST', '/_bulk', body, 'text/plain')).status).toBe(406)
    expect((await send('POST', '/_bulk', body, 'application/x-www-form-urlencoded')).status).toBe(406)
    expect((await s.request('GET', '/ct-bulk/_doc/b1')).status).toBe(404)
    expect((await send('POST', '/_bulk?refresh=true', body, 'application/x-ndjson')).status).toBe(200)
    expect((await send('POST', '/_bulk', body, 'application/json; charset=UTF-8')).status).toBe(200)
  })

  test('the route kind decides: NDJSON is not a JSON route’s type', async () => {
    const r = await send('PUT', '/ct/_doc/2', '{"a":1}', 'application/x-ndjson')
    expect(r.status).toBe(406)
    expect(JSON.parse(r.text)).toEqual({ error: 'Content-Type header [application/x-ndjson] is not supported', status: 406 })
  })

  test('JSON with a charset, +json media types, and no Content-Type at all keep working', async () => {
    expect((await send('PUT', '/ct/_doc/3', '{"a":1}', 'application/json; charset=UTF-8')).status).toBe(201)
    expect((await send('PUT', '/ct/_doc/4', '{"a":1}', 'application/vnd.opensearch+json;compatible-with=7')).status).toBe(201)
    expect((await send('PUT', '/ct/_doc/5', '{"a":1}')).status).toBe(201)
    // A request without a body is not judged by its Content-Type.
    expect((await send('POST', '/ct/_refresh', '', 'text/plain')).status).toBe(200)
  })
})

describe('plugin routes', () => {
  test('session writes refuse text/plain, form and multipart with the spec envelope', async () => {
    const body = JSON.stringify({ title: 'csrf', messages: [] })
    for (const type of CSRF_TYPES) {
      const r = await send('POST', SESSIONS, body, type)
      expect({ type, status: r.status }).toEqual({ type, status: 406 })
      expect(JSON.parse(r.text)).toEqual({ message: `Content-Type header [${type}] is not supported`, status: 406 })
    }
    expect((await send('POST', SESSIONS, body, 'application/json')).status).toBeLessThan(300)
  })

  test('Sigma rule routes take YAML types and JSON; a JSON-only route refuses YAML', async () => {
    const rule = 'title: t\nlogsource: {product: linux}\ndetection:\n  sel: {a: 1}\n  condition: sel\n'
    const rules = '/_plugins/_security_analytics/rules?category=linux'
    for (const type of ['application/yaml', 'text/yaml', 'application/json']) {
      expect({ type, status: (await send('POST', rules, rule, type)).status }).not.toEqual({ type, status: 406 })
    }
    expect((await send('POST', rules, rule, 'text/plain')).status).toBe(406)
    expect((await send('POST', SESSIONS, 'title: x\n', 'application/yaml')).status).toBe(406)
  })

  test('Content Manager: YAML for decoders, KVDBs and filters only; other resources are JSON', async () => {
    const kvdb = 'integration: none\nresource: {title: t}\n'
    for (const type of ['application/yaml', 'text/yaml', 'application/json']) {
      const r = await send('POST', '/_plugins/_content_manager/kvdbs', kvdb, type)
      expect({ type, status: r.status }).not.toEqual({ type, status: 406 })
    }
    expect((await send('POST', '/_plugins/_content_manager/rules', kvdb, 'application/yaml')).status).toBe(406)
    expect((await send('POST', '/_plugins/_content_manager/kvdbs', kvdb, 'text/plain')).status).toBe(406)
  })
})

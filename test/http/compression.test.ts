// Compressed HTTP (issue 29 item 9), over real HTTP: gzip and deflate request bodies are decoded
// (the body limits hold for the decoded size), and responses are compressed for clients that accept
// it, as OpenSearch does with http.compression on (its default) at http.compression_level.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { request as httpRequest } from 'node:http'
import { gunzipSync, gzipSync, unzlibSync, zlibSync } from 'fflate'
import { ADMIN, startTestServer, type TestServer } from '../helpers/server'
import { basicAuth } from '../helpers/app'

let server: TestServer
let plain: TestServer
const LIMIT = 64 * 1024

beforeAll(async () => {
  server = await startTestServer({ settings: { 'http.max_body_bytes': LIMIT } })
  plain = await startTestServer({ settings: { 'http.compression': false } })
})
afterAll(async () => {
  await server?.stop()
  await plain?.stop()
})

/** A raw exchange (node:http, which neither adds Accept-Encoding nor decodes): status, headers, body bytes. */
function exchange(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Uint8Array,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Uint8Array }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(base + path, { method, headers: { authorization: basicAuth(ADMIN), ...headers } }, (res) => {
      const parts: Buffer[] = []
      res.on('data', (c: Buffer) => parts.push(c))
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: new Uint8Array(Buffer.concat(parts)) }))
    })
    req.on('error', reject)
    if (body) req.end(Buffer.from(body))
    else req.end()
  })
}

const ndjson = (n: number, index: string) =>
  Array.from({ length: n }, (_, i) => `{"index":{"_index":"${index}","_id":"${i}"}}\n{"n":${i},"text":"event number ${i}"}\n`).join('')
const text = (b: Uint8Array) => new TextDecoder().decode(b)
const NDJSON = 'application/x-ndjson'
const JSON_TYPE = 'application/json'
/** A POST to the node with the 64 KiB body limit, of `body` as sent (already in `coding`). */
const postEncoded = (path: string, contentType: string, coding: string, body: Uint8Array) =>
  exchange(server.url, 'POST', path, { 'content-type': contentType, 'content-encoding': coding }, body)

describe('compressed request bodies', () => {
  test('a gzip _bulk is decoded and indexed', async () => {
    const body = gzipSync(new TextEncoder().encode(ndjson(50, 'gz-bulk')))
    const r = await postEncoded('/_bulk?refresh=true', NDJSON, 'gzip', body)
    expect(r.status).toBe(200)
    const answer = JSON.parse(text(r.body))
    expect(answer.errors).toBe(false)
    expect(answer.items).toHaveLength(50)
    expect((await server.request('GET', '/gz-bulk/_count')).body.count).toBe(50)
  })

  test('a deflate (zlib) JSON body is decoded', async () => {
    const body = zlibSync(new TextEncoder().encode(JSON.stringify({ query: { term: { n: 7 } } })))
    const r = await postEncoded('/gz-bulk/_search', JSON_TYPE, 'deflate', body)
    expect(r.status).toBe(200)
    expect(JSON.parse(text(r.body)).hits.hits.map((h: { _id: string }) => h._id)).toEqual(['7'])
  })

  test('the body limit holds for the decoded size: a small body that expands past it is a 413', async () => {
    const decoded = new TextEncoder().encode(ndjson(2_000, 'gz-bomb'))
    expect(decoded.byteLength).toBeGreaterThan(LIMIT * 2)
    const body = gzipSync(decoded, { level: 9 })
    expect(body.byteLength).toBeLessThan(LIMIT)
    const r = await postEncoded('/_bulk', NDJSON, 'gzip', body)
    expect(r.status).toBe(413)
    expect((await server.request('GET', '/gz-bomb/_count')).status).toBe(404)
  })

  test('a corrupt gzip body and an unknown coding are 400s in OpenSearch shape', async () => {
    const corrupt = await postEncoded('/_bulk', NDJSON, 'gzip', new TextEncoder().encode('{"index":{}}\n'))
    expect(corrupt.status).toBe(400)
    expect(JSON.parse(text(corrupt.body)).error.type).toBe('illegal_argument_exception')
    const br = await postEncoded('/x/_doc', JSON_TYPE, 'br', new Uint8Array([1, 2]))
    expect(br.status).toBe(400)
    expect(JSON.parse(text(br.body)).error.reason).toContain('br')
  })
})

describe('compressed responses', () => {
  test('gzip for a client that accepts it, deflate when preferred, identity otherwise', async () => {
    const gz = await exchange(server.url, 'GET', '/gz-bulk/_search?size=20', { 'accept-encoding': 'gzip' })
    expect(gz.status).toBe(200)
    expect(gz.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(text(gunzipSync(gz.body))).hits.total.value).toBe(50)

    const deflate = await exchange(server.url, 'GET', '/_cluster/health', { 'accept-encoding': 'gzip;q=0.5, deflate' })
    expect(deflate.headers['content-encoding']).toBe('deflate')
    expect(JSON.parse(text(unzlibSync(deflate.body))).cluster_name).toBeString()

    const none = await exchange(server.url, 'GET', '/_cluster/health', {})
    expect(none.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(text(none.body)).cluster_name).toBeString()
    const refused = await exchange(server.url, 'GET', '/_cluster/health', { 'accept-encoding': 'gzip;q=0, br' })
    expect(refused.headers['content-encoding']).toBeUndefined()
  })

  test('an answer under 1 MiB that arrives in pieces is compressed in one go (a content-length, not chunked)', async () => {
    // A body made of one string reaches the compressor in pieces (16 KiB, then the rest), as a _bulk answer does.
    const lines = Array.from({ length: 250 }, (_, i) => `{"create":{}}\n{"n":${i},"s":"${'y'.repeat(150)}"}\n`).join('')
    const r = await exchange(
      server.url,
      'POST',
      '/gz-pieces/_bulk',
      {
        'accept-encoding': 'gzip',
        'content-type': 'application/x-ndjson',
      },
      new TextEncoder().encode(lines),
    )
    expect(r.status).toBe(200)
    expect(r.headers['content-encoding']).toBe('gzip')
    expect(r.headers['transfer-encoding']).toBeUndefined()
    expect(Number(r.headers['content-length'])).toBe(r.body.byteLength)
    const answer = JSON.parse(text(gunzipSync(r.body)))
    expect(answer.items).toHaveLength(250)
    expect(JSON.stringify(answer).length).toBeGreaterThan(16 * 1024)
  })

  test('a streamed answer (over 1 MiB) is compressed as it streams', async () => {
    const big = 'x'.repeat(1_500_000)
    expect((await plain.request('PUT', '/gz-big/_doc/1?refresh=true', { body: { big } })).status).toBe(201)
    const r = await exchange(plain.url, 'GET', '/gz-big/_doc/1', { 'accept-encoding': 'gzip' })
    expect(r.headers['content-encoding']).toBeUndefined() // http.compression: false on this node
    // The node above limits bodies to 64 KiB; this one takes the document.
    const on = await startTestServer()
    try {
      expect((await on.request('PUT', '/gz-big/_doc/1?refresh=true', { body: { big } })).status).toBe(201)
      const gz = await exchange(on.url, 'GET', '/gz-big/_doc/1', { 'accept-encoding': 'gzip' })
      expect(gz.headers['content-encoding']).toBe('gzip')
      expect(gz.headers['transfer-encoding']).toBe('chunked')
      expect(gz.body.byteLength).toBeLessThan(100_000)
      expect(JSON.parse(text(gunzipSync(gz.body)))._source.big).toBe(big)
    } finally {
      await on.stop()
    }
  })

  test('plugin routes and errors are compressed too; http.compression: false turns it off', async () => {
    const missing = await exchange(server.url, 'GET', '/nope/_doc/1', { 'accept-encoding': 'gzip' })
    expect(missing.status).toBe(404)
    expect(JSON.parse(text(gunzipSync(missing.body))).error.type).toBe('index_not_found_exception')
    const plugin = await exchange(server.url, 'GET', '/_plugins/_security/authinfo', { 'accept-encoding': 'gzip' })
    expect(plugin.headers['content-encoding']).toBe('gzip')
    expect(JSON.parse(text(gunzipSync(plugin.body))).user_name).toBe(ADMIN.name)
    const off = await exchange(plain.url, 'GET', '/_cluster/health', { 'accept-encoding': 'gzip' })
    expect(off.headers['content-encoding']).toBeUndefined()
    expect(JSON.parse(text(off.body)).status).toBeString()
  })
})

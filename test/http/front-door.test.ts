import { describe, expect, test } from 'bun:test'
import { frontDoor } from '../../src/http/front-door'

/** A server whose only job is to show what the router would see. */
async function through(host: string, init: RequestInit & { path?: string } = {}) {
  const srv = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (request) =>
      frontDoor(request, async (r) => new Response(JSON.stringify({ url: r.url, host: r.headers.get('host'), body: await r.text() }))),
  })
  try {
    const res = await fetch(`http://127.0.0.1:${srv.port}${init.path ?? '/_cat/indices?v'}`, { ...init, headers: { host } })
    return { status: res.status, body: (await res.json()) as any }
  } finally {
    srv.stop(true)
  }
}

describe('front door', () => {
  test('a usual host passes untouched', async () => {
    expect((await through('indexer.example:9200')).body.url).toBe('http://indexer.example:9200/_cat/indices?v')
  })

  test('a short host is routed on a placeholder URL; the Host header and the body stay', async () => {
    for (const host of ['es', 'x', 'abc']) {
      const r = await through(host, { method: 'PUT', body: '{"a":1}' })
      expect(r.body).toEqual({ url: 'http://localhost/_cat/indices?v', host, body: '{"a":1}' })
    }
  })

  test('a Host the server cannot make a URL of is a 400 in the envelope', async () => {
    for (const host of ['', 'a b', 'x/y', '[::1']) {
      expect(await through(host)).toEqual({ status: 400, body: { message: 'Invalid Host header.', status: 400 } })
    }
  })
})

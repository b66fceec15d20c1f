/**
 * Body limits of every write route, read from the routes' own declarations and held to the spec's
 * statuses: 400 for the session routes (5 MiB), 413 for logtest (its dynamic setting) and 413
 * everywhere else. One byte over is refused, with a declared length and streamed without one, and
 * the streamed body is abandoned rather than read to its end; a body of exactly the limit is not
 * refused for its size.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { PluginRoute } from '../../src/http/route'
import { startTestServer, type TestServer } from '../helpers/server'
import { basicAuth, fillPath } from '../helpers/calls'

const SESSIONS = '/_plugins/_setup/ai_assistant/sessions'
const LOGTEST = '/_plugins/_content_manager/logtest'
const SESSION_LIMIT = 5 * 1024 * 1024
const LOGTEST_LIMIT = 1024

let server: TestServer
let routes: PluginRoute[]
let auth: string

beforeAll(async () => {
  server = await startTestServer({
    settings: {
      'plugins.content_manager.cti.api': 'http://127.0.0.1:9/api/v1',
      'plugins.content_manager.logtest.max_body_bytes': LOGTEST_LIMIT,
    },
    logLines: [],
  })
  routes = server.server.app.pluginRoutes
  auth = basicAuth(server.admin)
}, 30_000)
afterAll(() => server?.stop())

/** The spec's answer to an over-size body on this route. */
const specStatus = (r: PluginRoute) => (r.path.startsWith(SESSIONS) ? 400 : 413)
const fill = (path: string) => fillPath(path, (name) => (name === 'space' ? 'draft' : 'limit-probe'))
const key = (r: PluginRoute) => `${r.method} ${r.path}`
/** Routes that read a body; GET ones (`logtype/_search`) cannot be sent one by fetch. */
const limited = () => routes.filter((r) => r.method !== 'GET' && (r.body || r.path.startsWith(LOGTEST)))

/** A JSON object of exactly `size` bytes. */
function padded(size: number): string {
  const shell = '{"pad":""}'
  return `{"pad":"${'x'.repeat(size - shell.length)}"}`
}

async function sendFixed(r: PluginRoute, size: number) {
  const res = await fetch(server.url + fill(r.path), {
    method: r.method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body: padded(size),
  })
  return { status: res.status, body: (await res.json()) as { message: string; status: number } }
}

/** Streams `total` bytes in 64 KiB chunks without a Content-Length; reports how many the server made us produce. */
async function sendStreamed(r: PluginRoute, total: number) {
  const chunk = new TextEncoder().encode('x'.repeat(64 * 1024))
  let produced = 0
  let first = true
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (produced >= total) return controller.close()
      const piece = first ? new TextEncoder().encode('{"pad":"') : chunk
      first = false
      produced += piece.byteLength
      controller.enqueue(piece)
    },
  })
  const res = await fetch(server.url + fill(r.path), {
    method: r.method,
    headers: { authorization: auth, 'content-type': 'application/json' },
    body,
    duplex: 'half',
  } as RequestInit)
  const answer = { status: res.status, body: (await res.json()) as { message: string; status: number } }
  return { ...answer, produced }
}

function limitOf(r: PluginRoute): number {
  if (r.path.startsWith(LOGTEST)) return LOGTEST_LIMIT
  return r.body!.limit.limit
}

describe('body limits', () => {
  test("the routes' declared limits carry the spec's statuses and the spec's session limit", () => {
    const declared = routes.filter((r) => r.body)
    expect(declared.length).toBeGreaterThan(20)
    for (const r of declared)
      expect({ route: key(r), status: r.body!.limit.status ?? 413 }).toEqual({ route: key(r), status: specStatus(r) })
    for (const r of declared.filter((r) => r.path.startsWith(SESSIONS))) expect(r.body!.limit.limit).toBe(SESSION_LIMIT)
  })

  test("one byte over the limit is refused with the spec's status; exactly the limit is not refused for size", async () => {
    const checked: string[] = []
    for (const r of limited()) {
      const limit = limitOf(r)
      const over = await sendFixed(r, limit + 1)
      expect({ route: key(r), status: over.status, envelope: over.body.status }).toEqual({
        route: key(r),
        status: specStatus(r),
        envelope: specStatus(r),
      })
      const at = await sendFixed(r, limit)
      expect({ route: key(r), message: at.body.message === over.body.message }).toEqual({ route: key(r), message: false })
      checked.push(key(r))
    }
    expect(checked).toContain(`POST ${LOGTEST}`)
    expect(checked).toContain(`POST ${SESSIONS}`)
  }, 60_000)

  test('a streamed body without Content-Length is refused at the limit, not read to its end', async () => {
    const EXTRA = 32 * 1024 * 1024
    for (const r of limited()) {
      const limit = limitOf(r)
      const sent = await sendStreamed(r, limit + EXTRA)
      expect({ route: key(r), status: sent.status, envelope: sent.body.status }).toEqual({
        route: key(r),
        status: specStatus(r),
        envelope: specStatus(r),
      })
      // Socket buffers on both sides hold up to a few MiB past the limit; reading the body whole would take 32.
      expect({ route: key(r), abandoned: sent.produced < limit + 4 * 1024 * 1024 }).toEqual({ route: key(r), abandoned: true })
    }
  }, 120_000)

  test('the server still answers afterwards', async () => {
    expect((await server.request('GET', '/_plugins/_security/authinfo')).status).toBe(200)
  })
})

// The three logtest routes over HTTP with `engine.mock` (the shared test server's default):
// validation messages and statuses, the body limit (413 before parsing, declared or streamed, and
// changed at runtime), mock-mode answers, and who may call what.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../../helpers/server'
import { basicAuth } from '../../helpers/calls'

const LOGTEST = '/_plugins/_content_manager/logtest'
const NORMALIZATION = `${LOGTEST}/normalization`
const DETECTION = `${LOGTEST}/detection`
const LIMIT_KEY = 'plugins.content_manager.logtest.max_body_bytes'
const LIMIT = 1024

const user = (name: string) => ({ name, password: `${name}-pw-1` })
const USERS = {
  combined: user('combined'),
  split: user('split'),
  normOnly: user('normonly'),
  detectOnly: user('detectonly'),
  rawCombined: user('rawcombined'),
  rawDetection: user('rawdetection'),
}

let s: TestServer

beforeAll(async () => {
  s = await startTestServer({
    logLines: [],
    settings: { [LIMIT_KEY]: LIMIT },
    roles: {
      r_combined: { cluster_permissions: ['plugin:content_manager/logtest'] },
      r_split: { cluster_permissions: ['plugin:content_manager/logtest/*'] },
      r_norm: { cluster_permissions: ['plugin:content_manager/logtest/normalization'] },
      r_detect: { cluster_permissions: ['plugin:content_manager/logtest/detection'] },
      // The raw route actions without `rules/evaluate`.
      r_raw_combined: { cluster_permissions: ['cluster:monitor/content_manager/logtest'] },
      r_raw_detection: { cluster_permissions: ['cluster:monitor/content_manager/logtest/detection'] },
    },
    users: [
      { ...USERS.combined, roles: ['r_combined'] },
      { ...USERS.split, roles: ['r_split'] },
      { ...USERS.normOnly, roles: ['r_norm'] },
      { ...USERS.detectOnly, roles: ['r_detect'] },
      { ...USERS.rawCombined, roles: ['r_raw_combined'] },
      { ...USERS.rawDetection, roles: ['r_raw_detection'] },
    ],
  })
})
afterAll(() => s.stop())

const event = { queue: 1, location: '/var/log/app.log', event: '10.0.0.1 - alice "GET /admin"', trace_level: 'NONE' }

describe('validation', () => {
  const cases: Array<[string, string, unknown, string]> = [
    // combined
    [LOGTEST, 'empty body', '', 'Invalid request body.'],
    [LOGTEST, 'malformed JSON', '{"space": ', 'Invalid request body.'],
    [LOGTEST, 'a JSON array', '[]', 'Invalid request body.'],
    [LOGTEST, 'no space', { ...event }, 'Missing [space] field.'],
    [LOGTEST, 'null space', { ...event, space: null }, 'Missing [space] field.'],
    [LOGTEST, 'blank space', { ...event, space: '  ' }, 'Missing [space] field.'],
    [
      LOGTEST,
      'draft',
      { ...event, space: 'draft' },
      "Logtest is only supported for the 'test', 'custom' and 'standard' spaces. Received space: 'draft'.",
    ],
    [
      LOGTEST,
      'unknown space',
      { ...event, space: 'prod' },
      "Logtest is only supported for the 'test', 'custom' and 'standard' spaces. Received space: 'prod'.",
    ],
    [
      LOGTEST,
      'non-string space',
      { ...event, space: 7 },
      "Logtest is only supported for the 'test', 'custom' and 'standard' spaces. Received space: '7'.",
    ],
    [LOGTEST, 'non-string integration', { ...event, space: 'test', integration: 5 }, "Invalid 'integration' format."],
    [
      LOGTEST,
      'unknown integration',
      { ...event, space: 'custom', integration: 'nope' },
      "Integration [nope] not found in the 'custom' space.",
    ],
    // normalization
    [NORMALIZATION, 'empty body', '', 'Invalid request body.'],
    [NORMALIZATION, 'malformed JSON', 'queue=1', 'Invalid request body.'],
    [NORMALIZATION, 'no space', { ...event }, 'Missing [space] field.'],
    [
      NORMALIZATION,
      'draft',
      { ...event, space: 'draft' },
      "Logtest is only supported for the 'test' and 'standard' spaces. Received space: 'draft'.",
    ],
    [
      NORMALIZATION,
      'custom',
      { ...event, space: 'custom' },
      "Logtest is only supported for the 'test' and 'standard' spaces. Received space: 'custom'.",
    ],
    // detection
    [DETECTION, 'empty body', '', 'Invalid request body.'],
    [DETECTION, 'malformed JSON', '{', 'Invalid request body.'],
    [DETECTION, 'no space', { integration: 'x', input: {} }, 'Missing [space] field.'],
    [DETECTION, 'no integration', { space: 'test', input: {} }, 'Missing [integration] field.'],
    [DETECTION, 'blank integration', { space: 'test', integration: '', input: {} }, 'Missing [integration] field.'],
    [DETECTION, 'no input', { space: 'test', integration: 'x' }, 'Missing [input] field.'],
    [DETECTION, 'all missing: space first', {}, 'Missing [space] field.'],
    [
      DETECTION,
      'custom',
      { space: 'custom', integration: 'x', input: {} },
      "Logtest is only supported for the 'test' and 'standard' spaces. Received space: 'custom'.",
    ],
    [DETECTION, 'string input', { space: 'test', integration: 'x', input: '{"a":1}' }, "Invalid 'input' format."],
    [DETECTION, 'array input', { space: 'test', integration: 'x', input: [{ a: 1 }] }, "Invalid 'input' format."],
    [DETECTION, 'non-string integration', { space: 'test', integration: ['x'], input: {} }, "Invalid 'integration' format."],
    [
      DETECTION,
      'unknown integration',
      { space: 'standard', integration: 'nope', input: { a: 1 } },
      "Integration [nope] not found in the 'standard' space.",
    ],
  ]
  for (const [path, what, body, message] of cases) {
    test(`${path.slice(LOGTEST.length) || '/logtest'}: ${what} -> 400`, async () => {
      const r = await s.request('POST', path, { body })
      expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { message, status: 400 } })
    })
  }
})

describe('mock mode (reference 3.5)', () => {
  test('normalization answers the mocked Engine message and status', async () => {
    const r = await s.request('POST', NORMALIZATION, { body: { ...event, space: 'test', integration: 'ignored' } })
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: { message: 'OK', status: 200 } })
  })

  test("combined without integration: the non-JSON 'OK' is a PARSE_ERROR and detection is skipped", async () => {
    for (const space of ['test', 'custom', 'standard']) {
      const r = await s.request('POST', LOGTEST, { body: { ...event, space } })
      expect({ space, status: r.status, body: r.body }).toEqual({
        space,
        status: 200,
        body: {
          status: 200,
          message: {
            normalization: { status: 'error', error: { message: 'OK', code: 'PARSE_ERROR' } },
            detection: { status: 'skipped', reason: "'integration' field not provided" },
          },
        },
      })
    }
  })

  test('combined with a null integration is the same as none', async () => {
    const r = await s.request('POST', LOGTEST, { body: { ...event, space: 'test', integration: null } })
    expect(r.status).toBe(200)
    expect(r.body.message.detection).toEqual({ status: 'skipped', reason: "'integration' field not provided" })
  })
})

describe('body limit (413 before parsing)', () => {
  /** A body of exactly `size` bytes that is not JSON: only a size check can tell 413 from 400. */
  const junk = (size: number) => 'x'.repeat(size)

  for (const path of [LOGTEST, NORMALIZATION, DETECTION]) {
    test(`${path}: limit+1 bytes -> 413, limit bytes -> parsed (400 for junk)`, async () => {
      const over = await s.request('POST', path, { body: junk(LIMIT + 1) })
      expect({ status: over.status, body: over.body }).toEqual({
        status: 413,
        body: { message: `logtest payload exceeds the maximum allowed size of ${LIMIT} bytes.`, status: 413 },
      })
      const at = await s.request('POST', path, { body: junk(LIMIT) })
      expect({ status: at.status, body: at.body }).toEqual({ status: 400, body: { message: 'Invalid request body.', status: 400 } })
    })

    test(`${path}: a streamed (chunked) body over the limit -> 413`, async () => {
      const chunk = new TextEncoder().encode('y'.repeat(300))
      let sent = 0
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent >= 8) return controller.close()
          sent++
          controller.enqueue(chunk)
        },
      })
      const res = await fetch(s.url + path, {
        method: 'POST',
        headers: { authorization: basicAuth(s.admin), 'content-type': 'application/json' },
        body,
        duplex: 'half', // a stream body needs it
      } as RequestInit)
      expect(res.status).toBe(413)
      expect(await res.json()).toEqual({ message: `logtest payload exceeds the maximum allowed size of ${LIMIT} bytes.`, status: 413 })
    })
  }

  test('a valid request padded past the limit is refused, then accepted once the limit is raised at runtime', async () => {
    const padded = { ...event, space: 'test', location: 'L'.repeat(1500) }
    const size = JSON.stringify(padded).length
    expect(size).toBeGreaterThan(LIMIT)
    expect((await s.request('POST', NORMALIZATION, { body: padded })).status).toBe(413)

    const put = await s.request('PUT', '/_cluster/settings', { body: { persistent: { [LIMIT_KEY]: size } } })
    expect(put.status).toBe(200)
    await Bun.sleep(1100) // settings are cached for at most 1 s
    expect((await s.request('POST', NORMALIZATION, { body: padded })).status).toBe(200)
    // Exactly at the new limit passes, one byte more does not.
    const plusOne = { ...padded, location: padded.location + 'L' }
    const r = await s.request('POST', NORMALIZATION, { body: plusOne })
    expect({ status: r.status, body: r.body }).toEqual({
      status: 413,
      body: { message: `logtest payload exceeds the maximum allowed size of ${size} bytes.`, status: 413 },
    })

    await s.request('PUT', '/_cluster/settings', { body: { persistent: { [LIMIT_KEY]: LIMIT } } })
    await Bun.sleep(1100)
    expect((await s.request('POST', NORMALIZATION, { body: padded })).status).toBe(413)
  })
})

describe('permissions (spec Authentication 4)', () => {
  const valid: Record<string, unknown> = {
    [LOGTEST]: { ...event, space: 'test' },
    [NORMALIZATION]: { ...event, space: 'test' },
    [DETECTION]: { space: 'test', integration: 'nope', input: { a: 1 } },
  }
  // What each route answers a permitted caller with these bodies (mock Engine, unknown integration).
  const permitted: Record<string, number> = { [LOGTEST]: 200, [NORMALIZATION]: 200, [DETECTION]: 400 }
  const expected: Record<keyof typeof USERS, Record<string, boolean>> = {
    combined: { [LOGTEST]: true, [NORMALIZATION]: false, [DETECTION]: false },
    split: { [LOGTEST]: false, [NORMALIZATION]: true, [DETECTION]: true },
    normOnly: { [LOGTEST]: false, [NORMALIZATION]: true, [DETECTION]: false },
    detectOnly: { [LOGTEST]: false, [NORMALIZATION]: false, [DETECTION]: true },
    rawCombined: { [LOGTEST]: false, [NORMALIZATION]: false, [DETECTION]: false },
    rawDetection: { [LOGTEST]: false, [NORMALIZATION]: false, [DETECTION]: false },
  }
  for (const [who, routes] of Object.entries(expected) as Array<[keyof typeof USERS, Record<string, boolean>]>) {
    test(`${who}`, async () => {
      for (const [path, allowed] of Object.entries(routes)) {
        const r = await s.request('POST', path, { body: valid[path], user: USERS[who] })
        expect({ who, path, status: r.status }).toEqual({ who, path, status: allowed ? permitted[path] : 403 })
      }
    })
  }

  test('holding the route action without rules/evaluate: 403 naming rules/evaluate, before the body is read', async () => {
    for (const [who, path] of [
      ['rawCombined', LOGTEST],
      ['rawDetection', DETECTION],
    ] as const) {
      const r = await s.request('POST', path, { body: 'z'.repeat(LIMIT + 1), user: USERS[who] })
      expect({ who, status: r.status }).toEqual({ who, status: 403 })
      expect(r.body.message).toContain('cluster:admin/svc/securityanalytics/rules/evaluate')
      expect(r.body.message).toContain(`name=${USERS[who].name}`)
    }
  })

  test('no credentials -> 401 on every route', async () => {
    for (const path of [LOGTEST, NORMALIZATION, DETECTION]) {
      expect((await s.request('POST', path, { body: valid[path], user: null })).status).toBe(401)
    }
  })
})

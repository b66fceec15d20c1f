// Logtest against the Engine test server and the real Ruleset Management: content built in draft
// through the API and promoted to `test`, then the three routes end to end; the Engine's statuses
// and messages passed through; the Engine refusing or gone.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { startEngineServer, type EngineServer } from '../../fixtures/engine/server'
import { startTestServer, type TestServer } from '../../helpers/server'

const CM = '/_plugins/_content_manager'
const LOGTEST = `${CM}/logtest`
const NORMALIZATION = `${LOGTEST}/normalization`
const DETECTION = `${LOGTEST}/detection`
const LIMIT = 2048

let engine: EngineServer
let s: TestServer
const ids = { web: '', quiet: '', adminRule: '', bobRule: '' }
let adminRule: { resource: Record<string, unknown> }

const RAW = '10.0.0.7 - alice "GET /admin/users"'
const request = (extra: Record<string, unknown> = {}) => ({
  space: 'test',
  queue: 1,
  location: '/var/log/web/access.log',
  event: RAW,
  trace_level: 'NONE',
  ...extra,
})

async function create(kind: string, body: unknown): Promise<string> {
  const r = await s.request('POST', `${CM}/${kind}`, { body })
  expect({ kind, status: r.status, body: r.body }).toMatchObject({ kind, status: 201 })
  return r.body.message
}

beforeAll(async () => {
  engine = startEngineServer()
  s = await startTestServer({
    logLines: [], // the Engine failures provoked here are logged; keep the output readable
    settings: {
      'plugins.content_manager.engine.mock': false,
      'plugins.content_manager.engine.socket_path': engine.socketPath,
      'plugins.content_manager.logtest.max_body_bytes': LIMIT,
    },
  })
  // Draft content: an integration with a decoder and two rules, and one with neither.
  ids.web = await create('integrations', {
    resource: { metadata: { title: 'web-access', author: 'ACME', description: 'Web access logs' }, category: 'applications' },
  })
  ids.quiet = await create('integrations', {
    resource: { metadata: { title: 'quiet-app', author: 'ACME', description: 'No rules' }, category: 'applications' },
  })
  await create('decoders', {
    integration: ids.web,
    resource: {
      name: 'decoder/web-access/0',
      metadata: { title: 'Web access', author: 'ACME' },
      check: [{ 'event.original': 'exists()' }],
      'parse|event.original': ['<source.ip> - <user.name> "<http.request.method> <url.original>"'],
      normalize: [{ map: [{ 'event.kind': 'event' }, { 'event.category': 'web' }] }],
    },
  })
  const rule = (title: string, level: string, selection: Record<string, unknown>) => ({
    integration: ids.web,
    resource: {
      metadata: { title, author: 'ACME' },
      status: 'experimental',
      level,
      logsource: { product: 'web-access', category: 'webserver' },
      detection: { condition: 'selection', selection },
    },
  })
  // Fields the events streams map: a detector (and so logtest) matches nothing on unmapped ones.
  adminRule = rule('Admin area requested', 'medium', { 'event.kind': 'event', 'url.original|startswith': '/admin' })
  ids.adminRule = await create('rules', adminRule)
  ids.bobRule = await create('rules', rule('Bob seen', 'low', { 'user.name': 'bob' }))

  const preview = await s.request('GET', `${CM}/promote?space=draft`)
  expect(preview.status).toBe(200)
  const promoted = await s.request('POST', `${CM}/promote`, { body: { space: 'draft', changes: preview.body.changes } })
  expect({ status: promoted.status, body: promoted.body }).toMatchObject({ status: 200 })
  // The promotion loaded the test space into the Engine's tester session of that name.
  expect(engine.sessions.has('test')).toBe(true)
})

afterAll(async () => {
  await s.stop()
  await engine.stop()
})

afterEach(() => {
  engine.heal()
  engine.restart()
})

const logtestCalls = () => engine.requestsTo('/logtest').length

describe('end to end on the test space', () => {
  test('combined: the normalized event and the matched rule with its matched conditions', async () => {
    const r = await s.request('POST', LOGTEST, { body: request({ integration: ids.web, trace_level: 'ASSET_ONLY' }) })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(200)
    const { normalization, detection } = r.body.message
    expect(normalization.output).toMatchObject({
      event: { original: RAW, kind: 'event', category: 'web' },
      source: { ip: '10.0.0.7' },
      user: { name: 'alice' },
      http: { request: { method: 'GET' } },
      url: { original: '/admin/users' },
      svc: { space: { name: 'test' }, integration: { name: 'web-access' } },
    })
    expect(normalization.asset_traces).toEqual([{ asset: 'decoder/web-access/0', success: true, traces: [] }])
    expect(normalization.validation).toEqual({ valid: true, errors: [] })

    expect(detection).toMatchObject({ status: 'success', rules_evaluated: 2, rules_matched: 1 })
    expect(detection.matches).toHaveLength(1)
    expect(detection.matches[0].rule).toEqual({ id: ids.adminRule, title: 'Admin area requested', level: 'medium', tags: [] })
    expect([...detection.matches[0].matched_conditions].sort()).toEqual(["event.kind matched 'event'", "url.original matched '/admin*'"])

    // What the Engine was sent: the body minus `integration`.
    const sent = engine.requestsTo('/logtest').at(-1)!.body
    expect(sent).toEqual({ space: 'test', queue: 1, location: '/var/log/web/access.log', event: RAW, trace_level: 'ASSET_ONLY' })
  })

  test('combined: another event matches the other rule, not the first', async () => {
    const r = await s.request('POST', LOGTEST, { body: request({ integration: ids.web, event: '10.0.0.8 - bob "POST /login"' }) })
    const { detection } = r.body.message
    expect(detection).toMatchObject({ status: 'success', rules_evaluated: 2, rules_matched: 1 })
    expect(detection.matches.map((m: any) => m.rule.id)).toEqual([ids.bobRule])
    expect(detection.matches[0].matched_conditions).toEqual(["user.name matched 'bob'"])
  })

  test('combined without integration: the Engine result, detection skipped', async () => {
    const r = await s.request('POST', LOGTEST, { body: request() })
    expect(r.status).toBe(200)
    expect(r.body.message.normalization.output.url.original).toBe('/admin/users')
    expect(r.body.message.detection).toEqual({ status: 'skipped', reason: "'integration' field not provided" })
  })

  test('combined: an integration without rules evaluates nothing', async () => {
    const r = await s.request('POST', LOGTEST, { body: request({ integration: ids.quiet }) })
    expect(r.status).toBe(200)
    expect(r.body.message.detection).toEqual({ status: 'success', rules_evaluated: 0, rules_matched: 0, matches: [] })
  })

  test('combined: an integration of another space is 400 and the Engine is not asked', async () => {
    const before = logtestCalls()
    const r = await s.request('POST', LOGTEST, { body: request({ space: 'custom', integration: ids.web }) })
    expect({ status: r.status, body: r.body }).toEqual({
      status: 400,
      body: { message: `Integration [${ids.web}] not found in the 'custom' space.`, status: 400 },
    })
    expect(logtestCalls()).toBe(before)
  })

  test('normalization: the Engine result as message, status 200, integration stripped', async () => {
    const r = await s.request('POST', NORMALIZATION, { body: request({ integration: ids.web }) })
    expect(r.status).toBe(200)
    expect(Object.keys(r.body).sort()).toEqual(['message', 'status'])
    expect(r.body.status).toBe(200)
    expect(Object.keys(r.body.message).sort()).toEqual(['asset_traces', 'output', 'validation'])
    expect(r.body.message.output.http.request.method).toBe('GET')
    expect(engine.requestsTo('/logtest').at(-1)!.body).not.toHaveProperty('integration')
  })

  test('detection: a normalized input is evaluated without the Engine', async () => {
    const combined = await s.request('POST', LOGTEST, { body: request({ integration: ids.web }) })
    const before = logtestCalls()
    const r = await s.request('POST', DETECTION, {
      body: { space: 'test', integration: ids.web, input: combined.body.message.normalization.output },
    })
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ message: combined.body.message.detection, status: 200 })
    expect(logtestCalls()).toBe(before)

    const none = await s.request('POST', DETECTION, {
      body: { space: 'test', integration: ids.web, input: { user: { name: 'carol' }, url: { original: '/admin' } } },
    })
    expect(none.body).toEqual({ message: { status: 'success', rules_evaluated: 2, rules_matched: 0, matches: [] }, status: 200 })
  })

  test('detection: the draft copy of the integration is not the test one', async () => {
    const r = await s.request('POST', DETECTION, { body: { space: 'standard', integration: ids.web, input: { a: 1 } } })
    expect(r.body).toEqual({ message: `Integration [${ids.web}] not found in the 'standard' space.`, status: 400 })
  })
})

describe('Engine answers passed through (reference 3.3.3)', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['queue missing', { queue: undefined }, 'queue is required and must be non-zero (1..255)'],
    ['queue out of range', { queue: 300 }, 'Invalid queue: 300 (must be 1..255)'],
    ['trace level of the OpenAPI', { trace_level: 'BASIC' }, 'Invalid trace level: BASIC. Only support: NONE, ASSET_ONLY, ALL'],
    ['blank event', { event: '   ' }, 'event is required and cannot be empty'],
  ]
  for (const [what, change, message] of cases) {
    test(`normalization: ${what} -> the Engine's 400 and text`, async () => {
      const r = await s.request('POST', NORMALIZATION, { body: request(change) })
      expect({ status: r.status, body: r.body }).toEqual({ status: 400, body: { message, status: 400 } })
    })
    test(`combined: ${what} -> 200 with ENGINE_ERROR, detection skipped`, async () => {
      const r = await s.request('POST', LOGTEST, { body: request({ ...change, integration: ids.web }) })
      expect({ status: r.status, body: r.body }).toEqual({
        status: 200,
        body: {
          status: 200,
          message: {
            normalization: { status: 'error', error: { message, code: 'ENGINE_ERROR' } },
            detection: { status: 'skipped', reason: 'Engine processing failed' },
          },
        },
      })
    })
  }

  test('a space with no loaded session: the Engine refuses and the status is passed on', async () => {
    const r = await s.request('POST', NORMALIZATION, { body: request({ space: 'standard' }) })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({ message: expect.stringContaining("Session 'standard' does not exist"), status: 400 })
  })

  test('an Engine 500 reaches the normalization caller as 500 with its text', async () => {
    engine.refuseNext(500, 'Timeout waiting for ingestTest', '/logtest')
    const r = await s.request('POST', NORMALIZATION, { body: request() })
    expect({ status: r.status, body: r.body }).toEqual({ status: 500, body: { message: 'Timeout waiting for ingestTest', status: 500 } })
  })
})

describe('Engine gone', () => {
  for (const stale of [false, true]) {
    test(`socket ${stale ? 'left behind by a dead Engine' : 'absent'}: normalization 500, combined 200 with ENGINE_ERROR`, async () => {
      await engine.vanish({ stale })
      const n = await s.request('POST', NORMALIZATION, { body: request() })
      expect(n.status).toBe(500)
      expect(n.body.status).toBe(500)
      expect(n.body.message).toContain('The Engine cannot be reached because its API socket is not available')
      expect(n.body.message).toContain(engine.socketPath)

      const c = await s.request('POST', LOGTEST, { body: request({ integration: ids.web }) })
      expect(c.status).toBe(200)
      expect(c.body.message.normalization).toEqual({ status: 'error', error: { message: n.body.message, code: 'ENGINE_ERROR' } })
      expect(c.body.message.detection).toEqual({ status: 'skipped', reason: 'Engine processing failed' })

      // Detection does not need the Engine.
      const d = await s.request('POST', DETECTION, { body: { space: 'test', integration: ids.web, input: { user: { name: 'bob' } } } })
      expect(d.body.message).toMatchObject({ status: 'success', rules_matched: 1 })
    })
  }
})

test('an oversized body never reaches the Engine', async () => {
  const before = logtestCalls()
  const r = await s.request('POST', LOGTEST, { body: request({ integration: ids.web, location: 'L'.repeat(LIMIT) }) })
  expect(r.status).toBe(413)
  expect(logtestCalls()).toBe(before)
})

test('a burst beyond the pool and its queue is shed with 429; the rest are served', async () => {
  engine.stall(25)
  const before = logtestCalls()
  try {
    const replies = await Promise.all(Array.from({ length: 140 }, () => s.request('POST', NORMALIZATION, { body: request() })))
    const busy = replies.filter((r) => r.status === 429)
    expect(busy.length).toBeGreaterThan(0)
    for (const r of busy)
      expect(r.body).toEqual({ message: 'logtest is busy: too many concurrent requests. Please retry later.', status: 429 })
    expect(replies.filter((r) => r.status === 200).length).toBe(140 - busy.length)
    // The shed requests never reached the Engine.
    expect(logtestCalls() - before).toBe(140 - busy.length)
  } finally {
    engine.stall(0)
  }
  expect((await s.request('POST', NORMALIZATION, { body: request() })).status).toBe(200)
})

test('a disabled rule is not evaluated once the change is promoted', async () => {
  const put = await s.request('PUT', `${CM}/rules/${ids.adminRule}`, { body: { resource: { ...adminRule.resource, enabled: false } } })
  expect({ status: put.status, body: put.body }).toMatchObject({ status: 200 })
  const preview = await s.request('GET', `${CM}/promote?space=draft`)
  expect((await s.request('POST', `${CM}/promote`, { body: { space: 'draft', changes: preview.body.changes } })).status).toBe(200)

  const r = await s.request('POST', LOGTEST, { body: request({ integration: ids.web }) })
  expect(r.body.message.detection).toEqual({ status: 'success', rules_evaluated: 1, rules_matched: 0, matches: [] })
})

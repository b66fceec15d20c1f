// The CTI-facing routes over real HTTP on the full composition: on-demand update, subscription
// (register, read, remove, permission check) and the version check, against the CTI test server.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { INTERNAL_STATE_INDEX, CTI_CREDENTIALS_DOC_ID } from '../../../src/setup/indices'
import { payloads, startCtiServer, type CtiServer } from '../../fixtures/cti/server'
import { startTestServer, type TestServer } from '../../helpers/server'

const PW = 'Cti-route-pw-1'
const TOKEN = 'secret-cti-token-4f9a'
const P = '/_plugins/_content_manager'

let cti: CtiServer
let server: TestServer
const logLines: string[] = []

beforeAll(async () => {
  cti = startCtiServer()
  cti.publicPlans = [
    { name: 'Free', is_public: true, features: [] },
    { name: 'Pro Plan', is_public: false, features: [] },
  ]
  cti.tokens.add(TOKEN)
  // Every pass reads this IoC feed, so a slowed CTI keeps a pass running.
  const iocs = cti.consumer('t1-iocs-5', 'public-iocs-5')
  iocs.create('1', payloads.ioc('1'))
  iocs.publishSnapshot()
  server = await startTestServer({
    settings: { 'plugins.content_manager.cti.api': cti.base, 'plugins.content_manager.catalog.iocs': iocs.url },
    logLines,
    users: [
      { name: 'viewer', password: PW, roles: ['cm_viewer'] },
      { name: 'nobody', password: PW },
    ],
    roles: { cm_viewer: { cluster_permissions: ['plugin:content_manager/subscription/get', 'plugin:content_manager/version/check'] } },
  })
})
afterAll(async () => {
  await server?.stop()
  await cti?.stop()
})
/** Waits until no sync pass holds the cluster sync lock (passes started by a test end before the next test). */
async function settle(target: TestServer = server) {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const lock = await target.request('GET', '/.svc-content-manager-resource-locks/_doc/catalog-sync')
    if (lock.status === 404) return
    await Bun.sleep(50)
  }
  throw new Error('a sync pass did not finish')
}

afterEach(async () => {
  await settle()
  await server.server.app.deps.store.delete({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID, refresh: true }).catch(() => {})
  cti.clear()
})

const as = (name: string) => ({ name, password: PW })

describe('subscription', () => {
  test('unregistered: GET reports the first public plan and is_registered false', async () => {
    const r = await server.request('GET', `${P}/subscription`)
    expect(r.status).toBe(200)
    expect(r.body).toEqual({ message: { plan: { name: 'Free', is_public: true }, is_registered: false }, status: 200 })
    expect(cti.requestsTo('/catalog/plans')).toHaveLength(1)
  })

  test('POST registers the token (Base64 in .svc-internal-state), GET then shows the environment plan, DELETE forgets it', async () => {
    cti.environmentPlan = { name: 'Pro Plan', is_public: false, features: [] }
    const post = await server.request('POST', `${P}/subscription`, { body: { access_token: TOKEN } })
    expect(post.status).toBe(201)
    expect(post.body.status).toBe(201)
    const stored = await server.server.app.deps.store.get({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID })
    expect(stored.found).toBe(true)
    expect((stored as any)._source.access_token).toBe(Buffer.from(TOKEN).toString('base64'))

    const get = await server.request('GET', `${P}/subscription`)
    expect(get.body).toEqual({ message: { plan: { name: 'Pro Plan', is_public: false }, is_registered: true }, status: 200 })
    const me = cti.requestsTo('/platform/environments/me')
    expect(me.length).toBeGreaterThan(0)
    expect(me[0].headers.authorization).toBe(`Bearer ${TOKEN}`)
    expect(me[0].headers['svc-tag']).toBe('v5.0.0')

    const del = await server.request('DELETE', `${P}/subscription`)
    expect(del.body).toEqual({ message: 'Credentials removed', status: 200 })
    const again = await server.request('DELETE', `${P}/subscription`)
    expect(again.status).toBe(200)
    const after = await server.request('GET', `${P}/subscription`)
    expect(after.body.message.is_registered).toBe(false)
    // The token never shows in an answer or in the log.
    for (const r of [post, get, del, after]) expect(r.text).not.toContain(TOKEN)
    expect(logLines.join('\n')).not.toContain(TOKEN)
    expect(logLines.join('\n')).not.toContain(Buffer.from(TOKEN).toString('base64'))
  })

  test('a token the console rejects (401) is cleared on GET', async () => {
    await server.request('POST', `${P}/subscription`, { body: { access_token: 'revoked-token' } })
    const get = await server.request('GET', `${P}/subscription`)
    expect(get.body.message).toEqual({ plan: { name: 'Free', is_public: true }, is_registered: false })
    const stored = await server.server.app.deps.store.get({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID })
    expect(stored.found).toBe(false)
  })

  test('POST without a usable access_token is 400 and stores nothing', async () => {
    for (const body of [{}, { access_token: '' }, { access_token: 42 }, '[]', 'not json']) {
      const r = await server.request('POST', `${P}/subscription`, { body })
      expect(r.status).toBe(400)
    }
    const missing = await server.request('POST', `${P}/subscription`, { body: {} })
    expect(missing.body.message).toContain('access_token')
    const stored = await server.server.app.deps.store
      .get({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID })
      .catch(() => ({ found: false }))
    expect(stored.found).toBe(false)
  })

  test('perform_permission_check=true reports the permission and registers nothing', async () => {
    const denied = await server.request('POST', `${P}/subscription?perform_permission_check=true`, {
      body: { access_token: TOKEN },
      user: as('nobody'),
    })
    expect(denied.status).toBe(200)
    expect(denied.body).toEqual({ accessAllowed: false, missingPrivileges: ['cluster:admin/content_manager/subscription/create'] })
    const allowed = await server.request('POST', `${P}/subscription?perform_permission_check=true`, { body: { access_token: TOKEN } })
    expect(allowed.body).toEqual({ accessAllowed: true, missingPrivileges: [] })
    const stored = await server.server.app.deps.store
      .get({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID })
      .catch(() => ({ found: false }))
    expect(stored.found).toBe(false)
    // Without the check, the same caller is refused.
    const post = await server.request('POST', `${P}/subscription`, { body: { access_token: TOKEN }, user: as('nobody') })
    expect(post.status).toBe(403)
  })

  test('a registration starts a pass that reaches the plan feed through signed URLs', { timeout: 15000 }, async () => {
    const c = cti.consumer('t0-ruleset-5', 'private-ruleset-5', { isPublic: false })
    c.create('rule-p1', payloads.rule('rule-p1'))
    c.publishSnapshot()
    cti.setPlanResource('ruleset', c.url)
    const post = await server.request('POST', `${P}/subscription`, { body: { access_token: TOKEN } })
    expect(post.status).toBe(201)
    const deadline = Date.now() + 10_000
    let state: any
    while (Date.now() < deadline) {
      const r = await server.request('GET', '/.svc-cti-consumers/_doc/cti:catalog:consumer:ruleset')
      state = r.body?._source
      if (state?.status === 'ready' && state.local_offset === c.lastOffset) break
      await Bun.sleep(100)
    }
    expect(state).toMatchObject({ status: 'ready', local_offset: c.lastOffset, resource: c.url, is_public: false })
    const consumerCalls = cti.requestsTo('/catalog/contexts/t0-ruleset-5/consumers/private-ruleset-5')
    expect(consumerCalls.length).toBeGreaterThan(0)
    // Every call to the private feed carried a signature obtained by token exchange.
    for (const call of consumerCalls) expect(call.query.verify).toMatch(/^\d+-/)
    const exchange = cti.requestsTo('/platform/environments/token/exchange')
    expect(exchange.length).toBeGreaterThan(0)
    expect(new URLSearchParams(exchange[0].body).get('subject_token')).toBe(TOKEN)
    await server.server.app.deps.store.delete({ index: '.svc-cti-consumers', id: 'cti:catalog:consumer:ruleset', refresh: true })
  })
})

describe('on-demand update', () => {
  test('202 starts a pass; 409 while it runs', async () => {
    cti.slow(400)
    const first = await server.request('POST', `${P}/update`)
    expect(first.status).toBe(202)
    expect(first.body).toEqual({ message: 'The update request has been accepted for processing.', status: 202 })
    const second = await server.request('POST', `${P}/update`)
    expect(second.status).toBe(409)
    expect(second.body).toEqual({ message: 'A content update is already in progress.', status: 409 })
    // The pass ends by itself; then a new one is accepted.
    const deadline = Date.now() + 10_000
    let third = second
    cti.slow(0)
    while (third.status === 409 && Date.now() < deadline) {
      await Bun.sleep(100)
      third = await server.request('POST', `${P}/update`)
    }
    expect(third.status).toBe(202)
  })

  test('update_on_demand false: 403 for everyone, all_access included, and no CTI request', async () => {
    const off = await startTestServer({
      settings: { 'plugins.content_manager.cti.api': cti.base, 'plugins.content_manager.catalog.update_on_demand': false },
    })
    try {
      cti.clear()
      const r = await off.request('POST', `${P}/update`)
      expect(r.status).toBe(403)
      expect(r.body).toEqual({ message: 'On-demand content updates are disabled on this deployment.', status: 403 })
      await Bun.sleep(100)
      expect(cti.requests).toHaveLength(0)
    } finally {
      await off.stop()
    }
  })

  test('403 without the permission', async () => {
    const r = await server.request('POST', `${P}/update`, { user: as('viewer') })
    expect(r.status).toBe(403)
    expect(r.body.message).toContain('cluster:admin/content_manager/update/trigger')
  })
})

describe('version check', () => {
  const release = (tag: string, major: number, minor: number, patch: number) => ({
    tag,
    title: `Release ${tag}`,
    description: 'notes',
    published_date: '2026-11-01T10:00:00Z',
    semver: { major, minor, patch },
  })

  test('reports the last release of each kind, empty objects when none', async () => {
    cti.releases.set('v5.0.0', {
      major: [release('v6.0.0', 6, 0, 0), release('v7.0.0', 7, 0, 0)],
      minor: [release('v5.1.0', 5, 1, 0)],
      patch: [],
    })
    const r = await server.request('GET', `${P}/version/check`, { user: as('viewer') })
    expect(r.status).toBe(200)
    expect(r.body.status).toBe(200)
    expect(r.body.message).toMatchObject({
      current_version: 'v5.0.0',
      last_available_major: release('v7.0.0', 7, 0, 0),
      last_available_minor: release('v5.1.0', 5, 1, 0),
      last_available_patch: {},
    })
    expect(typeof r.body.message.uuid).toBe('string')
    expect(Date.parse(r.body.message.last_check_date)).not.toBeNaN()
    const call = cti.requestsTo('/releases/v5.0.0/updates')[0]
    expect(call.headers['svc-tag']).toBe('v5.0.0')
    expect(call.headers['svc-uid']).toBe(r.body.message.uuid)
    expect(call.headers['user-agent']).toBe('svc Indexer 5.0.0')
    expect(call.headers['accept-encoding']).toContain('gzip')
  })

  test('CTI errors pass through with their status and body', async () => {
    cti.inject({ path: '/releases', status: 503, body: JSON.stringify({ errors: { service: ['maintenance'] } }) })
    const r = await server.request('GET', `${P}/version/check`)
    expect(r.status).toBe(503)
    expect(r.body).toEqual({ errors: { service: ['maintenance'] } })
    cti.inject({ path: '/releases', status: 429, retryAfter: '120' })
    const limited = await server.request('GET', `${P}/version/check`)
    expect(limited.status).toBe(429)
  })

  test('a bad payload is 502, an unreachable CTI is 500 with the reference message', async () => {
    cti.inject({ path: '/releases', status: 200, body: '{"data": "nope"}' })
    const bad = await server.request('GET', `${P}/version/check`)
    expect(bad.status).toBe(502)
    const down = startCtiServer()
    const base = down.base
    await down.stop()
    const other = await startTestServer({ settings: { 'plugins.content_manager.cti.api': base } })
    try {
      const r = await other.request('GET', `${P}/version/check`)
      expect(r.status).toBe(500)
      expect(r.body).toEqual({ message: 'Unable to reach the CTI API to check for updates.', status: 500 })
    } finally {
      await other.stop()
    }
  })
})

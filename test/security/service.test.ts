import { describe, expect, test } from 'bun:test'
import { ApiError, OpenSearchHttpError } from '../../src/http/errors'
import { AUTHENTICATED_ONLY, CONTENT_MANAGER_ACTIONS as CM, INDEX_ACTIONS, SETUP_ACTIONS } from '../../src/security/actions'
import { basic, manualClock, request, securityFor, tempDirs, usersFile, writeSecurityFile } from './helpers'

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (x) => x,
  )
  if (!(e instanceof ApiError)) throw new Error(`expected ApiError, got ${String(e)}`)
  return e
}

async function setup(settings = {}, clock = manualClock()) {
  const dirs = tempDirs()
  writeSecurityFile(
    dirs,
    'internal_users.yml',
    await usersFile({
      root: { password: 'root-pw', backend_roles: ['admin'] },
      alice: { password: 'alice-pw', backend_roles: ['analyst'] },
      bob: { password: 'bob-pw' },
    }),
  )
  writeSecurityFile(
    dirs,
    'roles.yml',
    `analyst:\n  cluster_permissions: ["plugin:content_manager/logtest/*"]\n  index_permissions:\n    - index_patterns: ["svc-*"]\n      allowed_actions: ["read"]\n`,
  )
  writeSecurityFile(dirs, 'roles_mapping.yml', `analyst:\n  backend_roles: ["analyst"]\n`)
  const handle = await securityFor(dirs, { settings, now: clock.now })
  return { dirs, handle, security: handle.security, clock }
}

describe('authentication', () => {
  test('no credentials: 401 with WWW-Authenticate', async () => {
    const { security } = await setup()
    const e = await rejection(security.authenticate(request()))
    expect(e.status).toBe(401)
    expect(e.headers['WWW-Authenticate']).toBe('Basic realm="svc"')
  })

  test('wrong password, unknown user, malformed header: 401', async () => {
    const { security } = await setup()
    for (const h of [basic('alice', 'nope'), basic('mallory', 'alice-pw'), 'Basic !!!', 'Bearer abc', `Basic ${btoa('no-colon')}`]) {
      const e = await rejection(security.authenticate(request(h)))
      expect({ h, status: e.status, www: e.headers['WWW-Authenticate'] }).toEqual({ h, status: 401, www: 'Basic realm="svc"' })
    }
  })

  test('right password: the caller with backend roles and mapped roles', async () => {
    const { security } = await setup()
    const caller = await security.authenticate(request(basic('alice', 'alice-pw')))
    expect(caller).toEqual({ name: 'alice', backendRoles: ['analyst'], attributes: {}, roles: ['analyst', 'svc_ai_assistant'] })
    const root = await security.authenticate(request(basic('root', 'root-pw')))
    expect(root.roles).toEqual(['all_access', 'svc_ai_assistant'])
  })

  test('passwords containing colons work (split at the first colon)', async () => {
    const dirs = tempDirs()
    writeSecurityFile(dirs, 'internal_users.yml', await usersFile({ carol: { password: 'a:b:c' } }))
    const { security } = await securityFor(dirs)
    expect((await security.authenticate(request(basic('carol', 'a:b:c')))).name).toBe('carol')
  })
})

describe('authorization', () => {
  test('403 names the action and the user, as the platform does', async () => {
    const { security } = await setup()
    const e = await rejection(security.authorize(request(basic('alice', 'alice-pw')), CM.policyUpdate))
    expect(e.status).toBe(403)
    expect(e.message).toBe(
      'no permissions for [cluster:admin/content_manager/policy/update] and User [name=alice, backend_roles=[analyst], requestedTenant=null]',
    )
  })

  test('granted through a mapped role; the unauthenticated case stays 401', async () => {
    const { security } = await setup()
    expect((await security.authorize(request(basic('alice', 'alice-pw')), CM.logtestDetection)).name).toBe('alice')
    expect((await rejection(security.authorize(request(), CM.logtestDetection))).status).toBe(401)
    expect((await rejection(security.authorize(request(basic('alice', 'x')), CM.logtestDetection))).status).toBe(401)
  })

  test('every authenticated user may write sessions; only all_access may change settings', async () => {
    const { security } = await setup()
    const bob = await security.authorize(request(basic('bob', 'bob-pw')), SETUP_ACTIONS.sessionWrite)
    expect(bob.roles).toEqual(['svc_ai_assistant'])
    expect((await rejection(security.authorize(request(basic('bob', 'bob-pw')), SETUP_ACTIONS.settingsUpdate))).status).toBe(403)
    expect((await security.authorize(request(basic('root', 'root-pw')), SETUP_ACTIONS.settingsUpdate)).name).toBe('root')
  })

  test('perform_permission_check: the missing raw actions of a group', async () => {
    const { security } = await setup()
    const alice = await security.authenticate(request(basic('alice', 'alice-pw')))
    const root = await security.authenticate(request(basic('root', 'root-pw')))
    expect(security.missingPrivileges(alice, 'plugin:content_manager/subscription/post')).toEqual([CM.subscriptionCreate])
    expect(security.missingPrivileges(root, 'plugin:content_manager/subscription/post')).toEqual([])
    expect(security.missingPrivileges(alice, 'plugin:content_manager/logtest')).toEqual([CM.logtest])
    expect(security.missingPrivileges(alice, CM.logtestDetection)).toEqual([])
  })

  test('authentication-only routes accept any authenticated user', async () => {
    const { security } = await setup()
    expect((await security.authorize(request(basic('bob', 'bob-pw')), AUTHENTICATED_ONLY)).name).toBe('bob')
    expect((await rejection(security.authorize(request(), AUTHENTICATED_ONLY))).status).toBe(401)
  })

  test('authorizeIndices: platform 403 on any index not granted; wildcard expansions can be filtered', async () => {
    const { security } = await setup()
    const alice = await security.authenticate(request(basic('alice', 'alice-pw')))
    expect(() => security.authorizeIndices(alice, INDEX_ACTIONS.search, ['svc-events-v5-a', 'svc-findings-v5-b'])).not.toThrow()
    let err: unknown
    try {
      security.authorizeIndices(alice, INDEX_ACTIONS.search, ['svc-events-v5-a', 'secret'])
    } catch (e) {
      err = e
    }
    expect(err).toBeInstanceOf(OpenSearchHttpError)
    expect((err as OpenSearchHttpError).status).toBe(403)
    expect((err as OpenSearchHttpError).type).toBe('security_exception')
    expect((err as OpenSearchHttpError).reason).toContain('no permissions for [indices:data/read/search] and User [name=alice')
    expect(() => security.authorizeIndices(alice, INDEX_ACTIONS.index, ['svc-events-v5-a'])).toThrow()
    expect(security.permittedIndices(alice, INDEX_ACTIONS.search, ['svc-a', 'other', 'svc-b'])).toEqual(['svc-a', 'svc-b'])
  })

  test('.svc-internal-state is readable by no role, all_access included', async () => {
    const { security } = await setup()
    const root = await security.authenticate(request(basic('root', 'root-pw')))
    expect(security.isSystemIndex('.svc-internal-state')).toBe(true)
    expect(() => security.authorizeIndices(root, INDEX_ACTIONS.search, ['.svc-settings'])).not.toThrow()
    for (const action of [INDEX_ACTIONS.search, INDEX_ACTIONS.get, INDEX_ACTIONS.index, INDEX_ACTIONS.deleteIndex]) {
      expect(() => security.authorizeIndices(root, action, ['.svc-internal-state'])).toThrow(OpenSearchHttpError)
    }
    expect(security.permittedIndices(root, INDEX_ACTIONS.search, ['.svc-internal-state', '.svc-settings'])).toEqual(['.svc-settings'])
  })
})

describe('document-level security through the service', () => {
  test('sessions are filtered to the caller for everyone, all_access included', async () => {
    const { security } = await setup()
    const root = await security.authenticate(request(basic('root', 'root-pw')))
    const bob = await security.authenticate(request(basic('bob', 'bob-pw')))
    expect(security.documentFilter(root, '.ds-svc-ai-assistant-sessions-000001')).toEqual({ term: { user: 'root' } })
    expect(security.documentFilter(bob, 'svc-ai-assistant-sessions')).toEqual({ term: { user: 'bob' } })
    expect(security.documentFilter(root, 'svc-events-v5-x')).toBeUndefined()
  })

  test('two roles with DLS on the same index are ORed', async () => {
    const dirs = tempDirs()
    writeSecurityFile(dirs, 'internal_users.yml', await usersFile({ dana: { password: 'pw', roles: ['r1', 'r2'] } }))
    writeSecurityFile(
      dirs,
      'roles.yml',
      `r1:\n  index_permissions:\n    - index_patterns: ["logs"]\n      allowed_actions: ["read"]\n      dls: '{"term": {"a": "\${user.name}"}}'\nr2:\n  index_permissions:\n    - index_patterns: ["logs"]\n      allowed_actions: ["read"]\n      dls: '{"term": {"b": 1}}'\n`,
    )
    const { security } = await securityFor(dirs)
    const dana = await security.authenticate(request(basic('dana', 'pw')))
    expect(security.documentFilter(dana, 'logs')).toEqual({
      bool: { should: [{ term: { a: 'dana' } }, { term: { b: 1 } }], minimum_should_match: 1 },
    })
    // Callers may add to the returned query without changing what the next caller gets.
    ;(security.documentFilter(dana, 'logs') as { bool: { should: unknown[] } }).bool.should.push('junk')
    expect((security.documentFilter(dana, 'logs') as { bool: { should: unknown[] } }).bool.should).toHaveLength(2)
  })
})

describe('authentication cache', () => {
  test('bcrypt runs once per credentials within the TTL, again after it', async () => {
    const { security, clock } = await setup({ 'security.auth_cache.ttl_seconds': 60 })
    const h = basic('alice', 'alice-pw')
    await security.authenticate(request(h))
    await security.authenticate(request(h))
    await security.authenticate(request(h))
    expect(security.stats).toMatchObject({ verifications: 1, cacheHits: 2 })
    clock.advance(61_000)
    await security.authenticate(request(h))
    expect(security.stats.verifications).toBe(2)
  })

  test('failures are never cached; concurrent first requests share one check', async () => {
    const { security } = await setup()
    await rejection(security.authenticate(request(basic('alice', 'bad'))))
    await rejection(security.authenticate(request(basic('alice', 'bad'))))
    expect(security.stats.verifications).toBe(2)
    const h = basic('bob', 'bob-pw')
    await Promise.all(Array.from({ length: 5 }, () => security.authenticate(request(h))))
    expect(security.stats.verifications).toBe(3)
  })

  test('bounded: the least recently used entry is evicted', async () => {
    const { security } = await setup({ 'security.auth_cache.max_entries': 2 })
    const [a, b, r] = [basic('alice', 'alice-pw'), basic('bob', 'bob-pw'), basic('root', 'root-pw')]
    for (const h of [a, b, a, r]) await security.authenticate(request(h)) // b is now the oldest and is evicted
    expect(security.stats.verifications).toBe(3)
    await security.authenticate(request(a))
    expect(security.stats.verifications).toBe(3)
    await security.authenticate(request(b))
    expect(security.stats.verifications).toBe(4)
  })

  test('ttl 0 disables the cache', async () => {
    const { security } = await setup({ 'security.auth_cache.ttl_seconds': 0 })
    const h = basic('bob', 'bob-pw')
    await security.authenticate(request(h))
    await security.authenticate(request(h))
    expect(security.stats.verifications).toBe(2)
  })
})

describe('failed-login blocking', () => {
  test('max_attempts failures from one address block it (429 + Retry-After) for block_seconds, correct passwords included', async () => {
    const { security, clock } = await setup({ 'security.auth_failures.max_attempts': 3, 'security.auth_failures.block_seconds': 30 })
    const good = basic('alice', 'alice-pw')
    for (let i = 0; i < 3; i++)
      expect((await rejection(security.authenticate(request(basic('alice', `guess${i}`)), '10.0.0.9'))).status).toBe(401)
    const blocked = await rejection(security.authenticate(request(good), '10.0.0.9'))
    expect(blocked.status).toBe(429)
    expect(blocked.headers['Retry-After']).toBe('30')
    // Other addresses are not affected.
    expect((await security.authenticate(request(good), '10.0.0.10')).name).toBe('alice')
    clock.advance(31_000)
    expect((await security.authenticate(request(good), '10.0.0.9')).name).toBe('alice')
  })

  test('failures spread wider than the window do not add up; missing credentials are not failures', async () => {
    const { security, clock } = await setup({ 'security.auth_failures.max_attempts': 2, 'security.auth_failures.block_seconds': 10 })
    await rejection(security.authenticate(request(basic('bob', 'x')), '10.1.1.1'))
    clock.advance(11_000)
    await rejection(security.authenticate(request(basic('bob', 'y')), '10.1.1.1'))
    for (let i = 0; i < 5; i++) expect((await rejection(security.authenticate(request(), '10.1.1.1'))).status).toBe(401)
    expect((await security.authenticate(request(basic('bob', 'bob-pw')), '10.1.1.1')).name).toBe('bob')
  })

  test('an attempt counts when its bcrypt check starts: parallel guesses beyond the limit are refused without one', async () => {
    const { security } = await setup({ 'security.auth_failures.max_attempts': 3, 'security.auth_failures.block_seconds': 30 })
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => rejection(security.authenticate(request(basic('alice', `guess${i}`)), '10.3.3.3'))),
    )
    expect(answers.map((e) => e.status).sort()).toEqual([...Array(3).fill(401), ...Array(9).fill(429)])
    expect(security.stats.verifications).toBe(3)
  })

  test('parallel first requests with the same right credentials share one check and are not counted as attempts', async () => {
    const { security } = await setup({ 'security.auth_failures.max_attempts': 2 })
    const callers = await Promise.all(
      Array.from({ length: 10 }, () => security.authenticate(request(basic('alice', 'alice-pw')), '10.4.4.4')),
    )
    expect(callers.map((c) => c.name)).toEqual(Array(10).fill('alice'))
    expect(security.stats.verifications).toBe(1)
  })

  test('max_attempts 0 disables blocking', async () => {
    const { security } = await setup({ 'security.auth_failures.max_attempts': 0 })
    for (let i = 0; i < 12; i++) await rejection(security.authenticate(request(basic('bob', 'x')), '10.2.2.2'))
    expect((await security.authenticate(request(basic('bob', 'bob-pw')), '10.2.2.2')).name).toBe('bob')
  })
})

describe('reload (SIGHUP)', () => {
  test('a malformed file keeps the previous configuration and reports file and line', async () => {
    const { dirs, handle, security } = await setup()
    const path = writeSecurityFile(dirs, 'roles.yml', `analyst:\n  cluster_permissions: ["*"\n`)
    const result = await handle.tryReload()
    expect(result).toEqual({ ok: false, error: expect.stringContaining(`${path}:2: invalid YAML`) })
    // The old roles still apply: alice cannot do everything.
    expect((await rejection(security.authorize(request(basic('alice', 'alice-pw')), CM.policyUpdate))).status).toBe(403)
    expect((await security.authorize(request(basic('alice', 'alice-pw')), CM.logtestNormalization)).name).toBe('alice')
  })

  test('a valid change takes effect at once, cached logins included', async () => {
    const { dirs, handle, security } = await setup()
    const h = basic('alice', 'alice-pw')
    await security.authenticate(request(h))
    writeSecurityFile(dirs, 'internal_users.yml', await usersFile({ alice: { password: 'new-pw' } }))
    writeSecurityFile(dirs, 'roles.yml', `analyst:\n  cluster_permissions: ["plugin:content_manager/policy/update"]\n`)
    expect(await handle.tryReload()).toEqual({ ok: true })
    expect((await rejection(security.authenticate(request(h)))).status).toBe(401)
    const alice = await security.authenticate(request(basic('alice', 'new-pw')))
    expect(alice.backendRoles).toEqual([])
    expect(alice.roles).toEqual(['svc_ai_assistant'])
  })

  test('reload() never throws, even on errors', async () => {
    const { dirs, handle } = await setup()
    writeSecurityFile(dirs, 'internal_users.yml', `alice: [`)
    expect(await handle.reload()).toBeUndefined()
  })
})

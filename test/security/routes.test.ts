import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { route } from '../../src/http/route'
import { SETUP_ACTIONS } from '../../src/security/actions'
import { AUTHINFO_PATH, securityRoutes } from '../../src/security/routes'
import { startTestApp, type TestApp } from '../helpers/app'
import { basic } from './helpers'

let app: TestApp

beforeAll(async () => {
  const settingsRoute = route('PUT', '/_plugins/_setup/settings', SETUP_ACTIONS.settingsUpdate, () => ({ message: 'ok', status: 200 }))
  app = await startTestApp({
    users: [
      { name: 'root', password: 'root-pw', backend_roles: ['admin'] },
      { name: 'alice', password: 'alice-pw', backend_roles: ['analyst', 'blue'], attributes: { team: 'blue' } },
      { name: 'guesser', password: 'guesser-pw' },
    ],
    roles: { analyst: { cluster_permissions: ['cluster_monitor'] } },
    rolesMapping: { analyst: { backend_roles: ['analyst'] } },
    node: { 'security.auth_failures.max_attempts': 3, 'security.auth_failures.block_seconds': 60 },
    store: 'memory',
    settingsIn: 'memory',
    bootstrap: false,
    routes: (deps) => ({ pluginRoutes: [...securityRoutes(deps.security), settingsRoute] }),
  })
})

afterAll(() => app.stop())

const call = (method: string, path: string, auth?: string) =>
  fetch(app.url + path, { method, headers: auth ? { authorization: auth } : {} })

describe('over HTTP', () => {
  test("authinfo answers the platform's fields for any authenticated user", async () => {
    const res = await call('GET', AUTHINFO_PATH, basic('alice', 'alice-pw'))
    expect(res.status).toBe(200)
    const body = (await res.json()) as Record<string, unknown>
    expect(body).toMatchObject({
      user: 'User [name=alice, backend_roles=[analyst, blue], requestedTenant=null]',
      user_name: 'alice',
      user_requested_tenant: null,
      backend_roles: ['analyst', 'blue'],
      roles: ['analyst', 'svc_ai_assistant'],
      custom_attribute_names: ['attr.internal.team'],
    })
    expect(body.remote_address).toBe('127.0.0.1')
    expect((await call('POST', AUTHINFO_PATH, basic('root', 'root-pw'))).status).toBe(200)
  })

  test('no credentials: 401, WWW-Authenticate and the {message, status} envelope', async () => {
    const res = await call('GET', AUTHINFO_PATH)
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toBe('Basic realm="svc"')
    expect(await res.json()).toEqual({ message: 'Authentication required.', status: 401 })
  })

  test('missing permission: 403 envelope naming action and user', async () => {
    const res = await call('PUT', '/_plugins/_setup/settings', basic('alice', 'alice-pw'))
    expect(res.status).toBe(403)
    const body = (await res.json()) as Record<string, unknown>
    expect(body.status).toBe(403)
    expect(body.message).toBe(
      'no permissions for [cluster:admin/setup/settings/update] and User [name=alice, backend_roles=[analyst, blue], requestedTenant=null]',
    )
    expect((await call('PUT', '/_plugins/_setup/settings', basic('root', 'root-pw'))).status).toBe(200)
  })

  // Runs last: it blocks 127.0.0.1.
  test('repeated failures from the client address end in 429 with Retry-After', async () => {
    for (let i = 0; i < 3; i++) expect((await call('GET', AUTHINFO_PATH, basic('guesser', `no${i}`))).status).toBe(401)
    const res = await call('GET', AUTHINFO_PATH, basic('guesser', 'guesser-pw'))
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(((await res.json()) as { status: number }).status).toBe(429)
  })
})

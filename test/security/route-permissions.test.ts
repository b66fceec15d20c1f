/**
 * Every route x {no credentials, wrong password, user without the permission,
 * user with exactly the permission}. The route list is read from the running
 * app, so a new route without a permission check fails here by itself.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { AUTHENTICATED_ONLY } from '../../src/security/actions'
import { startTestServer, type TestServer, type TestUser } from '../helpers/server'
import { startCtiServer, type CtiServer } from '../fixtures/cti/server'
import { basicAuth } from '../helpers/calls'

const PASSWORD = 'Route-pass-1'
const INDEX_ALL = [{ index_patterns: ['*'], allowed_actions: ['indices_all'] }]
const fill = (path: string) =>
  path
    .replace(/^\/_data_stream\/:name/, '/_data_stream/perm-ds')
    .replace(/^\/_index_template\/:name/, '/_index_template/perm-tpl')
    .replace(/:index/g, 'perm-idx')
    .replace(/:id/g, 'perm-id')
    .replace(/:name/g, 'perm-name')
    .replace(/:[a-z_]+/gi, 'perm-x')

let server: TestServer
// Routes that call the CTI API (version check, subscription) reach a CTI test server, not a dead address.
let cti: CtiServer
let pluginRoutes: Array<{ method: string; path: string; action: string; alsoRequires: string[] }>
let indexRoutes: Array<{ method: string; path: string }>
const userFor = new Map<string, string>()
/** Routes that also run an action on the caller's behalf (spec Authentication 4: logtest needs rules/evaluate too). */
beforeAll(async () => {
  // First start: learn the routes the app serves.
  const probe = await startTestServer()
  pluginRoutes = probe.server.app.pluginRoutes.map((r) => ({
    method: r.method,
    path: r.path,
    action: r.action,
    alsoRequires: r.alsoRequires ?? [],
  }))
  const pluginKeys = new Set(pluginRoutes.map((r) => `${r.method} ${r.path}`))
  indexRoutes = []
  for (const r of probe.server.app.httpRoutes) {
    if (!pluginKeys.has(`${r.method} ${r.path}`)) indexRoutes.push({ method: r.method, path: r.path })
  }
  await probe.stop()

  const actions = [...new Set(pluginRoutes.map((r) => r.action).filter((a) => a !== AUTHENTICATED_ONLY))]
  const roles: Record<string, unknown> = {
    index_only: { cluster_permissions: [], index_permissions: INDEX_ALL },
    everything: { cluster_permissions: ['*'], index_permissions: INDEX_ALL },
  }
  const users: TestUser[] = [
    { name: 'nobody', password: PASSWORD },
    { name: 'index_only', password: PASSWORD, roles: ['index_only'] },
    { name: 'everything', password: PASSWORD, roles: ['everything'] },
  ]
  actions.forEach((action, i) => {
    roles[`only_${i}`] = { cluster_permissions: [action, ...alsoRequired(action)], index_permissions: INDEX_ALL }
    users.push({ name: `only_${i}`, password: PASSWORD, roles: [`only_${i}`] })
    userFor.set(action, `only_${i}`)
  })
  cti = startCtiServer()
  server = await startTestServer({ users, roles, settings: { 'plugins.content_manager.cti.api': cti.base } })
})

/** Targets exist before each call, so each route reaches its permission check on real indices rather than a 404. */
async function ensureTargets() {
  await server.request('PUT', '/perm-idx/_doc/perm-id?refresh=true', { body: { a: 1 } })
  await server.request('POST', '/_aliases', { body: { actions: [{ add: { index: 'perm-idx', alias: 'perm-name' } }] } })
  await server.request('PUT', '/_index_template/perm-tpl', { body: { index_patterns: ['perm-ds*'], data_stream: {}, priority: 500 } })
  const ds = await server.request('GET', '/_data_stream/perm-ds')
  if (ds.status === 404) await server.request('PUT', '/_data_stream/perm-ds')
}
afterAll(async () => {
  await server?.stop()
  await cti?.stop()
})

/** What a route declares beyond its own action; "exactly the permission" includes it. */
const alsoRequired = (action: string) => [...new Set(pluginRoutes.filter((r) => r.action === action).flatMap((r) => r.alsoRequires))]

const as = (name: string) => ({ name, password: PASSWORD })

describe('plugin routes', () => {
  test('the app declares plugin routes under every extension', () => {
    const prefixes = new Set(pluginRoutes.map((r) => r.path.split('/').slice(0, 3).join('/')))
    for (const p of ['/_plugins/_setup', '/_plugins/_security_analytics', '/_plugins/_content_manager', '/_plugins/_security'])
      expect(prefixes).toContain(p)
  })

  test('each route: 401 without or with wrong credentials, 403 without its action, not 401/403 with exactly it', async () => {
    const problems: string[] = []
    for (const r of pluginRoutes) {
      const path = fill(r.path)
      const body = r.method === 'GET' || r.method === 'HEAD' ? undefined : '{}'
      const none = await server.request(r.method, path, { user: null, body })
      if (none.status !== 401) problems.push(`${r.method} ${r.path}: no credentials -> ${none.status}`)
      const wrong = await server.request(r.method, path, { user: { name: 'admin', password: 'wrong' }, body })
      if (wrong.status !== 401) problems.push(`${r.method} ${r.path}: wrong password -> ${wrong.status}`)
      if (r.action === AUTHENTICATED_ONLY) continue
      const security = server.server.app.deps.security
      const denied = await server.server.app.deps.security.authenticate(
        new Request('http://x/', { headers: { authorization: basicAuth({ name: 'index_only', password: PASSWORD }) } }),
      )
      // Actions every authenticated user holds (the assistant role's session write) cannot be withheld.
      if (!security.hasClusterPermission(denied, r.action)) {
        const without = await server.request(r.method, path, { user: as('index_only'), body })
        if (without.status !== 403) problems.push(`${r.method} ${r.path}: without ${r.action} -> ${without.status}`)
        else if (!String(without.body?.message).includes(r.action))
          problems.push(`${r.method} ${r.path}: 403 message does not name ${r.action}`)
      }
      const withIt = await server.request(r.method, path, { user: as(userFor.get(r.action)!), body })
      if (withIt.status === 401 || withIt.status === 403)
        problems.push(`${r.method} ${r.path}: with exactly ${r.action} -> ${withIt.status} ${withIt.text.slice(0, 200)}`)
      if (withIt.status >= 500)
        problems.push(`${r.method} ${r.path}: with exactly ${r.action} -> ${withIt.status} ${withIt.text.slice(0, 200)}`)
    }
    expect(problems).toEqual([])
  })
})

describe('index API routes', () => {
  test('each route: 401 without or with wrong credentials, 403 for a user with no permission, not 401/403 with all', async () => {
    expect(indexRoutes.length).toBeGreaterThan(20)
    const problems: string[] = []
    for (const r of indexRoutes) {
      await ensureTargets()
      const path = fill(r.path)
      const body =
        r.method === 'GET' || r.method === 'HEAD'
          ? undefined
          : r.path.includes('_bulk')
            ? '{"index":{"_index":"perm-idx","_id":"1"}}\n{"a":1}\n'
            : '{}'
      const headers = r.path.includes('_bulk') ? { 'content-type': 'application/x-ndjson' } : undefined
      const none = await server.request(r.method, path, { user: null, body, headers })
      if (none.status !== 401) problems.push(`${r.method} ${r.path}: no credentials -> ${none.status}`)
      const wrong = await server.request(r.method, path, { user: { name: 'admin', password: 'wrong' }, body, headers })
      if (wrong.status !== 401) problems.push(`${r.method} ${r.path}: wrong password -> ${wrong.status}`)
      const nobody = await server.request(r.method, path, { user: as('nobody'), body, headers })
      const all = await server.request(r.method, path, { user: as('everything'), body, headers })
      const refusedItems =
        r.path.includes('_bulk') &&
        nobody.status === 200 &&
        nobody.body?.items?.every((i: any) => Object.values(i as object)[0].status === 403)
      // A body that no caller could send is refused before security, as on the platform.
      const malformedForAll = nobody.status === 400 && all.status === 400
      if (nobody.status !== 403 && !refusedItems && !malformedForAll)
        problems.push(`${r.method} ${r.path}: no permission -> ${nobody.status}`)
      if (all.status === 401 || all.status === 403 || all.status >= 500)
        problems.push(`${r.method} ${r.path}: all permissions -> ${all.status} ${all.text.slice(0, 200)}`)
    }
    expect(problems).toEqual([])
  }, 60_000) // four requests per route over every index API route: more than bun's default 5 s on a loaded machine
})

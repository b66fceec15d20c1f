/**
 * The one way tests build svc-ext from its parts. `startTestServer` (./server.ts) runs the full
 * composition; feature harnesses that need only their own routes, an in-memory or wrapped
 * store, or an injected Engine use `startTestApp`: real security from the security plugin's
 * files, real settings, a real journal, the routes under test assembled by the product's
 * `assembleApp`, behind Bun.serve on a free local port. Both write the security files and send
 * requests with the helpers below.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Deps } from '../../src/deps'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { storeSettingsPersistence } from '../../src/config/store-persistence'
import { assembleApp } from '../../src/http/assemble'
import { createLogger, type Logger } from '../../src/http/log'
import { noteRemoteAddress } from '../../src/http/remote'
import type { PluginRoute } from '../../src/http/route'
import { Journal } from '../../src/journal/journal'
import { createSecurity } from '../../src/security'
import { runBootstrap } from '../../src/setup/bootstrap'
import { type EmbeddedStoreOptions, openEmbeddedStore, searchLimitsOf } from '../../src/store/embedded'
import type { Store } from '../../src/store/port'

export interface TestUser {
  name: string
  password: string
  backend_roles?: string[]
  /** Security roles assigned directly (opendistro_security_roles). */
  roles?: string[]
  attributes?: Record<string, string>
}

/** A security file's entries: an object, or YAML text (parsed, so both spellings end the same). */
export type SecurityEntries = Record<string, unknown> | string

export interface SecurityConfig {
  users: TestUser[]
  /** roles.yml entries: name -> {cluster_permissions, index_permissions}. */
  roles?: SecurityEntries
  /** roles_mapping.yml entries. */
  rolesMapping?: SecurityEntries
  actionGroups?: SecurityEntries
}

const hashCache = new Map<string, string>()
async function bcrypt(password: string): Promise<string> {
  // Cost 4 keeps suites fast; the format is the one operators use.
  let h = hashCache.get(password)
  if (!h) hashCache.set(password, (h = await Bun.password.hash(password, { algorithm: 'bcrypt', cost: 4 })))
  return h
}

const yaml = (doc: unknown) => JSON.stringify(doc, null, 2) + '\n' // JSON is YAML

/** Writes `<configDir>/security/*.yml` in the security plugin's formats. */
export async function writeSecurityConfig(configDir: string, config: SecurityConfig): Promise<void> {
  const dir = join(configDir, 'security')
  mkdirSync(dir, { recursive: true })
  const users: Record<string, unknown> = { _meta: { type: 'internalusers', config_version: 2 } }
  for (const u of config.users) {
    users[u.name] = {
      hash: await bcrypt(u.password),
      backend_roles: u.backend_roles ?? [],
      ...(u.roles ? { opendistro_security_roles: u.roles } : {}),
      ...(u.attributes ? { attributes: u.attributes } : {}),
    }
  }
  writeFileSync(join(dir, 'internal_users.yml'), yaml(users))
  const file = (name: string, type: string, entries: SecurityEntries | undefined) => {
    if (entries === undefined) return
    const parsed = typeof entries === 'string' ? (Bun.YAML.parse(entries) as Record<string, unknown>) : entries
    writeFileSync(join(dir, name), yaml({ _meta: { type, config_version: 2 }, ...parsed }))
  }
  file('roles.yml', 'roles', config.roles)
  file('roles_mapping.yml', 'rolesmapping', config.rolesMapping)
  file('action_groups.yml', 'actiongroups', config.actionGroups)
}

export const basicAuth = (user: { name: string; password: string }) => 'Basic ' + btoa(`${user.name}:${user.password}`)

export interface Reply {
  status: number
  headers: Headers
  body: any
  text: string
}

/**
 * One HTTP request: objects are sent as JSON, strings as they are (`application/json` unless
 * `headers` say otherwise); the answer's body is parsed as JSON when it is JSON.
 */
export async function send(
  url: string,
  method: string,
  path: string,
  opts: { body?: unknown; authorization?: string; headers?: Record<string, string>; ca?: string } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...opts.headers }
  if (opts.authorization) headers.authorization = opts.authorization
  let body: string | undefined
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body)
    headers['content-type'] ??= 'application/json'
  }
  const res = await fetch(url + path, { method, headers, body, tls: opts.ca ? { ca: opts.ca } : undefined })
  const text = await res.text()
  let parsed: unknown = text
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {}
  return { status: res.status, headers: res.headers, body: parsed, text }
}

/** Serves an assembled app on a free local port, noting the peer address as the product does. */
export function serveApp(app: { handle(request: Request): Response | Promise<Response> }): { url: string; stop(): void } {
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req, srv) => {
      noteRemoteAddress(req, srv as Server<unknown>)
      return app.handle(req)
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => void server.stop(true) }
}

/** The routes a harness serves, built from the running deps, and what to stop before they close. */
export interface TestRoutes {
  pluginRoutes: PluginRoute[]
  groups?: Parameters<typeof assembleApp>[0]['groups']
  stop?(): Promise<unknown>
}

export interface TestAppOptions extends SecurityConfig {
  /** Node settings (flat keys), merged over test defaults. */
  node?: Record<string, unknown>
  /** `file` (default): `<data>/store.db`, kept across `restart()`; `memory`: an in-memory store. */
  store?: 'file' | 'memory'
  /** Options of the embedded store (a test's own schema migrations). */
  storeOptions?: EmbeddedStoreOptions
  /** An existing data directory to serve (kept after `stop()`); default a fresh one. */
  dataDir?: string
  /** Wraps the store everything uses, the bootstrap included (fault injection). */
  wrapStore?: (store: Store) => Store
  /** Where dynamic settings persist: in the store (default, as production) or in memory. */
  settingsIn?: 'store' | 'memory'
  /** Runs the Setup bootstrap before the routes are built (default true; never on restart). */
  bootstrap?: boolean
  log?: Logger
  routes(deps: Deps): TestRoutes | Promise<TestRoutes>
}

export interface TestApp {
  readonly url: string
  readonly deps: Deps
  configDir: string
  dataDir: string
  /** Sends as the named user (a name from `users`; null = no credentials). */
  request(method: string, path: string, opts?: { body?: unknown; user?: string | null; headers?: Record<string, string> }): Promise<Reply>
  /** Closes everything and builds it again over the same files, as a node restart would. */
  restart(): Promise<void>
  stop(): Promise<void>
}

export async function startTestApp(opts: TestAppOptions): Promise<TestApp> {
  const root = mkdtempSync(join(tmpdir(), 'svc-test-app-'))
  const configDir = join(root, 'config')
  const dataDir = opts.dataDir ?? join(root, 'data')
  mkdirSync(dataDir, { recursive: true })
  await writeSecurityConfig(configDir, opts)
  const node = buildNodeConfig({ 'path.data': dataDir, 'security.auth_failures.max_attempts': 0, ...opts.node }, 'test', configDir)
  const log = opts.log ?? createLogger({ level: 'error', write: () => {} })
  const passwords = new Map(opts.users.map((u) => [u.name, u.password]))

  let current: { deps: Deps; routes: TestRoutes; server: { url: string; stop(): void } }
  const start = async (bootstrap: boolean) => {
    // The store's search limits follow the cluster settings, as backend.ts wires them.
    let settingsRef: ClusterSettings | undefined
    const searchLimits = () => searchLimitsOf(settingsRef?.latest() ?? node.values)
    const storeFile = opts.store === 'memory' ? ':memory:' : join(dataDir, 'store.db')
    const bare = openEmbeddedStore(storeFile, { searchLimits, ...opts.storeOptions })
    const store = opts.wrapStore ? opts.wrapStore(bare) : bare
    const persistence = opts.settingsIn === 'memory' ? memoryPersistence() : storeSettingsPersistence(store)
    // No settings cache: a test's change is seen by the very next operation.
    const settings = new ClusterSettings(node, persistence, Date.now, 0)
    settingsRef = settings
    const { security } = await createSecurity({ node, dataDir, log, env: {} })
    const journal = new Journal(join(dataDir, 'journal.db'))
    const deps: Deps = { node, settings, store, security, log, dataDir, now: Date.now, journal }
    if (bootstrap) {
      const boot = await runBootstrap(deps)
      if (boot.status !== 'ready') throw new Error(`bootstrap ${boot.status} at ${boot.failedTask}`)
    }
    const routes = await opts.routes(deps)
    const app = assembleApp({ security, log, pluginRoutes: routes.pluginRoutes, groups: routes.groups })
    current = { deps, routes, server: serveApp(app) }
  }
  const close = async () => {
    await current.routes.stop?.()
    current.server.stop()
    current.deps.journal.close()
    await current.deps.store.close()
  }
  await start(opts.bootstrap ?? true)

  return {
    get url() {
      return current.server.url
    },
    get deps() {
      return current.deps
    },
    configDir,
    dataDir,
    request(method, path, { body, user, headers } = {}) {
      const password = user ? passwords.get(user) : undefined
      if (user && password === undefined) throw new Error(`no test user ${user}`)
      return send(current.server.url, method, path, {
        body,
        headers,
        authorization: user ? basicAuth({ name: user, password: password! }) : undefined,
      })
    },
    async restart() {
      await close()
      await start(false)
    },
    async stop() {
      await close()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

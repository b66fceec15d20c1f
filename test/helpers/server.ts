/**
 * An in-process svc-ext over real HTTP: the real composition (embedded store,
 * real security files, every module) on a free port and a fresh data dir.
 * Tests describe users and roles in the security plugin's formats; the admin
 * user (all_access) always exists.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildNodeConfig } from '../../src/config/node-config'
import { createLogger, type Level, type Logger } from '../../src/http/log'
import { startServer, type RunningServer } from '../../src/server'

export interface TestUser {
  name: string
  password: string
  backend_roles?: string[]
  /** Security roles assigned directly (opendistro_security_roles). */
  roles?: string[]
  attributes?: Record<string, string>
}

export interface TestServerOptions {
  /** Node settings (flat keys), merged over test defaults. */
  settings?: Record<string, unknown>
  users?: TestUser[]
  /** roles.yml entries: name -> {cluster_permissions, index_permissions}. */
  roles?: Record<string, unknown>
  /** roles_mapping.yml entries. */
  rolesMapping?: Record<string, unknown>
  actionGroups?: Record<string, unknown>
  /** Reuse a data dir (restart tests). */
  dataDir?: string
  /** Collect log lines instead of printing them. */
  logLines?: string[]
}

export interface Reply {
  status: number
  headers: Headers
  body: any
  text: string
}

export interface TestServer {
  url: string
  server: RunningServer
  dataDir: string
  configDir: string
  log: Logger
  admin: { name: string; password: string }
  /** Sends JSON (objects are serialised; strings sent as-is) as `user` (default admin; null = no credentials). */
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; user?: { name: string; password: string } | null; headers?: Record<string, string> },
  ): Promise<Reply>
  stop(opts?: { keepData?: boolean }): Promise<void>
}

export const ADMIN = { name: 'admin', password: 'Admin-pass-1' }

const hashCache = new Map<string, string>()
async function bcrypt(password: string): Promise<string> {
  // Cost 4 keeps suites fast; the format is the one operators use.
  let h = hashCache.get(password)
  if (!h) hashCache.set(password, (h = await Bun.password.hash(password, { algorithm: 'bcrypt', cost: 4 })))
  return h
}

const yaml = (doc: unknown) => JSON.stringify(doc, null, 2) + '\n' // JSON is YAML

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-data-'))
  const configDir = mkdtempSync(join(tmpdir(), 'svc-test-config-'))
  const secDir = join(configDir, 'security')
  mkdirSync(secDir, { recursive: true })
  const users: Record<string, unknown> = {
    _meta: { type: 'internalusers', config_version: 2 },
    [ADMIN.name]: { hash: await bcrypt(ADMIN.password), backend_roles: ['admin'], opendistro_security_roles: ['all_access'] },
  }
  for (const u of opts.users ?? []) {
    users[u.name] = {
      hash: await bcrypt(u.password),
      backend_roles: u.backend_roles ?? [],
      ...(u.roles ? { opendistro_security_roles: u.roles } : {}),
      ...(u.attributes ? { attributes: u.attributes } : {}),
    }
  }
  writeFileSync(join(secDir, 'internal_users.yml'), yaml(users))
  if (opts.roles) writeFileSync(join(secDir, 'roles.yml'), yaml({ _meta: { type: 'roles', config_version: 2 }, ...opts.roles }))
  if (opts.rolesMapping)
    writeFileSync(join(secDir, 'roles_mapping.yml'), yaml({ _meta: { type: 'rolesmapping', config_version: 2 }, ...opts.rolesMapping }))
  if (opts.actionGroups)
    writeFileSync(join(secDir, 'action_groups.yml'), yaml({ _meta: { type: 'actiongroups', config_version: 2 }, ...opts.actionGroups }))

  const node = buildNodeConfig(
    {
      'http.port': 0,
      'path.data': dataDir,
      'plugins.content_manager.catalog.update_on_start': false,
      'plugins.content_manager.telemetry.enabled': false,
      'plugins.content_manager.engine.mock': true,
      'security.auth_failures.max_attempts': 0,
      'http.shutdown_grace_seconds': 2,
      ...opts.settings,
    },
    'test',
    configDir,
  )
  const level = (opts.settings?.['log.level'] as Level | undefined) ?? 'warn'
  const log = createLogger({ level, write: opts.logLines ? (l) => opts.logLines!.push(l) : undefined })
  const server = await startServer(node, log, { env: {} })
  await server.app.ready
  const url = server.url

  const request: TestServer['request'] = async (method, path, o = {}) => {
    const user = o.user === undefined ? ADMIN : o.user
    const headers: Record<string, string> = { ...o.headers }
    if (user) headers.authorization = 'Basic ' + btoa(`${user.name}:${user.password}`)
    let body: string | undefined
    if (o.body !== undefined) {
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(url + path, { method, headers, body })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = text ? JSON.parse(text) : undefined
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed, text }
  }

  return {
    url,
    server,
    dataDir,
    configDir,
    log,
    admin: ADMIN,
    request,
    async stop({ keepData = false } = {}) {
      await server.stop(1)
      rmSync(configDir, { recursive: true, force: true })
      if (!keepData && !opts.dataDir) rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

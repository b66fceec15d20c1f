/**
 * An in-process svc-ext over real HTTP: the real composition (embedded store,
 * real security files, every module) on a free port and a fresh data dir.
 * Tests describe users and roles in the security plugin's formats; the admin
 * user (all_access) always exists.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { buildNodeConfig } from '../../src/config/node-config'
import { createLogger, type Level, type Logger } from '../../src/http/log'
import { startServer, type RunningServer } from '../../src/server/listen'
import { basicAuth, send, writeSecurityConfig, type Reply, type TestUser } from './app'

export type { Reply, TestUser } from './app'

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

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'svc-test-data-'))
  const configDir = mkdtempSync(join(tmpdir(), 'svc-test-config-'))
  await writeSecurityConfig(configDir, {
    users: [{ ...ADMIN, backend_roles: ['admin'], roles: ['all_access'] }, ...(opts.users ?? [])],
    roles: opts.roles,
    rolesMapping: opts.rolesMapping,
    actionGroups: opts.actionGroups,
  })

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

  const request: TestServer['request'] = (method, path, o = {}) => {
    const user = o.user === undefined ? ADMIN : o.user
    return send(url, method, path, { body: o.body, headers: o.headers, authorization: user ? basicAuth(user) : undefined })
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

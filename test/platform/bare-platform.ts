/**
 * The embedded svc-ext's platform-facing REST API (index API, authinfo, real security over
 * internal_users.yml) without the feature modules, so a test can start from an empty store:
 * a full svc-ext bootstraps its own indices and data streams, which an "empty store" contract
 * cannot have. `reset()` swaps in a fresh in-memory store between tests.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { storeSettingsPersistence } from '../../src/config/store-persistence'
import { assembleApp } from '../../src/http/assemble'
import { createLogger } from '../../src/http/log'
import { noteRemoteAddress } from '../../src/http/remote'
import { indexApiRoutes, type IndexApiDeps } from '../../src/indexer/routes'
import { createSecurity } from '../../src/security'
import { securityRoutes } from '../../src/security/routes'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { Store } from '../../src/store/port'

export interface BarePlatform {
  url: string
  admin: { name: string; password: string }
  /** The store behind the REST API right now (for assertions that bypass HTTP). */
  readonly store: Store
  reset(): Promise<void>
  stop(): Promise<void>
}

export const PLATFORM_ADMIN = { name: 'admin', password: 'Platform-admin-1' }

export async function startBarePlatform(
  users: Array<{ name: string; password: string; backend_roles?: string[]; roles?: string[] }> = [],
  /** roles.yml entries (e.g. an explicit system-index grant), beside the built-in roles. */
  roles: Record<string, unknown> = {},
): Promise<BarePlatform> {
  const root = mkdtempSync(join(tmpdir(), 'svc-bare-platform-'))
  const configDir = join(root, 'config')
  mkdirSync(join(configDir, 'security'), { recursive: true })
  const entries: Record<string, unknown> = { _meta: { type: 'internalusers', config_version: 2 } }
  for (const u of [{ ...PLATFORM_ADMIN, backend_roles: ['admin'] }, ...users]) {
    entries[u.name] = {
      hash: await Bun.password.hash(u.password, { algorithm: 'bcrypt', cost: 4 }),
      backend_roles: u.backend_roles ?? [],
      ...('roles' in u && u.roles ? { opendistro_security_roles: u.roles } : {}),
    }
  }
  writeFileSync(join(configDir, 'security', 'internal_users.yml'), JSON.stringify(entries))
  if (Object.keys(roles).length > 0)
    writeFileSync(join(configDir, 'security', 'roles.yml'), JSON.stringify({ _meta: { type: 'roles', config_version: 2 }, ...roles }))
  const node = buildNodeConfig(
    { 'http.port': 0, 'path.data': join(root, 'data'), 'security.auth_failures.max_attempts': 0 },
    'test',
    configDir,
  )
  const log = createLogger({ level: 'error' })
  const security = await createSecurity({ node, dataDir: join(root, 'data'), log, env: {} })

  let store: Store = openEmbeddedStore(':memory:')
  const settings = () => new ClusterSettings(node, storeSettingsPersistence(store))
  const deps: IndexApiDeps = { store, security: security.security, settings: settings(), node, log, now: Date.now }
  const http = assembleApp({
    security: security.security,
    log,
    pluginRoutes: securityRoutes(security.security),
    groups: [indexApiRoutes(deps)],
  })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    fetch: (request, srv) => {
      noteRemoteAddress(request, srv)
      return http.handle(request)
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}`,
    admin: PLATFORM_ADMIN,
    get store() {
      return store
    },
    async reset() {
      const old = store
      store = openEmbeddedStore(':memory:')
      deps.store = store
      deps.settings = settings()
      await old.close()
    },
    async stop() {
      await server.stop(true)
      await store.close()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

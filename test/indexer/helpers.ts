// A real index API over real HTTP: the embedded store on a temp file, the security layer with
// test users and roles from YAML files, the app assembled as in production.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { assembleApp } from '../../src/http/assemble'
import { createLogger } from '../../src/http/log'
import { noteRemoteAddress } from '../../src/http/remote'
import { indexApiRoutes } from '../../src/indexer/routes'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { Store } from '../../src/store/port'
import { basic, securityFor, tempDirs, usersFile, writeSecurityFile } from '../security/helpers'

export interface TestServer {
  url: string
  store: Store
  /** fetch with the named user's credentials (`undefined` = none). */
  call(
    user: string | undefined,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; text: string; headers: Headers }>
  stop(): Promise<void>
}

export const PASSWORD = 'Test-password-1'

export async function startIndexApi(opts: {
  roles?: string
  mapping?: string
  users: Record<string, { roles?: string[]; backend_roles?: string[] }>
}): Promise<TestServer> {
  const dirs = tempDirs()
  const users = Object.fromEntries(Object.entries(opts.users).map(([n, u]) => [n, { password: PASSWORD, ...u }]))
  writeSecurityFile(dirs, 'internal_users.yml', await usersFile(users))
  if (opts.roles) writeSecurityFile(dirs, 'roles.yml', opts.roles)
  if (opts.mapping) writeSecurityFile(dirs, 'roles_mapping.yml', opts.mapping)
  const security = await securityFor(dirs)
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-indexer-'))
  const node = buildNodeConfig({ 'path.data': dataDir, 'node.name': 'test-node', 'cluster.name': 'test-cluster' }, 'test', dirs.configDir)
  const store = openEmbeddedStore(join(dataDir, 'store.db'))
  const log = createLogger({ level: 'error', write: () => {} })
  const settings = new ClusterSettings(node, memoryPersistence())
  const app = assembleApp({
    security: security.security,
    log,
    pluginRoutes: [],
    groups: [indexApiRoutes({ store, security: security.security, settings, node, log, now: Date.now })],
  })
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req, srv) => {
      noteRemoteAddress(req, srv as never)
      return app.handle(req)
    },
  })
  const url = `http://127.0.0.1:${server.port}`
  return {
    url,
    store,
    async call(user, method, path, body) {
      const headers: Record<string, string> = {}
      if (user) headers.authorization = basic(user, PASSWORD)
      let payload: string | undefined
      if (body !== undefined) {
        payload = typeof body === 'string' ? body : JSON.stringify(body)
        headers['content-type'] = 'application/json'
      }
      const res = await fetch(url + path, { method, headers, body: payload })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: res.status, body: parsed, text, headers: res.headers }
    },
    async stop() {
      server.stop(true)
      await store.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

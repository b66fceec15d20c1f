/**
 * A real server for the findings tests: the embedded store on a temp file,
 * dynamic settings persisted in that store, security from YAML files, the
 * Setup bootstrap (which creates the findings streams), the findings routes
 * and the index API, assembled by the product's own code behind Bun.serve.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Deps } from '../../../src/app'
import { ClusterSettings } from '../../../src/config/cluster-settings'
import { buildNodeConfig } from '../../../src/config/node-config'
import { storeSettingsPersistence } from '../../../src/config/store-persistence'
import { assembleApp } from '../../../src/http/assemble'
import { createLogger } from '../../../src/http/log'
import { noteRemoteAddress } from '../../../src/http/remote'
import { indexApiRoutes } from '../../../src/indexer/routes'
import { Journal } from '../../../src/journal/journal'
import { findingsRoutes } from '../../../src/ruleset/findings/routes'
import { findingsReadFilter } from '../../../src/ruleset/findings/visibility'
import { appendFindings, type FindingInput } from '../../../src/ruleset/findings/writer'
import { createSecurity } from '../../../src/security'
import { runBootstrap } from '../../../src/setup/bootstrap'
import { openEmbeddedStore } from '../../../src/store/embedded'
import type { Store } from '../../../src/store/port'

export const PASSWORD = 'pw-123456'

/**
 * `admin`: all_access. `analyst` (backend role `blue`) and `red` (backend role
 * `red`): the case-management actions, update rights on the findings backing
 * indices only, read on the findings streams and on \`misc-*\`. `viewer`: search only, no case
 * update. `nobody`: no role.
 */
const USERS: Record<string, string[]> = { admin: ['admin'], analyst: ['blue', 'case'], red: ['red', 'case'], viewer: ['view'], nobody: [] }

const ROLES = `
case_manager:
  cluster_permissions:
    - "cluster:admin/platform/securityanalytics/findings/update"
    - "cluster:admin/platform/securityanalytics/findings/get"
  index_permissions:
    - index_patterns: [".ds-svc-findings-v5-*"]
      allowed_actions: ["indices:data/write/update", "read"]
    - index_patterns: ["svc-findings-v5-*", "misc-*"]
      allowed_actions: ["read"]
finding_viewer:
  cluster_permissions: ["cluster:admin/platform/securityanalytics/findings/get"]
`

const MAPPING = `
case_manager:
  backend_roles: ["case"]
finding_viewer:
  backend_roles: ["view"]
`

export interface Answer {
  status: number
  body: any
}

export interface FindingsServer {
  url: string
  deps: Deps
  store: Store
  request(method: string, path: string, opts?: { body?: unknown; raw?: string; user?: string }): Promise<Answer>
  /** Findings written through the product's writer; returns `{_id, _index}` of each. */
  addFindings(inputs: FindingInput[]): Promise<Array<{ _id: string; _index: string }>>
  source(index: string, id: string): Promise<any>
  stop(): Promise<void>
}

export async function startFindingsServer(): Promise<FindingsServer> {
  const root = mkdtempSync(join(tmpdir(), 'svc-findings-'))
  const configDir = join(root, 'config')
  const dataDir = join(root, 'data')
  const securityDir = join(configDir, 'security')
  mkdirSync(securityDir, { recursive: true })
  mkdirSync(dataDir, { recursive: true })
  const hash = await Bun.password.hash(PASSWORD, { algorithm: 'bcrypt', cost: 4 })
  const users = ['_meta:', '  type: internalusers', '  config_version: 2']
  for (const [name, backendRoles] of Object.entries(USERS))
    users.push(`${name}:`, `  hash: ${JSON.stringify(hash)}`, `  backend_roles: ${JSON.stringify(backendRoles)}`)
  writeFileSync(join(securityDir, 'internal_users.yml'), users.join('\n') + '\n')
  writeFileSync(join(securityDir, 'roles.yml'), `_meta:\n  type: roles\n  config_version: 2\n${ROLES}`)
  writeFileSync(join(securityDir, 'roles_mapping.yml'), `_meta:\n  type: rolesmapping\n  config_version: 2\n${MAPPING}`)

  const node = buildNodeConfig({ 'path.data': dataDir, 'node.name': 'findings-node', 'cluster.name': 'findings-test' }, 'test', configDir)
  const log = createLogger({ level: 'error', write: () => {} })
  const store = openEmbeddedStore(join(dataDir, 'store.db'))
  const settings = new ClusterSettings(node, storeSettingsPersistence(store))
  const { security } = await createSecurity({ node, dataDir, log, env: {} })
  const journal = new Journal(join(dataDir, 'journal.db'))
  const deps: Deps = { node, settings, store, security, log, dataDir, now: Date.now, journal }
  const boot = await runBootstrap(deps)
  if (boot.status !== 'ready') throw new Error(`bootstrap ${boot.status} at ${boot.failedTask}`)

  const app = assembleApp({
    security,
    log,
    pluginRoutes: findingsRoutes(deps),
    groups: [indexApiRoutes({ ...deps, readFilter: findingsReadFilter(deps) })],
  })
  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (req, srv) => {
      noteRemoteAddress(req, srv as Server<unknown>)
      return app.handle(req)
    },
  })
  const url = `http://127.0.0.1:${server.port}`
  return {
    url,
    deps,
    store,
    async request(method, path, { body, raw, user = 'admin' } = {}) {
      const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body))
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: payload,
      })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: res.status, body: parsed }
    },
    async addFindings(inputs) {
      const written = await appendFindings(store, inputs, { refresh: true })
      for (const w of written) if (w.error || !w._id) throw new Error(`finding not written: ${w.error}`)
      return written.map((w) => ({ _id: w._id!, _index: w._index }))
    },
    async source(index, id) {
      const doc = await store.get({ index, id })
      if (!doc.found) throw new Error(`no document ${index}/${id}`)
      return doc._source
    },
    async stop() {
      server.stop(true)
      await store.close()
      journal.close()
      rmSync(root, { recursive: true, force: true })
    },
  }
}

let events = 0
/** A matched security event and rule, as a detector would hand them to the writer. */
export function sampleFinding(opts: { detector?: string; level?: string; title?: string; at?: string } = {}): FindingInput {
  const n = ++events
  return {
    event: {
      _id: `ev-${n}`,
      _index: '.ds-svc-events-v5-security-000001',
      _source: {
        '@timestamp': opts.at ?? new Date(Date.UTC(2026, 8, 10, 12, 0, n)).toISOString(),
        agent: { id: '001', name: 'web-prod-01' },
        event: { action: 'login_failed', kind: 'event' },
        source: { ip: '10.0.0.1' },
        svc: { integration: { name: 'linux', category: 'security' } },
      },
    },
    rule: {
      id: `rule-${opts.level ?? 'medium'}`,
      title: opts.title ?? 'SSH failed password',
      level: opts.level ?? 'medium',
      status: 'stable',
      tags: ['attack.credential-access'],
    },
    detector: { id: opts.detector ?? 'det-blue', type: 'linux' },
  }
}

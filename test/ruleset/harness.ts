/**
 * A real server for the Ruleset Management tests: the embedded store on a temp file, dynamic
 * settings persisted in that store (read fresh on every operation), security from YAML files,
 * the Setup bootstrap (which creates the events and findings streams), the ruleset routes and
 * the index API, assembled by the product's own code behind Bun.serve. `restart()` closes
 * everything and builds it again over the same files, as a node restart would.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'
import type { Deps } from '../../src/app'
import { ClusterSettings } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { storeSettingsPersistence } from '../../src/config/store-persistence'
import { assembleApp } from '../../src/http/assemble'
import { createLogger } from '../../src/http/log'
import { noteRemoteAddress } from '../../src/http/remote'
import { indexApiRoutes } from '../../src/indexer/routes'
import { createRuleset, type Ruleset, rulesetRoutes } from '../../src/ruleset'
import { Journal } from '../../src/journal/journal'
import { forgetEnsured } from '../../src/ruleset/indices'
import { createSecurity } from '../../src/security'
import { runBootstrap } from '../../src/setup/bootstrap'
import { openEmbeddedStore } from '../../src/store/embedded'

export const PASSWORD = 'pw-123456'
export const EVENTS = 'svc-events-v5-security'
export const FINDINGS = 'svc-findings-v5-security'

/**
 * `admin`: all_access. `blue` / `red` (backend roles `blue`/`red` plus `det`): every Security
 * Analytics action and read on the events streams. `plain`: the same rights by user name, no
 * backend role. `noread`: the actions without any index right. `nobody`: nothing.
 */
const USERS: Record<string, string[]> = { admin: ['admin'], blue: ['blue', 'det'], red: ['red', 'det'], plain: [], noread: [], nobody: [] }

const ROLES = `
detector_manager:
  cluster_permissions: ["cluster:admin/platform/securityanalytics/*"]
  index_permissions:
    - index_patterns: ["svc-events-v5-*", ".ds-svc-events-v5-*"]
      allowed_actions: ["read"]
detector_blind:
  cluster_permissions: ["cluster:admin/platform/securityanalytics/*"]
`

const MAPPING = `
detector_manager:
  backend_roles: ["det"]
  users: ["plain"]
detector_blind:
  users: ["noread"]
`

export interface Answer {
  status: number
  body: any
  headers: Headers
}

export interface RulesetServer {
  deps: Deps
  ruleset: Ruleset
  request(method: string, path: string, opts?: { body?: unknown; raw?: string; user?: string }): Promise<Answer>
  /** PUT /_cluster/settings equivalent (persistent), seen by the next operation. */
  setSetting(key: string, value: unknown): Promise<void>
  /** Indexes events into the events stream; answers `{_id, _index}` of each. */
  index(events: Array<Record<string, unknown>>): Promise<Array<{ _id: string; _index: string }>>
  /** Every finding in the findings stream. */
  findings(): Promise<Array<{ _id: string; _source: any }>>
  restart(): Promise<void>
  stop(): Promise<void>
}

export async function startRulesetServer(): Promise<RulesetServer> {
  const root = mkdtempSync(join(tmpdir(), 'svc-ruleset-'))
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
  const node = buildNodeConfig({ 'path.data': dataDir, 'node.name': 'ruleset-node', 'cluster.name': 'ruleset-test' }, 'test', configDir)
  const log = createLogger({ level: 'error', write: () => {} })

  let server: Server<undefined>
  let url = ''
  let current: { deps: Deps; ruleset: Ruleset }

  const start = async (bootstrap: boolean) => {
    const store = openEmbeddedStore(join(dataDir, 'store.db'))
    const settings = new ClusterSettings(node, storeSettingsPersistence(store), Date.now, 0)
    const { security } = await createSecurity({ node, dataDir, log, env: {} })
    const journal = new Journal(join(dataDir, 'journal.db'))
    const deps: Deps = { node, settings, store, security, log, dataDir, now: Date.now, journal }
    if (bootstrap) {
      const boot = await runBootstrap(deps)
      if (boot.status !== 'ready') throw new Error(`bootstrap ${boot.status} at ${boot.failedTask}`)
    }
    const ruleset = createRuleset(deps)
    const app = assembleApp({ security, log, pluginRoutes: rulesetRoutes(ruleset), groups: [indexApiRoutes(deps)] })
    server = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (req, srv) => {
        noteRemoteAddress(req, srv as Server<unknown>)
        return app.handle(req)
      },
    })
    url = `http://127.0.0.1:${server.port}`
    current = { deps, ruleset }
  }
  const close = async () => {
    await current.ruleset.stop()
    server.stop(true)
    forgetEnsured(current.deps.store)
    current.deps.journal.close()
    await current.deps.store.close()
  }
  await start(true)

  return {
    get deps() {
      return current.deps
    },
    get ruleset() {
      return current.ruleset
    },
    async request(method, path, { body, raw, user = 'admin' } = {}) {
      const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body))
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString('base64')}`,
          ...(payload === undefined ? {} : { 'content-type': raw === undefined ? 'application/json' : 'application/yaml' }),
        },
        body: payload,
      })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers }
    },
    async setSetting(key, value) {
      await current.deps.settings.update({ persistent: { [key]: value } })
    },
    async index(events) {
      const lines = events.flatMap((e) => [{ create: { _index: EVENTS } }, e])
      const r = await current.deps.store.bulk({ body: lines, refresh: true })
      if (r.errors) throw new Error(`events not indexed: ${JSON.stringify(r.items.find((i) => i.create?.error))}`)
      return r.items.map((i) => ({ _id: i.create!._id!, _index: i.create!._index }))
    },
    async findings() {
      const r = await current.deps.store.search({ index: FINDINGS, body: { size: 10_000, query: { match_all: {} } } })
      return r.hits.hits.map((h) => ({ _id: h._id, _source: h._source }))
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

/** A linux integration as the Content Manager hands it over. */
export const LINUX = { id: 'int-linux', metadata: { title: 'linux', description: 'Linux hosts' }, category: 'security' }

/** A CTI rule document (Sigma with the product's extensions). */
export function ctiRule(id: string, detection: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    id,
    metadata: { title: `Rule ${id}`, author: 'tests' },
    status: 'stable',
    level: 'medium',
    logsource: { product: 'linux' },
    tags: ['attack.t1110'],
    detection,
    ...extra,
  }
}

/** A user detector body over the security events stream. */
export function detectorBody(
  opts: { name?: string; custom?: string[]; prePackaged?: string[]; indices?: string[]; enabled?: boolean; interval?: number } = {},
) {
  return {
    type: 'detector',
    name: opts.name ?? 'linux-custom',
    detector_type: 'linux',
    enabled: opts.enabled ?? true,
    schedule: { period: { interval: opts.interval ?? 1, unit: 'MINUTES' } },
    inputs: [
      {
        detector_input: {
          description: 'test detector',
          indices: opts.indices ?? [EVENTS],
          custom_rules: (opts.custom ?? []).map((id) => ({ id })),
          pre_packaged_rules: (opts.prePackaged ?? []).map((id) => ({ id })),
        },
      },
    ],
    triggers: [],
  }
}

/**
 * A real server for the Ruleset Management tests: the embedded store on a temp file, dynamic
 * settings persisted in that store (read fresh on every operation), security from YAML files,
 * the Setup bootstrap (which creates the events and findings streams), the ruleset routes and
 * the index API, built by the shared test builder (test/helpers/app.ts). `restart()` closes
 * everything and builds it again over the same files, as a node restart would.
 */
import type { Logger } from '../../src/http/log'
import type { Deps } from '../../src/deps'
import { indexApiRoutes } from '../../src/indexer/routes'
import { createRuleset, type Ruleset, rulesetRoutes } from '../../src/ruleset'
import { forgetEnsured } from '../../src/ruleset/indices'
import { startTestApp } from '../helpers/app'
import { EVENTS } from '../helpers/calls'

export const PASSWORD = 'pw-123456'
export { EVENTS }
export const FINDINGS = 'svc-findings-v5-security'

/**
 * `admin`: all_access. `blue` / `red` (backend roles `blue`/`red` plus `det`): every Security
 * Analytics action and read on the events streams. `plain`: the same rights by user name, no
 * backend role. `noread`: the actions without any index right. `nobody`: nothing.
 */
const USERS: Record<string, string[]> = { admin: ['admin'], blue: ['blue', 'det'], red: ['red', 'det'], plain: [], noread: [], nobody: [] }

const ROLES = {
  detector_manager: {
    cluster_permissions: ['cluster:admin/platform/securityanalytics/*'],
    index_permissions: [{ index_patterns: ['svc-events-v5-*', '.ds-svc-events-v5-*'], allowed_actions: ['read'] }],
  },
  detector_blind: { cluster_permissions: ['cluster:admin/platform/securityanalytics/*'] },
}

const MAPPING = {
  detector_manager: { backend_roles: ['det'], users: ['plain'] },
  detector_blind: { users: ['noread'] },
}

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

/** Starts the server; with `linux`, the Linux integration is synced in before it is answered. */
export async function startRulesetServer(opts: { log?: Logger; linux?: boolean } = {}): Promise<RulesetServer> {
  let ruleset: Ruleset
  const app = await startTestApp({
    log: opts.log,
    users: Object.entries(USERS).map(([name, backend_roles]) => ({ name, password: PASSWORD, backend_roles })),
    roles: ROLES,
    rolesMapping: MAPPING,
    node: { 'node.name': 'ruleset-node', 'cluster.name': 'ruleset-test' },
    routes: (deps) => {
      ruleset = createRuleset(deps)
      return {
        pluginRoutes: rulesetRoutes(ruleset),
        groups: [indexApiRoutes(deps)],
        async stop() {
          await ruleset.stop()
          forgetEnsured(deps.store)
        },
      }
    },
  })

  const s: RulesetServer = {
    get deps() {
      return app.deps
    },
    get ruleset() {
      return ruleset
    },
    async request(method, path, { body, raw, user = 'admin' } = {}) {
      const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body))
      const r = await app.request(method, path, {
        body: payload,
        user,
        // Raw bodies are Sigma YAML on the rule routes, JSON text elsewhere (JSON routes refuse YAML types: 406).
        headers: raw === undefined ? {} : { 'content-type': isRuleBody(path) ? 'application/yaml' : 'application/json' },
      })
      return { status: r.status, body: r.body, headers: r.headers }
    },
    async setSetting(key, value) {
      await app.deps.settings.update({ persistent: { [key]: value } })
    },
    async index(events) {
      const lines = events.flatMap((e) => [{ create: { _index: EVENTS } }, e])
      const r = await app.deps.store.bulk({ body: lines, refresh: true })
      if (r.errors) throw new Error(`events not indexed: ${JSON.stringify(r.items.find((i) => i.create?.error))}`)
      return r.items.map((i) => ({ _id: i.create!._id!, _index: i.create!._index }))
    },
    async findings() {
      const r = await app.deps.store.search({ index: FINDINGS, body: { size: 10_000, query: { match_all: {} } } })
      return r.hits.hits.map((h) => ({ _id: h._id, _source: h._source }))
    },
    restart: () => app.restart(),
    stop: () => app.stop(),
  }
  if (opts.linux) await s.ruleset.sync.upsertIntegration('standard', LINUX, false)
  return s
}

/** A linux integration as the Content Manager hands it over. */
export const LINUX = { id: 'int-linux', metadata: { title: 'linux', description: 'Linux hosts' }, category: 'security' }

/**
 * The `linux` detector over the events stream with these standard rules, through the Content
 * Manager's sync call. An enabled one is answered once its warm-up has its rules on the evaluator
 * thread (sent, or a set already there reused), so a test's first run meets them there.
 */
export async function linuxDetector(s: RulesetServer, ruleIds: string[], enabled = true): Promise<void> {
  const { sets } = s.ruleset.evaluator
  const before = sets.sent + sets.reused
  await s.ruleset.sync.upsertDetector({ integrationId: LINUX.id, logType: 'linux', category: 'security', ruleIds, enabled })
  for (let waited = 0; enabled && sets.sent + sets.reused === before; waited += 20) {
    if (waited > 10_000) throw new Error('the detector was not warmed up within 10 s')
    await Bun.sleep(20)
  }
}

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

/** Rule create/update take Sigma YAML; every other ruleset route (rule search included) takes JSON. */
function isRuleBody(path: string): boolean {
  return /\/rules(\/(?!_search)[^?]*)?(\?|$)/.test(path)
}

/** A ruleset server holding the Linux integration and one event (what the rules API and evaluate tests start from). */
export async function startLinuxServer(): Promise<RulesetServer> {
  const s = await startRulesetServer({ linux: true })
  await s.index([{ '@timestamp': '2026-09-10T12:00:00Z', event: { action: 'x' } }])
  return s
}

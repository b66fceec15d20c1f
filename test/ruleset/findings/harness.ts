/**
 * A real server for the findings tests: the embedded store on a temp file,
 * dynamic settings persisted in that store, security from YAML files, the
 * Setup bootstrap (which creates the findings streams), the findings routes
 * and the index API, built by the shared test builder (test/helpers/app.ts).
 */
import type { Deps } from '../../../src/deps'
import { indexApiRoutes } from '../../../src/indexer/routes'
import { findingsRoutes } from '../../../src/ruleset/findings/routes'
import { findingsReadFilter } from '../../../src/ruleset/findings/visibility'
import { appendFindings, type FindingInput } from '../../../src/ruleset/findings/writer'
import type { Store } from '../../../src/store/port'
import { startTestApp } from '../../helpers/app'

export const PASSWORD = 'pw-123456'

/**
 * `admin`: all_access. `analyst` (backend role `blue`) and `red` (backend role
 * `red`): the case-management actions, update rights on the findings backing
 * indices only, read on the findings streams and on \`misc-*\`. `viewer`: search only, no case
 * update. `nobody`: no role.
 */
const USERS: Record<string, string[]> = { admin: ['admin'], analyst: ['blue', 'case'], red: ['red', 'case'], viewer: ['view'], nobody: [] }

const ROLES = {
  case_manager: {
    cluster_permissions: [
      'cluster:admin/platform/securityanalytics/findings/update',
      'cluster:admin/platform/securityanalytics/findings/get',
    ],
    index_permissions: [
      { index_patterns: ['.ds-svc-findings-v5-*'], allowed_actions: ['indices:data/write/update', 'read'] },
      { index_patterns: ['svc-findings-v5-*', 'misc-*'], allowed_actions: ['read'] },
    ],
  },
  finding_viewer: { cluster_permissions: ['cluster:admin/platform/securityanalytics/findings/get'] },
}

const MAPPING = {
  case_manager: { backend_roles: ['case'] },
  finding_viewer: { backend_roles: ['view'] },
}

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
  const app = await startTestApp({
    users: Object.entries(USERS).map(([name, backend_roles]) => ({ name, password: PASSWORD, backend_roles })),
    roles: ROLES,
    rolesMapping: MAPPING,
    node: { 'node.name': 'findings-node', 'cluster.name': 'findings-test' },
    routes: (deps) => ({
      pluginRoutes: findingsRoutes(deps),
      groups: [indexApiRoutes({ ...deps, readFilter: findingsReadFilter(deps) })],
    }),
  })
  const { deps } = app
  const store = deps.store
  return {
    url: app.url,
    deps,
    store,
    async request(method, path, { body, raw, user = 'admin' } = {}) {
      const r = await app.request(method, path, { body: raw ?? (body === undefined ? undefined : JSON.stringify(body)), user })
      return { status: r.status, body: r.body }
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
    stop: () => app.stop(),
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

// A real HTTP server over the content routes, built by the shared test builder
// (test/helpers/app.ts): embedded store in memory, real security from security files, real
// settings, a real journal, and the Engine test server (or `engine.mock`). Content indices are
// created from Setup's own definitions.
import type { ClusterSettings } from '../../src/config/cluster-settings'
import { createContentManager, type ContentManager } from '../../src/content/manager'
import { upsertOneByOne, type RulesetSync } from '../../src/ports/ruleset-sync'
import type { Space } from '../../src/content/spaces'
import { createLogger } from '../../src/http/log'
import type { Journal } from '../../src/journal/journal'
import type { Security } from '../../src/http/caller'
import { CONTENT, CONTENT_ALIASES } from '../../src/setup/indices'
import type { Store } from '../../src/store/port'
import { startEngineServer, type EngineServer } from '../fixtures/engine/server'
import { startTestApp } from '../helpers/app'

export const PREFIX = '/_plugins/_content_manager'

export const USERS = {
  admin: { password: 'admin-pw', backend_roles: ['admin'] },
  /** Holds the content-manager cluster actions and write rights on the content indices. */
  editor: { password: 'editor-pw', backend_roles: ['editor'] },
  /** Holds the cluster actions but no rights on the content indices: its writes are refused. */
  clusterOnly: { password: 'cluster-pw', backend_roles: ['cluster_only'] },
}
export type UserName = keyof typeof USERS

const ROLES = {
  content_editor: {
    cluster_permissions: ['cluster:admin/content_manager/*'],
    index_permissions: [{ index_patterns: ['svc-threatintel-*'], allowed_actions: ['indices:data/write/*', 'read'] }],
  },
  content_cluster_only: { cluster_permissions: ['cluster:admin/content_manager/*'] },
}
const MAPPING = {
  all_access: { backend_roles: ['admin'] },
  content_editor: { backend_roles: ['editor'] },
  content_cluster_only: { backend_roles: ['cluster_only'] },
}

/** Records what the Content Manager asks Ruleset Management to do; can be told to refuse rules. */
export function recordingRulesetSync() {
  const calls: Array<{ op: string; space: Space; id: string; existed?: boolean; parent?: string }> = []
  let refuse: string | undefined
  const sync: RulesetSync & { calls: typeof calls; refuseRules(reason?: string): void } = {
    calls,
    refuseRules: (reason) => void (refuse = reason),
    async upsertRule(space, rule, integrationId, existed) {
      if (refuse) {
        const { RulesetRejected } = await import('../../src/ports/ruleset-sync')
        throw new RulesetRejected(refuse)
      }
      calls.push({ op: 'upsertRule', space, id: String(rule.id), existed, parent: integrationId })
    },
    async upsertRules(space, rules) {
      return upsertOneByOne(sync, space, rules)
    },
    async deleteRule(space, id) {
      calls.push({ op: 'deleteRule', space, id })
    },
    async upsertIntegration(space, integration, existed) {
      calls.push({ op: 'upsertIntegration', space, id: String(integration.id), existed })
    },
    async deleteIntegration(space, id) {
      calls.push({ op: 'deleteIntegration', space, id })
    },
  }
  return sync
}

export interface Harness {
  url: string
  store: Store
  security: Security
  log: ReturnType<typeof createLogger>
  settings: ClusterSettings
  content: ContentManager
  journal: Journal
  engine?: EngineServer
  ruleset: ReturnType<typeof recordingRulesetSync>
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; raw?: string; user?: UserName; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any }>
  /** Changes dynamic settings (the cache is off, so the next request sees them). */
  set(values: Record<string, unknown>): Promise<void>
  stop(): Promise<void>
}

export async function createContentIndices(store: Store): Promise<void> {
  const wanted = new Set<string>([
    CONTENT_ALIASES.integrations,
    CONTENT_ALIASES.decoders,
    CONTENT_ALIASES.rules,
    CONTENT_ALIASES.kvdbs,
    CONTENT_ALIASES.filters,
    CONTENT_ALIASES.policies,
    CONTENT_ALIASES.enrichments,
  ])
  for (const def of CONTENT) {
    if (!wanted.has(def.alias)) continue
    await store.createIndex({ index: def.index, body: { ...def.body, aliases: { [def.alias]: def.aliasDefinition } } })
  }
}

export async function startHarness(
  opts: {
    node?: Record<string, unknown>
    engine?: 'mock' | 'server'
    skipStartup?: boolean
    now?: () => number
    /** Wraps the embedded store the whole harness uses (fault injection for the promotion tests). */
    wrapStore?: (store: Store) => Store
  } = {},
): Promise<Harness> {
  const engine = opts.engine === 'mock' ? undefined : startEngineServer()
  const log = createLogger({ write: () => {} })
  const ruleset = recordingRulesetSync()
  let content: ContentManager
  const app = await startTestApp({
    users: Object.entries(USERS).map(([name, u]) => ({ name, ...u })),
    roles: ROLES,
    rolesMapping: MAPPING,
    node: {
      'plugins.content_manager.engine.mock': opts.engine === 'mock',
      ...(engine ? { 'plugins.content_manager.engine.socket_path': engine.socketPath } : {}),
      ...opts.node,
    },
    store: 'memory',
    wrapStore: opts.wrapStore,
    settingsIn: 'memory',
    bootstrap: false,
    log,
    routes: async ({ store, settings, security, journal }) => {
      await createContentIndices(store)
      content = createContentManager({ store, settings, security, log, now: opts.now ?? Date.now, journal, rulesetSync: ruleset })
      if (!opts.skipStartup) await content.start()
      return { pluginRoutes: content.routes, stop: () => content.engineLoadsSettled() }
    },
  })
  const { store, security, settings, journal } = app.deps

  return {
    url: app.url,
    store,
    security,
    log,
    settings,
    content: content!,
    journal,
    engine,
    ruleset,
    async request(method, path, { body, raw, user = 'admin', headers = {} } = {}) {
      const r = await app.request(method, path, {
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
        user,
        headers: { 'content-type': 'application/json', ...headers },
      })
      return { status: r.status, body: r.body }
    },
    async set(values) {
      await settings.update({ persistent: values })
    },
    async stop() {
      await app.stop()
      await engine?.stop()
    },
  }
}

// --- resource payloads shaped as reference 4.2.2 --------------------------------------------------

export const integrationBody = (title: string, extra: Record<string, unknown> = {}) => ({
  resource: { metadata: { title, author: 'ACME', description: `${title} logs` }, category: 'applications', ...extra },
})

export const decoderBody = (integration: string, name = 'decoder/app-access/0', extra: Record<string, unknown> = {}) => ({
  integration,
  resource: {
    name,
    metadata: { title: 'App access', author: 'ACME' },
    check: [{ 'event.original': 'exists()' }],
    'parse|event.original': ['<source.ip> - <user.name> "<http.request.method> <url.path>"'],
    normalize: [{ map: [{ 'event.kind': 'event' }] }],
    ...extra,
  },
})

export const ruleBody = (integration: string, title: string, product: string) => ({
  integration,
  resource: {
    metadata: { title, author: 'ACME' },
    status: 'experimental',
    level: 'low',
    logsource: { product, category: 'system' },
    detection: { condition: 'selection', selection: { 'event.action': ['test_event'] } },
  },
})

export const kvdbBody = (integration: string, title = 'lookup') => ({
  integration,
  resource: { metadata: { title, author: 'ACME' }, content: { key1: 'value1', key2: { any: 'json' } } },
})

export const filterBody = (space: string, name = 'filter/prefilter/0') => ({
  space,
  resource: { name, type: 'pre-filter', check: "$host.os.platform == 'ubuntu'", metadata: { title: 'Prefilter', author: 'ACME' } },
})

/** Waits until `check` holds, polling; fails the test with `what` after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, ms = 3000): Promise<void> {
  const until = Date.now() + ms
  while (Date.now() < until) {
    if (await check()) return
    await Bun.sleep(10)
  }
  throw new Error(`timed out waiting for ${what}`)
}

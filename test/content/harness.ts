// A real HTTP server over the content routes: embedded store in memory, real security from
// security files in a temp dir, real settings, a real journal, and the Engine test server (or
// `engine.mock`). Content indices are created from Setup's own definitions.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Server } from 'bun'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { createContentManager, type ContentManager } from '../../src/content/manager'
import type { RulesetSync } from '../../src/content/ruleset-sync'
import type { Space } from '../../src/content/spaces'
import { assembleApp } from '../../src/http/assemble'
import { createLogger } from '../../src/http/log'
import { noteRemoteAddress } from '../../src/http/remote'
import { Journal } from '../../src/journal/journal'
import { CONTENT, CONTENT_ALIASES } from '../../src/setup/indices'
import { EmbeddedStore } from '../../src/store/embedded/store'
import type { Store } from '../../src/store/port'
import { startEngineServer, type EngineServer } from '../fixtures/engine/server'
import { basic, securityFor, tempDirs, usersFile, writeSecurityFile } from '../security/helpers'

export const PREFIX = '/_plugins/_content_manager'

export const USERS = {
  admin: { password: 'admin-pw', backend_roles: ['admin'] },
  /** Holds the content-manager cluster actions and write rights on the content indices. */
  editor: { password: 'editor-pw', backend_roles: ['editor'] },
  /** Holds the cluster actions but no rights on the content indices: its writes are refused. */
  clusterOnly: { password: 'cluster-pw', backend_roles: ['cluster_only'] },
}
export type UserName = keyof typeof USERS

const ROLES = `
_meta:
  type: roles
  config_version: 2
content_editor:
  cluster_permissions: ["cluster:admin/content_manager/*"]
  index_permissions:
    - index_patterns: ["svc-threatintel-*"]
      allowed_actions: ["indices:data/write/*", "read"]
content_cluster_only:
  cluster_permissions: ["cluster:admin/content_manager/*"]
`
const MAPPING = `
_meta:
  type: rolesmapping
  config_version: 2
all_access:
  backend_roles: ["admin"]
content_editor:
  backend_roles: ["editor"]
content_cluster_only:
  backend_roles: ["cluster_only"]
`

/** Records what the Content Manager asks Ruleset Management to do; can be told to refuse rules. */
export function recordingRulesetSync() {
  const calls: Array<{ op: string; space: Space; id: string; existed?: boolean; parent?: string }> = []
  let refuse: string | undefined
  const sync: RulesetSync & { calls: typeof calls; refuseRules(reason?: string): void } = {
    calls,
    refuseRules: (reason) => void (refuse = reason),
    async upsertRule(space, rule, integrationId, existed) {
      if (refuse) {
        const { RulesetRejected } = await import('../../src/content/ruleset-sync')
        throw new RulesetRejected(refuse)
      }
      calls.push({ op: 'upsertRule', space, id: String(rule.id), existed, parent: integrationId })
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
  security: Awaited<ReturnType<typeof securityFor>>['security']
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
  const dirs = tempDirs()
  writeSecurityFile(dirs, 'internal_users.yml', await usersFile(USERS))
  writeSecurityFile(dirs, 'roles.yml', ROLES)
  writeSecurityFile(dirs, 'roles_mapping.yml', MAPPING)
  const { security } = await securityFor(dirs)
  const log = createLogger({ write: () => {} })

  const engine = opts.engine === 'mock' ? undefined : startEngineServer()
  const node = buildNodeConfig(
    {
      'plugins.content_manager.engine.mock': opts.engine === 'mock',
      ...(engine ? { 'plugins.content_manager.engine.socket_path': engine.socketPath } : {}),
      ...opts.node,
    },
    'test',
    dirs.configDir,
  )
  const settings = new ClusterSettings(node, memoryPersistence(), Date.now, 0)
  const embedded = new EmbeddedStore(':memory:')
  const store = opts.wrapStore ? opts.wrapStore(embedded) : embedded
  await createContentIndices(store)
  const journalDir = mkdtempSync(join(tmpdir(), 'content-journal-'))
  const journal = new Journal(join(journalDir, 'journal.db'))
  const ruleset = recordingRulesetSync()
  const content = createContentManager({ store, settings, security, log, now: opts.now ?? Date.now, journal, rulesetSync: ruleset })
  if (!opts.skipStartup) await content.startup()

  const app = assembleApp({ security, log, pluginRoutes: content.routes })
  const server: Server<unknown> = Bun.serve({
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
    store,
    security,
    log,
    settings,
    content,
    journal,
    engine,
    ruleset,
    async request(method, path, { body, raw, user = 'admin', headers = {} } = {}) {
      const res = await fetch(url + path, {
        method,
        headers: { authorization: basic(user, USERS[user].password), 'content-type': 'application/json', ...headers },
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      })
      const text = await res.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: res.status, body: parsed }
    },
    async set(values) {
      await settings.update({ persistent: values })
    },
    async stop() {
      await content.engineLoadsSettled()
      server.stop(true)
      await engine?.stop()
      await store.close()
      journal.close()
      rmSync(journalDir, { recursive: true, force: true })
      rmSync(join(dirs.configDir, '..'), { recursive: true, force: true })
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

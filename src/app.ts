import type { Server } from 'bun'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { openBackend } from './backend'
import { ClusterSettings } from './config/cluster-settings'
import type { NodeConfig } from './config/node-config'
import { storeSettingsPersistence } from './config/store-persistence'
import { createContentManager } from './content/manager'
import { createContentSync } from './content/sync'
import { assembleApp } from './http/assemble'
import { frontDoor } from './http/front-door'
import type { Logger } from './http/log'
import type { PluginRoute } from './http/route'
import { noteRemoteAddress } from './http/remote'
import { indexApiRoutes } from './indexer/routes'
import { snapshotDeps, snapshotRoutes } from './indexer/snapshot-routes'
import { Journal } from './journal/journal'
import { createMetrics, metricsRoutes } from './metrics'
import { createRuleset, rulesetRoutes } from './ruleset'
import { findingsReadFilter, findingsRoutes } from './ruleset/findings/routes'
import type { Caller, Security } from './security/caller'
import { platformRouter } from './security/platform'
import { securityRoutes } from './security/routes'
import { setupRoutes, startSetup } from './setup'
import type { Store } from './store/port'

/** What every feature module is built from: collaborators, never globals. */
export interface Deps {
  node: NodeConfig
  settings: ClusterSettings
  store: Store
  security: Security
  log: Logger
  dataDir: string
  now: () => number
  /** Node-local record of what this node did (lock audit, job runs). */
  journal: Journal
  /**
   * Platform mode: the store bound to the caller's credentials, for work done with the caller's
   * rights (the platform checks them). Absent in embedded mode; use `storeAs(deps, caller)`.
   */
  storeFor?: (caller: Caller) => Store
}

export interface App {
  fetch: (request: Request, server?: unknown) => Response | Promise<Response>
  deps: Deps
  /** Every plugin route with the cluster action it requires (walked by the permission tests). */
  pluginRoutes: PluginRoute[]
  /** Every method and path pattern served, plugin routes and index API alike. */
  httpRoutes: Array<{ method: string; path: string }>
  storeKind: 'embedded' | 'platform'
  /** Lines telling a new user how to log in (first start). */
  loginHints: string[]
  reloadSecurity(): Promise<void>
  /** Resolves when the start-up work (bootstrap, content policies, detection clock) is done. */
  ready: Promise<void>
  close(): Promise<void>
}

/** The composition root: config -> store -> settings -> security -> feature modules -> HTTP app. */
export async function createApp(node: NodeConfig, log: Logger, opts: { env?: Record<string, string | undefined> } = {}): Promise<App> {
  const dataDir = resolve(node.values.get('path.data') as string)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const backend = await openBackend(node, dataDir, log, opts.env)
  const { store, security } = backend
  const settings = new ClusterSettings(node, storeSettingsPersistence(store))
  const journal = new Journal(join(dataDir, 'journal.db'))
  const deps: Deps = {
    node,
    settings,
    store,
    security: security.security,
    log,
    dataDir,
    now: Date.now,
    journal,
    storeFor: backend.storeFor,
  }

  const ruleset = createRuleset(deps)
  const content = createContentManager({ ...deps, rulesetSync: ruleset.sync })
  const contentSync = createContentSync(deps, content, ruleset.sync)
  const pluginRoutes: PluginRoute[] = [
    ...securityRoutes(deps.security),
    ...setupRoutes(deps),
    ...findingsRoutes(deps),
    ...rulesetRoutes(ruleset),
    ...content.routes,
    ...contentSync.routes,
  ]
  const metrics = createMetrics({
    routes: () => http.routes.map((r) => ({ method: r.method, path: r.path })),
    sources: { store, journal, engineLoads: () => content.engineLoadStates(), now: deps.now },
  })
  const http = assembleApp({
    security: deps.security,
    log,
    pluginRoutes,
    // Metrics first: its static path must not fall to the index API's `/:index/...` patterns.
    groups: [
      metricsRoutes(deps, metrics),
      ...(backend.storeFile ? [snapshotRoutes(deps, snapshotDeps(deps, backend.storeFile))] : []),
      indexApiRoutes({ ...deps, readFilter: findingsReadFilter(deps) }),
    ],
  })

  const local = (r: Request) => http.handle(r) as Promise<Response>
  const route = metrics.http.instrument(backend.endpoint ? platformRouter(backend.endpoint, log, local) : local)

  // Background start-up: requests are served meanwhile; features that need the indices wait for the setup marker.
  const setup = startSetup(deps, { embedded: backend.kind === 'embedded' })
  const started = setup.ready
    .then(async (result) => {
      if (result.status !== 'ready') return
      await content.startup()
      await contentSync.start()
      ruleset.start()
    })
    .catch((e) => log.error('start-up work failed', { error: e }))

  return {
    fetch: (request, server) => {
      noteRemoteAddress(request, server as Server<unknown> | undefined)
      return frontDoor(request, route)
    },
    deps,
    pluginRoutes,
    httpRoutes: http.routes.map((r) => ({ method: r.method.toUpperCase(), path: r.path })),
    storeKind: backend.kind,
    loginHints: security.loginHints,
    reloadSecurity: () => security.reload(),
    ready: started,
    async close() {
      setup.stop()
      await started
      await contentSync.stop()
      await ruleset.stop()
      await store.close()
      journal.close()
    },
  }
}

import type { Server } from 'bun'
import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { openBackend } from './backend'
import { feature, type Deps, type Feature } from './deps'
import { ClusterSettings } from './config/cluster-settings'
import type { NodeConfig } from './config/node-config'
import { storeSettingsPersistence } from './config/store-persistence'
import { createContentManager } from './content/manager'
import { createContentSync } from './content/sync/module'
import { assembleApp } from './http/assemble'
import { compressedResponse } from './http/compression'
import { filteredResponse } from './http/filter-path'
import { frontDoor } from './http/front-door'
import type { Logger } from './http/log'
import type { PluginRoute } from './http/route'
import { noteRemoteAddress } from './http/remote'
import { indexApiRoutes } from './indexer/routes'
import { snapshotDeps, snapshotRoutes } from './indexer/snapshot-routes'
import { Journal } from './journal/journal'
import { createMetrics } from './metrics'
import { metricsRoutes } from './metrics/route'
import { createRuleset } from './ruleset'
import { findingsReadFilter, findingsRoutes } from './ruleset/findings/routes'
import { platformRouter } from './security/platform'
import { securityRoutes } from './security/routes'
import { createSetup } from './setup'
import { createNotifications } from './notifications'
import { caseNotifier } from './notifications/case'
import { youngCollections } from './heap'

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
  /**
   * Stops the background work (detector clock, content sync, retention) without closing storage:
   * the first step of a shutdown, so that a detector run ends at its next batch boundary while
   * in-flight requests drain, instead of running on until the drain is over.
   */
  quiesce(): Promise<void>
  /** Quiesces, then closes storage. */
  close(): Promise<void>
}

/** The composition root: config -> store -> settings -> security -> feature modules -> HTTP app. */
export async function createApp(node: NodeConfig, log: Logger, opts: { env?: Record<string, string | undefined> } = {}): Promise<App> {
  const dataDir = resolve(node.values.get('path.data') as string)
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  const backend = await openBackend(node, dataDir, log, opts.env)
  const { store, security } = backend
  const settings = new ClusterSettings(node, storeSettingsPersistence(store))
  backend.useSettings?.(settings)
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
    nodeLocalStore: backend.kind === 'embedded',
  }

  const { setup, content, contentSync, ruleset, notifications, features } = createFeatures(deps, backend)
  const pluginRoutes: PluginRoute[] = features.flatMap((f) => f.routes)
  const metrics = createMetrics({
    routes: () => http.routes.map((r) => ({ method: r.method, path: r.path })),
    sources: { store, journal, engineLoads: () => content.engineLoadStates(), now: deps.now },
    collectors: [notifications.metrics],
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

  // Responses answered here, not the platform's (which filters its own), get filter_path once.
  const local = async (r: Request) => filteredResponse(r, (await http.handle(r)) as Response)
  const route = metrics.http.instrument(backend.endpoint ? platformRouter(backend.endpoint, log, local) : local)

  // Background start-up: requests are served meanwhile; features that need the indices wait for the setup marker.
  const later = [content, contentSync, ruleset, notifications]
  const started = setup
    .start()
    .then(async () => {
      if ((await setup.ready).status !== 'ready') return
      for (const f of later) await f.start()
    })
    .catch((e) => log.error('start-up work failed', { error: e }))

  const compression = node.values.get('http.compression') as boolean
  const compressionLevel = node.values.get('http.compression_level') as number
  let quiescing: Promise<void> | undefined
  const quiesce = () =>
    (quiescing ??= (async () => {
      await setup.stop()
      await started
      for (const f of [...later].reverse()) await f.stop()
    })())

  return {
    fetch: async (request, server) => {
      noteRemoteAddress(request, server as Server<unknown> | undefined)
      const response = await frontDoor(request, route)
      youngCollections.due()
      return compression ? await compressedResponse(request, response, compressionLevel) : response
    },
    deps,
    pluginRoutes,
    httpRoutes: http.routes.map((r) => ({ method: r.method.toUpperCase(), path: r.path })),
    storeKind: backend.kind,
    loginHints: security.loginHints,
    reloadSecurity: () => security.reload(),
    ready: started,
    quiesce,
    async close() {
      await quiesce()
      await store.close()
      journal.close()
    },
  }
}

/**
 * Every feature has one shape (routes, start, stop). Setup starts first: the others start, in
 * this order, once its bootstrap says ready, and stop in the reverse order.
 */
function createFeatures(deps: Deps, backend: Awaited<ReturnType<typeof openBackend>>) {
  const notifications = createNotifications(deps)
  const ruleset = createRuleset(
    deps,
    { staleMillis: Number(deps.node.values.get('plugins.security_analytics.detector_run_lease_stale_millis')) },
    {
      onPending: () => notifications.dispatcher.kick(),
      destinationExists: async (id) => (await notifications.channels.stored(id)) !== undefined,
    },
  )
  const setup = createSetup(deps, {
    ownRetention: async () => {
      const own = await backend.ownRetention()
      if (own && backend.kind === 'platform')
        deps.log.warn('the platform has no Index State Management plugin: this node applies the lifecycle policies itself')
      return own
    },
    retentionHolds: ruleset.retentionHolds,
  })
  const content = createContentManager({ ...deps, rulesetSync: ruleset.sync })
  const contentSync = createContentSync(deps, content, ruleset.sync, { iocs: ruleset.iocs, setupSettled: setup.ready })
  ruleset.contentSync.pass = () => contentSync.sync.start('demand')
  const findings = feature({
    routes: findingsRoutes(deps, caseNotifier({ ...deps, onPending: () => notifications.dispatcher.kick() })),
  })
  const features: Feature[] = [
    feature({ routes: securityRoutes(deps.security) }),
    setup,
    findings,
    ruleset,
    notifications,
    content,
    contentSync,
  ]
  return { setup, content, contentSync, ruleset, notifications, features }
}

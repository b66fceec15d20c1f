import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { ClusterSettings } from './config/cluster-settings'
import type { NodeConfig } from './config/node-config'
import { storeSettingsPersistence } from './config/store-persistence'
import type { Server } from 'bun'
import { assembleApp } from './http/assemble'
import { noteRemoteAddress } from './http/remote'
import { frontDoor } from './http/front-door'
import type { Logger } from './http/log'
import type { PluginRoute } from './http/route'
import type { Security } from './security/caller'
import type { Store } from './store/port'
import { openEmbeddedStore } from './store/embedded'
import { createSecurity } from './security'
import { securityRoutes } from './security/routes'
import { indexApiRoutes } from './indexer/routes'
import { setupRoutes, startSetup } from './setup'
import { Journal } from './journal/journal'
import { createContentManager } from './content/manager'
import { createRuleset, rulesetRoutes } from './ruleset'
import { findingsReadFilter, findingsRoutes } from './ruleset/findings/routes'
import { createContentSync } from './content/sync'
import { openPlatformStore, type PlatformStore } from './store/platform'
import { createPlatformSecurity, platformEndpoint, platformRouter } from './security/platform'
import type { Caller } from './security/caller'

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
  const platformUrl = node.values.get('storage.platform.url') as string
  // Platform mode: OpenSearch holds the data and decides index rights; see src/security/platform.
  const endpoint = platformUrl ? platformEndpoint(node.values) : undefined
  const platformStore: PlatformStore | undefined = endpoint
    ? openPlatformStore({
        url: endpoint.url,
        username: node.values.get('storage.platform.username') as string,
        password: node.values.get('storage.platform.password') as string,
        insecure: endpoint.insecure,
      })
    : undefined
  const store = platformStore ?? openEmbeddedStore(join(dataDir, 'store.db'))
  const settings = new ClusterSettings(node, storeSettingsPersistence(store))
  const platformSecurity = endpoint ? await createPlatformSecurity({ node, log, endpoint }) : undefined
  const security = platformSecurity ?? (await createSecurity({ node, dataDir, log, env: opts.env }))
  const journal = new Journal(join(dataDir, 'journal.db'))
  const deps: Deps = { node, settings, store, security: security.security, log, dataDir, now: Date.now, journal }
  if (platformStore && platformSecurity) {
    deps.storeFor = (caller) => {
      const authorization = platformSecurity.security.authorizationOf(caller)
      // Fail closed: a caller this node did not authenticate has no credentials to act with.
      if (!authorization) throw new Error(`no platform credentials for caller ${caller.name}`)
      return platformStore.asCaller(authorization)
    }
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
  const http = assembleApp({
    security: deps.security,
    log,
    pluginRoutes,
    groups: [indexApiRoutes({ ...deps, readFilter: findingsReadFilter(deps) })],
  })

  const local = (r: Request) => http.handle(r) as Promise<Response>
  const route = endpoint ? platformRouter(endpoint, log, local) : local

  // Background start-up: requests are served meanwhile; features that need the indices wait for the setup marker.
  const setup = startSetup(deps, { embedded: !platformStore })
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
    storeKind: platformStore ? 'platform' : 'embedded',
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

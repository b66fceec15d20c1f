/**
 * Where data lives and who decides rights: the embedded store with our own
 * security files, or (with `storage.platform.url`) an OpenSearch cluster that
 * holds the data and authenticates callers. Everything above this module works
 * the same either way.
 */
import { join } from 'node:path'
import type { ClusterSettings } from './config/cluster-settings'
import type { NodeConfig } from './config/node-config'
import type { Logger } from './http/log'
import { createSecurity } from './security'
import type { Caller, Security } from './http/caller'
import { createPlatformSecurity, platformEndpoint, platformUrls, type PlatformEndpoint } from './security/platform'
import { platformHasSecurity } from './security/platform/authinfo'
import { openEmbeddedStore, searchLimitsOf } from './store/embedded'
import { openPlatformStore } from './store/platform'
import type { Store } from './store/port'

export interface Backend {
  kind: 'embedded' | 'platform'
  store: Store
  /** Whether no ISM applies the lifecycle policies but this node: embedded, or a platform without the plugin. */
  ownRetention(): Promise<boolean>
  /** Embedded mode: the store file (snapshots copy it). */
  storeFile?: string
  security: { security: Security; loginHints: string[]; reload(): Promise<void> }
  /** Platform mode: the store bound to a caller's own credentials (the platform checks its rights). */
  storeFor?: (caller: Caller) => Store
  /** Platform mode: where the index API is forwarded. */
  endpoint?: PlatformEndpoint
  /**
   * Embedded mode: read the store's search limits from the cluster settings from now on (they
   * live in the store, so they exist only once it is open; until then, the node file's values).
   */
  useSettings?(settings: ClusterSettings): void
}

export async function openBackend(
  node: NodeConfig,
  dataDir: string,
  log: Logger,
  env?: Record<string, string | undefined>,
): Promise<Backend> {
  if (platformUrls(node.values).length === 0) {
    const storeFile = join(dataDir, 'store.db')
    let limitValues: () => ReadonlyMap<string, unknown> = () => node.values
    const store = openEmbeddedStore(storeFile, { searchLimits: () => searchLimitsOf(limitValues()) })
    const { from, to, backup } = store.migration
    if (backup) log.warn('store schema migrated', { file: storeFile, from, to, backup })
    return {
      kind: 'embedded',
      store,
      ownRetention: async () => true,
      storeFile,
      security: await createSecurity({ node, dataDir, log, env }),
      useSettings: (settings) => (limitValues = () => settings.latest()),
    }
  }
  const endpoint = platformEndpoint(node.values)
  const username = node.values.get('storage.platform.username') as string
  const password = node.values.get('storage.platform.password') as string
  const store = openPlatformStore({ url: endpoint.nodes.nodes, username, password, insecure: endpoint.insecure, ca: endpoint.ca })
  if (!(await platformHasSecurity(endpoint, 'Basic ' + btoa(`${username}:${password}`)))) {
    // A development cluster without the security plugin authenticates no one: this node does, with
    // its own security files as in embedded mode, and serves the index API itself over the platform
    // (our index rights and DLS), since forwarding would hand callers an unguarded cluster.
    log.warn(
      'the platform has no security plugin: this node authenticates callers with its own security files and serves the index API itself',
      {
        platform: endpoint.nodes.nodes.join(','),
      },
    )
    return {
      kind: 'platform',
      store,
      ownRetention: async () => !(await store.hasIsm()),
      security: await createSecurity({ node, dataDir, log, env }),
    }
  }
  const security = await createPlatformSecurity({ node, log, endpoint })
  return {
    kind: 'platform',
    store,
    ownRetention: async () => !(await store.hasIsm()),
    security,
    endpoint,
    storeFor(caller) {
      const authorization = security.security.authorizationOf(caller)
      // Fail closed: a caller this node did not authenticate has no credentials to act with.
      if (!authorization) throw new Error(`no platform credentials for caller ${caller.name}`)
      return store.asCaller(authorization)
    },
  }
}

// What every feature module is built from, and the one shape each of them gives back. Below all
// features (it names only the base layers), so features never import the composition root.
import type { ClusterSettings } from './config/cluster-settings'
import type { NodeConfig } from './config/node-config'
import type { Logger } from './http/log'
import type { PluginRoute } from './http/route'
import type { Journal } from './journal/journal'
import type { Caller, Security } from './http/caller'
import type { Store } from './store/port'

/** Collaborators, never globals. */
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
  /**
   * True when the store belongs to this node alone (embedded mode): node-local queues then make
   * callers take turns without lease documents. Unset means other nodes may share the store.
   */
  nodeLocalStore?: boolean
}

/**
 * A feature as the composition root sees it: its plugin routes, the start-up work it does once
 * Setup is ready (in the order the root lists features), and what it stops at shutdown (in the
 * reverse order).
 */
export interface Feature {
  routes: PluginRoute[]
  start(): Promise<void>
  stop(): Promise<void>
}

/** A feature that only serves routes (no start-up work, nothing to stop). */
export const feature = (parts: Partial<Feature> & Pick<Feature, 'routes'>): Feature => ({
  start: async () => {},
  stop: async () => {},
  ...parts,
})

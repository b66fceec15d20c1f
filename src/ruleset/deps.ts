import type { ClusterSettings } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import type { Store } from '../store/port'

/** What the Ruleset Management services are built from (a subset of the app's `Deps`). */
export interface RulesetDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  /** The store is this node's alone (embedded): a detector lease left in it is a dead process's. */
  nodeLocalStore?: boolean
}

// The content manager's locks live in the resource-lock index (reference 7.1): creation locks per
// (resource type, space) and promotion leases per target space, queued per node.
import { KeyedLeases } from '../locks/lease'
import { ensureIndex } from '../setup/ensure'
import { RESOURCE_LOCKS } from '../setup/indices/system'
import type { Store } from '../store/port'

/** Creates the lock index (with its strict mapping) when it is missing: start-up, or deleted by hand since. */
export const ensureLockIndex = (store: Store) => ensureIndex(store, RESOURCE_LOCKS)

/** The lease queues of one node over the resource-lock index. */
export const lockLeases = (deps: { store: Store; now: () => number }) =>
  new KeyedLeases({ store: deps.store, now: deps.now, ensureIndex: () => ensureLockIndex(deps.store) })

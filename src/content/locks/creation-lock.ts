// Resource creation rules 1-4 of the spec (reference 7.1): one lock document per (resource type,
// space) so "count, then create" cannot overshoot a limit under concurrency. Lock I/O runs as the
// service; whatever `fn` writes is the caller's business (it authorises its own writes). The spec
// says the holder never renews this lock, so slow work (Engine validation) runs before it, and the
// creation asks `stillMine` before its write: a holder that outlived the stale age gives up (503)
// rather than write beside a thief.
import { ApiError } from '../../http/errors'
import type { Journal } from '../../journal/journal'
import { KeyedLeases, type LeaseEvent } from '../../locks/lease'
import { ensureIndex } from '../../setup/ensure'
import { RESOURCE_LOCKS } from '../../setup/indices/system'
import type { Store } from '../../store/port'
import { nameUuid } from '../hash'
import { RESOURCE_LOCKS_INDEX } from '../indices'

export interface LockSettings {
  maxRetries: number
  retryBackoffMillis: number
  staleThresholdMillis: number
}

export interface CreationLockDeps {
  store: Store
  journal: Journal
  now: () => number
  /** This node's lease queues (callers on one node take turns without polling the document). */
  leases: KeyedLeases
}

export const TOO_MANY_CREATIONS = 'Too many concurrent requests are creating this resource. Please retry.'

/** `_id` of the lock of (type, space): a name-based UUID every node derives alike (reference 5.6). */
export const creationLockId = (type: string, space: string) => nameUuid(`resource-limit-lock-${type}-${space}`)

/** Creates the lock index (with its strict mapping) when it is missing: start-up, or deleted by hand since. */
export const ensureLockIndex = (store: Store) => ensureIndex(store, RESOURCE_LOCKS)

/** The lease queues of one node over the resource-lock index. */
export const lockLeases = (deps: { store: Store; now: () => number }) =>
  new KeyedLeases({ store: deps.store, now: deps.now, ensureIndex: () => ensureLockIndex(deps.store) })

/** Journals what happened to a lease under `subject` (lock audit, reference 7.1). */
export const journalLeaseEvents = (journal: Journal, subject: string) => (e: LeaseEvent) => {
  // Polls (`busy`) and renewals are too frequent to journal; a wait is recorded once per acquisition.
  if (e.kind !== 'busy' && e.kind !== 'renew')
    journal.record(`lock.${e.kind}`, subject, { index: e.index, id: e.id, ageMillis: e.ageMillis }, e.at)
}

/**
 * How a creation is serialised; `withCreationLock` in production (the benchmark measures it
 * against none). `fn` receives `assertMine`, which throws 503 once the lock may be someone else's.
 */
export type CreationLock = <T>(
  deps: CreationLockDeps,
  settings: LockSettings,
  lock: { type: string; space: string },
  fn: (assertMine: () => Promise<void>) => Promise<T>,
) => Promise<T>

export const withCreationLock: CreationLock = (deps, settings, lock, fn) => {
  const subject = `${lock.type}/${lock.space}`
  const spec = { index: RESOURCE_LOCKS_INDEX, id: creationLockId(lock.type, lock.space), staleMillis: settings.staleThresholdMillis }
  return deps.leases.run(
    spec,
    {
      // Waiting for a turn on this node is bounded by the same budget as the lock attempts.
      waitMillis: settings.maxRetries * settings.retryBackoffMillis,
      maxAttempts: settings.maxRetries,
      backoffMillis: settings.retryBackoffMillis,
      renew: false,
      onEvent: journalLeaseEvents(deps.journal, subject),
      busy: (attempts) => {
        deps.journal.record('lock.timeout', subject, { attempts }, deps.now())
        return new ApiError(503, TOO_MANY_CREATIONS)
      },
    },
    (lease) =>
      fn(async () => {
        if (!(await lease.stillMine())) throw new ApiError(503, TOO_MANY_CREATIONS)
      }),
  )
}

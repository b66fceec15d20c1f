// Resource creation rules 1-4 of the spec (reference 7.1): one lock document per (resource type,
// space) so "count, then create" cannot overshoot a limit under concurrency. Lock I/O runs as the
// service; whatever `fn` writes is the caller's business (it authorises its own writes). The spec
// says the holder never renews this lock, so slow work (Engine validation) runs before it, and the
// creation asks `assertMine` before its write: a holder that outlived the stale age gives up (503)
// rather than write beside a thief.
import { ApiError } from '../../http/errors'
import type { Journal } from '../../journal/journal'
import { capped } from '../../locks/capped'
import { journalLeaseEvents } from '../../locks/journal-events'
import type { KeyedLeases } from '../../locks/lease'
import type { LockWait } from '../../locks/wait'
import { nameUuid } from '../hash'
import { RESOURCE_LOCKS_INDEX } from '../indices'

export interface CreationLockDeps {
  journal: Journal
  now: () => number
  /** This node's lease queues (callers on one node take turns without polling the document). */
  leases: KeyedLeases
}

export const TOO_MANY_CREATIONS = 'Too many concurrent requests are creating this resource. Please retry.'

/** `_id` of the lock of (type, space): a name-based UUID every node derives alike (reference 5.6). */
export const creationLockId = (type: string, space: string) => nameUuid(`resource-limit-lock-${type}-${space}`)

/**
 * How a creation is serialised; `withCreationLock` in production (the benchmark measures it
 * against none). `fn` receives `assertMine`, which throws 503 once the lock may be someone else's.
 */
export type CreationLock = <T>(
  deps: CreationLockDeps,
  wait: LockWait,
  lock: { type: string; space: string },
  fn: (assertMine: () => Promise<void>) => Promise<T>,
) => Promise<T>

export const withCreationLock: CreationLock = (deps, wait, lock, fn) => {
  const subject = `${lock.type}/${lock.space}`
  return capped(
    deps.leases,
    {
      index: RESOURCE_LOCKS_INDEX,
      id: creationLockId(lock.type, lock.space),
      wait,
      renew: false,
      onEvent: journalLeaseEvents(deps.journal, subject),
      busy: (attempts) => {
        deps.journal.record('lock.timeout', subject, { attempts }, deps.now())
        return new ApiError(503, TOO_MANY_CREATIONS)
      },
      lost: () => new ApiError(503, TOO_MANY_CREATIONS),
    },
    fn,
  )
}

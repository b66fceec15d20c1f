// "At most N under a lock": work that counts and then writes (the session cap, resource limits,
// max_detectors) or that must not interleave with its like (promotions into one space) waits its
// turn for a lock document, then runs holding it. Callers on one node queue in memory; nodes meet
// at the document. A caller whose wait runs out gets the caller's own error (a 503 "Please retry"
// for the spec's locks).
import type { KeyedLeases, LeaseEvent } from './lease'
import type { LockWait } from './wait'

export interface CappedLock {
  /** The lock document. */
  index: string
  id: string
  wait: LockWait
  /** Renew the lock while the work runs (false for the spec's creation lock, which is never renewed). */
  renew: boolean
  /** Callers queued on this node run under the lock already held, for at most this long since it was taken. */
  handOffMillis?: number
  /** Told of each acquire, steal, release, wait and timeout (journals). */
  onEvent?: (e: LeaseEvent) => void
  /** The error of a caller whose wait ran out (`attempts` at the document, 0 when it timed out in this node's queue). */
  busy: (attempts: number) => Error
  /** The error `assertMine` throws once the lock may be someone else's. */
  lost: () => Error
}

/**
 * Runs `fn` holding the lock; `fn` calls `assertMine()` right before the write that must stay
 * under the cap (a holder that outlived the stale age gives up rather than write beside a thief).
 */
export function capped<T>(leases: KeyedLeases, lock: CappedLock, fn: (assertMine: () => Promise<void>) => Promise<T>): Promise<T> {
  const { wait } = lock
  return leases.run(
    { index: lock.index, id: lock.id, staleMillis: wait.staleMillis },
    {
      waitMillis: wait.waitMillis,
      maxAttempts: wait.attempts,
      backoffMillis: wait.backoffMillis,
      renew: lock.renew,
      handOffMillis: lock.handOffMillis,
      onEvent: lock.onEvent,
      busy: lock.busy,
    },
    (lease) =>
      fn(async () => {
        if (!(await lease.stillMine())) throw lock.lost()
      }),
  )
}

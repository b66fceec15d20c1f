// Promotions into the same space take turns: one lease document per target space, in the
// resource-lock index, so two promotions (on this node or another) never interleave their snapshots,
// writes and rollbacks. The lease is renewed while the promotion runs (its Engine call may be long);
// a waiting promotion polls until the holder finishes.
import { ApiError } from '../../http/errors'
import type { Journal } from '../../journal/journal'
import { capped } from '../../locks/capped'
import { journalLeaseEvents } from '../../locks/journal-events'
import type { KeyedLeases } from '../../locks/lease'
import { resourceLockWait, type LockWait } from '../../locks/wait'
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { nameUuid } from '../hash'
import { RESOURCE_LOCKS_INDEX } from '../indices'

export interface PromotionLeaseDeps {
  journal: Journal
  leases: KeyedLeases
}

export const promotionLeaseId = (target: string) => nameUuid(`promotion-lock-${target}`)

/**
 * A promotion waits for the one in flight up to the resource-lock stale age, polling every
 * `retry_backoff_millis`; the holder renews its lease, so a dead one is found at the stale age.
 */
export function promotionWait(s: Pick<SettingsSnapshot, 'num'>): LockWait {
  const { backoffMillis, staleMillis } = resourceLockWait(s)
  return { waitMillis: staleMillis, backoffMillis, staleMillis }
}

/** Runs `fn` holding the target space's promotion lease; `assertMine` throws 503 once it may be someone else's. */
export function withPromotionLease<T>(
  deps: PromotionLeaseDeps,
  wait: LockWait,
  target: string,
  fn: (assertMine: () => Promise<void>) => Promise<T>,
): Promise<T> {
  return capped(
    deps.leases,
    {
      index: RESOURCE_LOCKS_INDEX,
      id: promotionLeaseId(target),
      wait,
      renew: true,
      onEvent: journalLeaseEvents(deps.journal, `promotion/${target}`),
      busy: () => new ApiError(503, `Another promotion into the '${target}' space is in progress. Please retry.`),
      lost: () => new ApiError(503, `The promotion into the '${target}' space lost its lease. Please retry.`),
    },
    fn,
  )
}

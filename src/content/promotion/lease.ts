// Promotions into the same space take turns: one lease document per target space, in the
// resource-lock index, so two promotions (on this node or another) never interleave their snapshots,
// writes and rollbacks. The lease is renewed while the promotion runs (its Engine call may be long);
// a waiting promotion polls until the holder finishes.
import { ApiError } from '../../http/errors'
import type { Journal } from '../../journal/journal'
import type { KeyedLeases, Lease } from '../../locks/lease'
import { nameUuid } from '../hash'
import { RESOURCE_LOCKS_INDEX } from '../indices'
import { journalLeaseEvents } from '../locks/creation-lock'

export interface PromotionLeaseSettings {
  /** How long a promotion waits for the one in flight before answering 503. */
  waitMillis: number
  retryBackoffMillis: number
  /** Age after which a holder that stopped renewing is presumed dead. */
  staleMillis: number
}

export interface PromotionLeaseDeps {
  journal: Journal
  leases: KeyedLeases
}

export const promotionLeaseId = (target: string) => nameUuid(`promotion-lock-${target}`)

export function withPromotionLease<T>(
  deps: PromotionLeaseDeps,
  settings: PromotionLeaseSettings,
  target: string,
  fn: (lease: Lease) => Promise<T>,
): Promise<T> {
  const spec = { index: RESOURCE_LOCKS_INDEX, id: promotionLeaseId(target), staleMillis: settings.staleMillis }
  return deps.leases.run(
    spec,
    {
      waitMillis: settings.waitMillis,
      backoffMillis: settings.retryBackoffMillis,
      renew: true,
      onEvent: journalLeaseEvents(deps.journal, `promotion/${target}`),
      busy: () => new ApiError(503, `Another promotion into the '${target}' space is in progress. Please retry.`),
    },
    fn,
  )
}

// Promotions into the same space take turns: one lease document per target space, in the
// resource-lock index, so two promotions (on this node or another) never interleave their snapshots,
// writes and rollbacks. A waiting promotion polls until the holder finishes.
import { ApiError } from '../../http/errors'
import { acquireLease, releaseLease, type LeaseDeps, type LeaseEvent } from '../../jobs/lease'
import type { Journal } from '../../journal/journal'
import type { Store } from '../../store/port'
import { nameUuid } from '../hash'
import { RESOURCE_LOCKS_INDEX } from '../indices'
import { ensureLockIndex } from '../locks/creation-lock'

export interface PromotionLeaseSettings {
  /** How long a promotion waits for the one in flight before answering 503. */
  waitMillis: number
  retryBackoffMillis: number
  /** Age after which a holder is presumed dead; longer than the longest promotion (its Engine call). */
  staleMillis: number
}

export interface PromotionLeaseDeps {
  store: Store
  journal: Journal
  now: () => number
  sleep?: (ms: number) => Promise<void>
}

export const promotionLeaseId = (target: string) => nameUuid(`promotion-lock-${target}`)

export async function withPromotionLease<T>(
  deps: PromotionLeaseDeps,
  settings: PromotionLeaseSettings,
  target: string,
  fn: () => Promise<T>,
): Promise<T> {
  const subject = `promotion/${target}`
  const onEvent = (e: LeaseEvent) => {
    if (e.kind !== 'busy') deps.journal.record(`lock.${e.kind}`, subject, { index: e.index, id: e.id, ageMillis: e.ageMillis }, e.at)
  }
  const leaseDeps: LeaseDeps & { sleep?: (ms: number) => Promise<void> } = { store: deps.store, now: deps.now, onEvent, sleep: deps.sleep }
  const spec = { index: RESOURCE_LOCKS_INDEX, id: promotionLeaseId(target), staleMillis: settings.staleMillis }
  const attempts = Math.max(1, Math.ceil(settings.waitMillis / settings.retryBackoffMillis) + 1)

  await ensureLockIndex(deps.store)
  const held = await acquireLease(leaseDeps, spec, attempts, settings.retryBackoffMillis)
  if (!held) throw new ApiError(503, `Another promotion into the '${target}' space is in progress. Please retry.`)
  try {
    return await fn()
  } finally {
    // A lease we fail to release goes stale and is stolen; the promotion itself is settled.
    await releaseLease(leaseDeps, held).catch(() => {})
  }
}

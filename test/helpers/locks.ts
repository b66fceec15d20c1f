// Locks and leases as another holder leaves them: a document in the resource-locks index (or another
// lock index) stamped with when it was acquired, which nothing of this test renews.
import { RESOURCE_LOCKS_INDEX } from '../../src/setup/indices/names'
import type { Store } from '../../src/store/port'

/**
 * Writes lock `id` as acquired `ageMillis` ago (default now: held) by a holder that is not this
 * node, in `index` (default the resource-locks index). Refreshed, so the next search sees it.
 */
export async function heldLock(store: Store, id: string, opts: { ageMillis?: number; index?: string } = {}): Promise<void> {
  await store.index({
    index: opts.index ?? RESOURCE_LOCKS_INDEX,
    id,
    body: { acquired_at: Date.now() - (opts.ageMillis ?? 0) },
    op_type: 'create',
    refresh: true,
  })
}

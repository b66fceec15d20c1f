// How long a caller waits for a lock and when a holder is presumed dead. The spec has one set of
// lock settings (the resource-creation lock's); every wait in front of a lock is read from them here.
import type { SettingsSnapshot } from '../config/cluster-settings'

export interface LockWait {
  /** How long a caller waits (in this node's queue, then at the lock document) before it gives up. */
  waitMillis: number
  /** Attempts at the document before it gives up, when the caller counts attempts rather than time. */
  attempts?: number
  /** Pause between attempts at a lock held on another node. */
  backoffMillis: number
  /** Age after which a lock is presumed its holder's who died, and is taken over. */
  staleMillis: number
}

/** The spec's resource-lock wait: `max_retries` attempts `retry_backoff_millis` apart, stolen after `stale_threshold_millis`. */
export function resourceLockWait(s: Pick<SettingsSnapshot, 'num'>): Required<LockWait> {
  const attempts = s.num('plugins.content_manager.resource_lock.max_retries')
  const backoffMillis = s.num('plugins.content_manager.resource_lock.retry_backoff_millis')
  return {
    attempts,
    // Waiting for a turn on this node is bounded by the same budget as the attempts at the document.
    waitMillis: attempts * backoffMillis,
    backoffMillis,
    staleMillis: s.num('plugins.content_manager.resource_lock.stale_threshold_millis'),
  }
}

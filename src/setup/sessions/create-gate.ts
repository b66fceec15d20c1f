import type { SettingsSnapshot } from '../../config/cluster-settings'
import { ApiError } from '../../http/errors'
import { capped } from '../../locks/capped'
import { KeyedLeases } from '../../locks/lease'
import { resourceLockWait, type LockWait } from '../../locks/wait'
import type { Store } from '../../store/port'
import { ensureIndex } from '../ensure'
import { RESOURCE_LOCKS } from '../indices'

export interface CreateGateDeps {
  store: Store
  now: () => number
  sleep?: (ms: number) => Promise<void>
  /** The store is this node's alone (embedded): the in-memory queue is the whole gate, no lease document. */
  nodeLocalStore?: boolean
}

export const GATE_BUSY = 'Too many concurrent session creations for this user. Retry later.'

/**
 * A creation waits for the owner's lease up to `plugins.setup.timeout` (then 503), polling a lease
 * held on another node every `resource_lock.retry_backoff_millis`; a lease not renewed for the same
 * timeout belongs to a dead holder and is taken over.
 */
export function sessionCreateWait(s: Pick<SettingsSnapshot, 'num'>): LockWait {
  const timeoutMillis = s.num('plugins.setup.timeout') * 1000
  return { waitMillis: timeoutMillis, backoffMillis: resourceLockWait(s).backoffMillis, staleMillis: timeoutMillis }
}

/**
 * Serialises session creation per owner so that the count-then-write of the
 * 500 cap cannot overshoot: within a node the creates of one owner queue in
 * memory (no store traffic while waiting), across nodes sharing the platform a
 * lease document per owner in the resource-locks index does (a node on its own
 * embedded store has no other node to meet, so it writes none). Creates queued on this node while
 * the lease is held run under that same lease (for at most half its stale
 * age, then other nodes get a turn), which spares two synced writes per
 * create in a burst. Replace, rename and delete never pass through here, so
 * the cap never blocks an update.
 */
export class CreateGate {
  private readonly leases: KeyedLeases

  constructor(deps: CreateGateDeps) {
    this.leases = new KeyedLeases({ ...deps, nodeLocal: deps.nodeLocalStore, ensureIndex: () => ensureIndex(deps.store, RESOURCE_LOCKS) })
  }

  run<T>(owner: string, wait: LockWait, fn: () => Promise<T>): Promise<T> {
    const busy = () => new ApiError(503, GATE_BUSY)
    const lock = {
      index: RESOURCE_LOCKS.name,
      id: leaseId(owner),
      wait,
      renew: true,
      handOffMillis: wait.staleMillis / 2,
      busy,
      lost: busy,
    }
    return capped(this.leases, lock, async (assertMine) => {
      // The count and the write below must happen under the lease: check it before the write.
      await assertMine()
      return fn()
    })
  }
}

/** Owner names are free text; the lease id is a digest of it. */
export function leaseId(owner: string): string {
  return `ai-assistant-session-create-${new Bun.CryptoHasher('sha256').update(owner).digest('hex').slice(0, 32)}`
}

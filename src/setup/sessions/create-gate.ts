import { ApiError } from '../../http/errors'
import { releaseLease, tryAcquireLease, type HeldLease, type LeaseSpec } from '../../jobs/lease'
import { IndexNotFound } from '../../store/errors'
import type { Store } from '../../store/port'
import { ensureIndex } from '../ensure'
import { RESOURCE_LOCKS } from '../indices'

export interface CreateGateDeps {
  store: Store
  now: () => number
  sleep?: (ms: number) => Promise<void>
}

export interface GateLimits {
  /** Give up waiting for the owner's lease after this long (503). */
  waitMillis: number
  /** A lease older than this belongs to a dead holder and is taken over. */
  staleMillis: number
}

export const GATE_BUSY = 'Too many concurrent session creations for this user. Retry later.'

interface Pending {
  limits: GateLimits
  fn: () => Promise<unknown>
  resolve: (v: unknown) => void
  reject: (e: unknown) => void
}

/**
 * Serialises session creation per owner so that the count-then-write of the
 * 500 cap cannot overshoot: within a node the creates of one owner queue in
 * memory (no store traffic while waiting), across nodes a lease document per
 * owner in the resource-locks index does. Creates queued on this node while
 * the lease is held run under that same lease (for at most half its stale
 * age, so it is never taken over while in use), which spares two synced
 * writes per create in a burst. Replace, rename and delete never pass
 * through here, so the cap never blocks an update.
 */
export class CreateGate {
  private readonly queues = new Map<string, Pending[]>()

  constructor(private readonly deps: CreateGateDeps) {}

  run<T>(owner: string, limits: GateLimits, fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { limits, fn, resolve: resolve as (v: unknown) => void, reject }
      const queue = this.queues.get(owner)
      if (queue) queue.push(pending)
      else {
        this.queues.set(owner, [pending])
        void this.drain(owner)
      }
    })
  }

  private async drain(owner: string): Promise<void> {
    const queue = this.queues.get(owner)!
    while (queue.length > 0) {
      const { limits } = queue[0]
      const spec: LeaseSpec = { index: RESOURCE_LOCKS.name, id: leaseId(owner), staleMillis: limits.staleMillis }
      let held: HeldLease
      try {
        held = await this.acquire(spec, limits.waitMillis)
      } catch (e) {
        queue.shift()!.reject(e)
        continue
      }
      try {
        do {
          const next = queue.shift()!
          await next.fn().then(next.resolve, next.reject)
        } while (queue.length > 0 && this.deps.now() - held.acquiredAt < limits.staleMillis / 2)
      } finally {
        await releaseLease(this.deps, held).catch(() => {})
      }
    }
    this.queues.delete(owner)
  }

  private async acquire(spec: LeaseSpec, waitMillis: number): Promise<HeldLease> {
    const sleep = this.deps.sleep ?? ((ms: number) => Bun.sleep(ms))
    const deadline = this.deps.now() + waitMillis
    let recreated = false
    for (let attempt = 0; ; attempt++) {
      let held: HeldLease | undefined
      try {
        held = await tryAcquireLease(this.deps, spec)
      } catch (e) {
        // The lock index was deleted by hand: recreate it (with its strict mapping) and try again.
        if (!(e instanceof IndexNotFound) || recreated) throw e
        recreated = true
        await ensureIndex(this.deps.store, RESOURCE_LOCKS)
        continue
      }
      if (held) return held
      if (this.deps.now() >= deadline) throw new ApiError(503, GATE_BUSY)
      await sleep(Math.min(50, 5 * 2 ** Math.min(attempt, 4)) + Math.random() * 5)
    }
  }
}

/** Owner names are free text; the lease id is a digest of it. */
export function leaseId(owner: string): string {
  return `ai-assistant-session-create-${new Bun.CryptoHasher('sha256').update(owner).digest('hex').slice(0, 32)}`
}

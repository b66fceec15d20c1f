// The lease mechanism under the two lock facades of this folder: `capped` (wait a turn, then count
// and write: session creation per owner, resource creation per (type, space), the detector count,
// promotion per space) and `claimTurn` (one runner at a time: the content sync, detector runs, the
// Setup bootstrap). A lease is a document `{acquired_at}` in a lock index, created with
// create-only semantics, stolen (with if_seq_no, so two thieves cannot both win) once older than
// its stale age, and released by deleting exactly the version we wrote (a lease stolen from us is
// left to its new holder). Below every feature: it knows the Store and nothing else.
import { IndexNotFound, VersionConflict } from '../store/errors'
import type { Store } from '../store/port'

export interface LeaseSpec {
  index: string
  id: string
  staleMillis: number
  /**
   * A lease last written before this time is stale whatever its age. For a store only this
   * process writes (the embedded store), the process's start: a lease from before it was held by
   * a process that is gone (kill -9, a power loss) and will never be renewed or released.
   */
  staleBefore?: number
}

export interface HeldLease extends LeaseSpec {
  seqNo: number
  primaryTerm: number
  /** When we last wrote the document (acquire, steal or renewal), by our clock. */
  acquiredAt: number
  stolen: boolean
}

export type LeaseEvent = {
  /** `wait`: a caller found the lease held and waits for it (once per acquisition); `timeout`: it gave up. */
  kind: 'acquire' | 'steal' | 'release' | 'busy' | 'renew' | 'lost' | 'wait' | 'timeout'
  index: string
  id: string
  at: number
  ageMillis?: number
}

export interface LeaseDeps {
  store: Store
  now: () => number
  onEvent?: (e: LeaseEvent) => void
  sleep?: (ms: number) => Promise<void>
}

const defaultSleep = (ms: number) => Bun.sleep(ms)
const isMissing = (e: unknown) => typeof e === 'object' && e !== null && (e as { status?: number }).status === 404

/** Writes `acquired_at: at` over exactly the version read or written last (steal and renewal). */
const rewrite = (store: Store, spec: LeaseSpec, version: { seqNo: number; primaryTerm: number }, at: number) =>
  store.index({
    index: spec.index,
    id: spec.id,
    body: { acquired_at: at },
    if_seq_no: version.seqNo,
    if_primary_term: version.primaryTerm,
    refresh: true,
  })

/** One attempt: create-only, else steal when stale; undefined when someone else holds it. */
export async function tryAcquireLease({ store, now, onEvent }: LeaseDeps, spec: LeaseSpec): Promise<HeldLease | undefined> {
  const at = now()
  try {
    const r = await store.index({ index: spec.index, id: spec.id, body: { acquired_at: at }, op_type: 'create', refresh: true })
    onEvent?.({ kind: 'acquire', index: spec.index, id: spec.id, at })
    return { ...spec, seqNo: r._seq_no, primaryTerm: r._primary_term, acquiredAt: at, stolen: false }
  } catch (e) {
    if (!(e instanceof VersionConflict)) throw e
  }
  const current = await store.get({ index: spec.index, id: spec.id })
  if (!current.found) return undefined // released between our create and get: the next attempt will take it
  const acquiredAt = Number((current._source as { acquired_at?: unknown }).acquired_at)
  const age = at - acquiredAt
  if (!(age > spec.staleMillis) && !(spec.staleBefore !== undefined && acquiredAt < spec.staleBefore)) {
    onEvent?.({ kind: 'busy', index: spec.index, id: spec.id, at, ageMillis: age })
    return undefined
  }
  try {
    const r = await rewrite(store, spec, { seqNo: current._seq_no!, primaryTerm: current._primary_term! }, at)
    onEvent?.({ kind: 'steal', index: spec.index, id: spec.id, at, ageMillis: age })
    return { ...spec, seqNo: r._seq_no, primaryTerm: r._primary_term, acquiredAt: at, stolen: true }
  } catch (e) {
    if (e instanceof VersionConflict) return undefined // another caller stole it first
    throw e
  }
}

/** Moves `acquired_at` to now if the document is still the version we wrote; undefined when it is not ours any more. */
export async function renewLease({ store, now, onEvent }: LeaseDeps, held: HeldLease): Promise<HeldLease | undefined> {
  const at = now()
  try {
    const r = await rewrite(store, held, held, at)
    onEvent?.({ kind: 'renew', index: held.index, id: held.id, at })
    return { ...held, seqNo: r._seq_no, primaryTerm: r._primary_term, acquiredAt: at }
  } catch (e) {
    if (e instanceof VersionConflict || e instanceof IndexNotFound || isMissing(e)) {
      onEvent?.({ kind: 'lost', index: held.index, id: held.id, at })
      return undefined
    }
    throw e
  }
}

export async function releaseLease({ store, now, onEvent }: LeaseDeps, held: HeldLease): Promise<void> {
  try {
    await store.delete({ index: held.index, id: held.id, if_seq_no: held.seqNo, if_primary_term: held.primaryTerm, refresh: true })
    onEvent?.({ kind: 'release', index: held.index, id: held.id, at: now() })
  } catch (e) {
    // Stolen after going stale, or already gone: either way it is no longer ours to delete.
    if (!(e instanceof VersionConflict) && !(e instanceof IndexNotFound) && !isMissing(e)) throw e
  }
}

/** Thrown by `assertMine` when the lease went stale and may be someone else's now. */
export class LeaseLost extends Error {
  constructor(readonly lease: LeaseSpec) {
    super(`lease ${lease.index}/${lease.id} is no longer held`)
  }
}

/**
 * A held lease while work runs under it. With `renew`, a timer rewrites `acquired_at` every
 * stale/3 (at least 1 s) so work that outlasts the stale age keeps it. A timer on the event loop
 * can be starved by a long synchronous stretch, so holders also ask `stillMine()` before each
 * write that must not happen twice: it answers from memory while the last write is well within
 * the stale age, and otherwise reads the document (and, when renewing, renews at once).
 */
/** What work running under a lease may ask of it. */
export interface Lease {
  /** Whether the lease is still ours; false once it may have been stolen. */
  stillMine(): Promise<boolean>
  /** Throws LeaseLost unless `stillMine()`. */
  assertMine(): Promise<void>
}

type Releasable = Lease & { release(): Promise<void> }

/** The "lease" of a node whose store is its own: its queue is the only contender, so it never expires. */
const NODE_LOCAL: Releasable = { stillMine: async () => true, assertMine: async () => {}, release: async () => {} }

export class ActiveLease implements Lease {
  private current: HeldLease
  private timer: ReturnType<typeof setInterval> | undefined
  private renewing: Promise<unknown> = Promise.resolve()
  private lost = false

  constructor(
    private readonly deps: LeaseDeps,
    held: HeldLease,
    private readonly renew: boolean,
  ) {
    this.current = held
    if (renew) {
      this.timer = setInterval(() => void this.refresh(), Math.max(1000, Math.floor(held.staleMillis / 3)))
      this.timer.unref?.()
    }
  }

  get held(): HeldLease {
    return this.current
  }

  /** Whether the lease is still ours; false once it may have been stolen. */
  async stillMine(): Promise<boolean> {
    if (this.lost) return false
    await this.renewing
    // Nobody can steal before the stale age; a tenth of it is our margin for the write that follows.
    if (this.deps.now() - this.current.acquiredAt < this.current.staleMillis * 0.9) return !this.lost
    if (this.renew) {
      await this.refresh()
      return !this.lost
    }
    // A lease that is never renewed and has reached its stale age may be taken at any moment.
    this.markLost()
    return false
  }

  async assertMine(): Promise<void> {
    if (!(await this.stillMine())) throw new LeaseLost(this.current)
  }

  /** Stops renewing and deletes the document if it is still ours. */
  async release(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    await this.renewing
    if (!this.lost) await releaseLease(this.deps, this.current)
  }

  private refresh(): Promise<unknown> {
    if (this.lost) return this.renewing
    this.renewing = this.renewing
      .then(async () => {
        if (this.lost) return
        const next = await renewLease(this.deps, this.current)
        if (next) this.current = next
        else this.markLost()
      })
      .catch(() => {
        // The store did not answer: keep the lease; the next tick (or stillMine) tries again.
      })
    return this.renewing
  }

  private markLost() {
    this.lost = true
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}

export interface KeyedLeaseOptions {
  /** How long a caller waits (on this node's queue and then at the document) before `busy()`. */
  waitMillis: number
  /** Pause between attempts at a lease held elsewhere. */
  backoffMillis: number
  /** Renew while work runs (false for locks the spec says are never renewed). */
  renew: boolean
  /** The error a caller gets when its wait is over (`attempts` at the document, 0 when it timed out in the local queue). */
  busy: (attempts: number) => Error
  /** Attempts at the document before `busy()`, when the caller counts attempts rather than time. */
  maxAttempts?: number
  /**
   * Callers queued on this node run under the lease already held, one after the other, for at
   * most this long since it was taken (then it is released so other nodes get a turn).
   */
  handOffMillis?: number
  /** Told of each acquire, steal, release (journals, logs). */
  onEvent?: (e: LeaseEvent) => void
}

interface Waiter {
  options: KeyedLeaseOptions
  /** Runs the work; resolves with the function that hands its outcome to the caller. */
  run: (lease: Lease) => Promise<() => void>
  fail: (e: unknown) => void
  timer?: ReturnType<typeof setTimeout>
  started: boolean
}

/**
 * Leases by key with a node-local queue in front of the document: callers on the same node take
 * turns in arrival order and only the head polls the shared document, so a busy node hands the
 * lease on at once instead of after a backoff. Other nodes still meet at the document. A missing
 * lock index (deleted by hand) is recreated once per acquisition with `ensureIndex`.
 */
export class KeyedLeases {
  private readonly queues = new Map<string, Waiter[]>()
  private ensured = false

  constructor(
    private readonly deps: LeaseDeps & {
      ensureIndex: () => Promise<void>
      /**
       * The store belongs to this node alone (the embedded store): the node's queue already makes
       * callers take turns, so no lease document is written.
       */
      nodeLocal?: boolean
    },
  ) {}

  run<T>(spec: LeaseSpec, options: KeyedLeaseOptions, fn: (lease: Lease) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        options,
        run: (lease) =>
          fn(lease).then(
            (value) => () => resolve(value),
            (error) => () => reject(error),
          ),
        fail: reject,
        started: false,
      }
      const key = `${spec.index}/${spec.id}`
      const queue = this.queues.get(key)
      if (!queue) {
        this.queues.set(key, [waiter])
        void this.drain(key, spec)
        return
      }
      queue.push(waiter)
      ;(options.onEvent ?? this.deps.onEvent)?.({ kind: 'wait', index: spec.index, id: spec.id, at: this.deps.now() })
      // Waiting behind local callers counts against the same budget.
      waiter.timer = setTimeout(() => {
        if (waiter.started) return
        queue.splice(queue.indexOf(waiter), 1)
        ;(options.onEvent ?? this.deps.onEvent)?.({ kind: 'timeout', index: spec.index, id: spec.id, at: this.deps.now() })
        reject(options.busy(0))
      }, options.waitMillis)
    })
  }

  private async drain(key: string, spec: LeaseSpec): Promise<void> {
    const queue = this.queues.get(key)!
    while (queue.length > 0) {
      const head = queue[0]
      head.started = true
      clearTimeout(head.timer)
      const deps = { ...this.deps, onEvent: head.options.onEvent ?? this.deps.onEvent }
      let lease: Releasable = NODE_LOCAL
      try {
        if (!this.deps.nodeLocal) {
          const { held, attempts } = await this.acquire(deps, spec, head.options)
          if (!held) throw head.options.busy(attempts)
          lease = new ActiveLease(deps, held, head.options.renew)
        }
      } catch (e) {
        queue.shift()
        head.fail(e)
        continue
      }
      const handOff = head.options.handOffMillis ?? 0
      const since = this.deps.now()
      // The last caller of a turn hears its answer only after the release, so a caller that got
      // its answer never finds its own lease still in the index.
      let settle: (() => void) | undefined
      try {
        for (;;) {
          const next = queue.shift()!
          next.started = true
          clearTimeout(next.timer)
          settle = await next.run(lease)
          if (!(queue.length > 0 && this.deps.now() - since < handOff && (await lease.stillMine()))) break
          settle()
          settle = undefined
        }
      } finally {
        await lease.release().catch(() => {
          // A leaked lease goes stale and is stolen; the work itself is settled.
        })
        settle?.()
      }
    }
    this.queues.delete(key)
  }

  private async acquire(deps: LeaseDeps, spec: LeaseSpec, options: KeyedLeaseOptions): Promise<{ held?: HeldLease; attempts: number }> {
    const sleep = deps.sleep ?? defaultSleep
    const deadline = deps.now() + options.waitMillis
    // Made sure of once per node: a lock index deleted later is recreated by its index template on
    // the next write, or (where writes do not create indices) on IndexNotFound below.
    if (!this.ensured) {
      await this.deps.ensureIndex()
      this.ensured = true
    }
    let recreated = false
    for (let attempt = 1; ; attempt++) {
      let held: HeldLease | undefined
      try {
        held = await tryAcquireLease(deps, spec)
      } catch (e) {
        // Deleted between the check and the write (where writes do not create indices): recreate once, try again.
        if (!(e instanceof IndexNotFound) || recreated) throw e
        recreated = true
        await this.deps.ensureIndex()
        continue
      }
      if (held) return { held, attempts: attempt }
      const event = { index: spec.index, id: spec.id, at: deps.now() }
      if (options.maxAttempts !== undefined ? attempt >= options.maxAttempts : deps.now() >= deadline) {
        deps.onEvent?.({ kind: 'timeout', ...event })
        return { attempts: attempt }
      }
      if (attempt === 1) deps.onEvent?.({ kind: 'wait', ...event })
      await sleep(options.backoffMillis)
    }
  }
}

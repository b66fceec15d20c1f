// Resource creation rules 1-4 of the spec (reference 7.1): one lock document per (resource type,
// space) so "count, then create" cannot overshoot a limit under concurrency. Lock I/O runs as the
// service; whatever `fn` writes is the caller's business (it authorises its own writes).
import { ApiError } from '../../http/errors'
import { acquireLease, releaseLease, type LeaseDeps, type LeaseEvent } from '../../jobs/lease'
import type { Journal } from '../../journal/journal'
import { AlreadyExists, IndexNotFound } from '../../store/errors'
import type { Store } from '../../store/port'
import { nameUuid } from '../hash'
import { RESOURCE_LOCKS_INDEX, RESOURCE_LOCKS_DEFINITION } from '../indices'

export interface LockSettings {
  maxRetries: number
  retryBackoffMillis: number
  staleThresholdMillis: number
}

export interface CreationLockDeps {
  store: Store
  journal: Journal
  now: () => number
  sleep?: (ms: number) => Promise<void>
  /** Same-node callers queue here instead of polling the lock document (see LocalTurns). */
  turns?: LocalTurns
}

/**
 * Node-local queue in front of the lock document. Callers on the same node take turns in arrival
 * order and only the one whose turn it is polls the shared lock, so a busy node hands the lock on
 * at once instead of after a retry backoff. Other nodes still meet at the lock document. Waiting
 * for a turn is bounded by the same budget as the lock attempts (max_retries x backoff).
 */
export class LocalTurns {
  private readonly tails = new Map<string, Promise<void>>()

  /** Resolves with a `done` callback once it is this caller's turn, or undefined after `timeoutMs`. */
  async take(key: string, timeoutMs: number): Promise<(() => void) | undefined> {
    const previous = this.tails.get(key) ?? Promise.resolve()
    let done!: () => void
    const mine = new Promise<void>((resolve) => (done = resolve))
    const tail = previous.then(() => mine)
    this.tails.set(key, tail)
    const finish = () => {
      done()
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
    let timer: ReturnType<typeof setTimeout> | undefined
    const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), timeoutMs)))
    const outcome = await Promise.race([previous.then(() => 'turn' as const), expired])
    clearTimeout(timer)
    if (outcome === 'expired') {
      // Give the place up; whoever queued behind us still waits for those ahead of us.
      finish()
      return undefined
    }
    return finish
  }
}

export const TOO_MANY_CREATIONS = 'Too many concurrent requests are creating this resource. Please retry.'

/** `_id` of the lock of (type, space): a name-based UUID every node derives alike (reference 5.6). */
export const creationLockId = (type: string, space: string) => nameUuid(`resource-limit-lock-${type}-${space}`)

/** Creates the lock index when it is missing (start-up, or deleted by hand since); tolerates a race. */
export async function ensureLockIndex(store: Store): Promise<void> {
  if (await store.existsIndex({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })) return
  try {
    await store.createIndex({ index: RESOURCE_LOCKS_INDEX, body: RESOURCE_LOCKS_DEFINITION })
  } catch (e) {
    if (!(e instanceof AlreadyExists)) throw e
  }
}

/** How a creation is serialised; `withCreationLock` in production (the benchmark measures it against none). */
export type CreationLock = <T>(
  deps: CreationLockDeps,
  settings: LockSettings,
  lock: { type: string; space: string },
  fn: () => Promise<T>,
) => Promise<T>

export async function withCreationLock<T>(
  deps: CreationLockDeps,
  settings: LockSettings,
  lock: { type: string; space: string },
  fn: () => Promise<T>,
): Promise<T> {
  const subject = `${lock.type}/${lock.space}`
  const onEvent = (e: LeaseEvent) => {
    if (e.kind !== 'busy') deps.journal.record(`lock.${e.kind}`, subject, { index: e.index, id: e.id, ageMillis: e.ageMillis }, e.at)
  }
  const leaseDeps: LeaseDeps & { sleep?: (ms: number) => Promise<void> } = { store: deps.store, now: deps.now, onEvent, sleep: deps.sleep }
  const spec = { index: RESOURCE_LOCKS_INDEX, id: creationLockId(lock.type, lock.space), staleMillis: settings.staleThresholdMillis }

  const budgetMillis = settings.maxRetries * settings.retryBackoffMillis
  const endTurn = deps.turns ? await deps.turns.take(spec.id, budgetMillis) : () => {}
  if (!endTurn) {
    deps.journal.record('lock.timeout', subject, { attempts: 0, queuedMillis: budgetMillis }, deps.now())
    throw new ApiError(503, TOO_MANY_CREATIONS)
  }
  try {
    return await underLease(deps, leaseDeps, spec, settings, subject, fn)
  } finally {
    endTurn()
  }
}

async function underLease<T>(
  deps: CreationLockDeps,
  leaseDeps: LeaseDeps & { sleep?: (ms: number) => Promise<void> },
  spec: { index: string; id: string; staleMillis: number },
  settings: LockSettings,
  subject: string,
  fn: () => Promise<T>,
): Promise<T> {
  await ensureLockIndex(deps.store)
  let held
  try {
    held = await acquireLease(leaseDeps, spec, settings.maxRetries, settings.retryBackoffMillis)
  } catch (e) {
    // Deleted between the check and the write: recreate once and try again.
    if (!(e instanceof IndexNotFound)) throw e
    await ensureLockIndex(deps.store)
    held = await acquireLease(leaseDeps, spec, settings.maxRetries, settings.retryBackoffMillis)
  }
  if (!held) {
    deps.journal.record('lock.timeout', subject, { attempts: settings.maxRetries }, deps.now())
    throw new ApiError(503, TOO_MANY_CREATIONS)
  }
  try {
    return await fn()
  } finally {
    await releaseLease(leaseDeps, held).catch(() => {
      // A leaked lock goes stale and is stolen; the creation itself is already settled.
    })
  }
}

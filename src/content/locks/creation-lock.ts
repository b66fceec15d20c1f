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

import { VersionConflict } from '../store/errors'
import type { Store } from '../store/port'

/**
 * A cluster-wide lock held as a document: created with create-only semantics
 * so one holder exists at a time, stolen (with if_seq_no, so two thieves
 * cannot both win) once older than `staleMillis`, never renewed, and released
 * by deleting exactly the version we wrote (a lock stolen from us is left to
 * its new holder). The document has one field, `acquired_at` (epoch ms), which
 * is the resource-lock shape of the spec; every other lease reuses it.
 */
export interface LeaseSpec {
  index: string
  id: string
  staleMillis: number
}

export interface HeldLease extends LeaseSpec {
  seqNo: number
  primaryTerm: number
  acquiredAt: number
  stolen: boolean
}

export type LeaseEvent = { kind: 'acquire' | 'steal' | 'release' | 'busy'; index: string; id: string; at: number; ageMillis?: number }

export interface LeaseDeps {
  store: Store
  now: () => number
  onEvent?: (e: LeaseEvent) => void
}

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
  if (!(age > spec.staleMillis)) {
    onEvent?.({ kind: 'busy', index: spec.index, id: spec.id, at, ageMillis: age })
    return undefined
  }
  try {
    const r = await store.index({
      index: spec.index,
      id: spec.id,
      body: { acquired_at: at },
      if_seq_no: current._seq_no,
      if_primary_term: current._primary_term,
      refresh: true,
    })
    onEvent?.({ kind: 'steal', index: spec.index, id: spec.id, at, ageMillis: age })
    return { ...spec, seqNo: r._seq_no, primaryTerm: r._primary_term, acquiredAt: at, stolen: true }
  } catch (e) {
    if (e instanceof VersionConflict) return undefined // another caller stole it first
    throw e
  }
}

/** Tries `attempts` times with `backoffMillis` between attempts; undefined when never acquired. */
export async function acquireLease(
  deps: LeaseDeps & { sleep?: (ms: number) => Promise<void> },
  spec: LeaseSpec,
  attempts: number,
  backoffMillis: number,
): Promise<HeldLease | undefined> {
  const sleep = deps.sleep ?? ((ms: number) => Bun.sleep(ms))
  for (let i = 0; i < attempts; i++) {
    const held = await tryAcquireLease(deps, spec)
    if (held) return held
    if (i < attempts - 1) await sleep(backoffMillis)
  }
  return undefined
}

export async function releaseLease({ store, now, onEvent }: LeaseDeps, held: HeldLease): Promise<void> {
  try {
    await store.delete({ index: held.index, id: held.id, if_seq_no: held.seqNo, if_primary_term: held.primaryTerm, refresh: true })
    onEvent?.({ kind: 'release', index: held.index, id: held.id, at: now() })
  } catch (e) {
    // Stolen after going stale, or already gone: either way it is no longer ours to delete.
    if (!(e instanceof VersionConflict) && !(typeof e === 'object' && e && (e as { status?: number }).status === 404)) throw e
  }
}

/** Runs `fn` while holding the lease; releases it whatever happens. */
export async function withLease<T>(deps: LeaseDeps, held: HeldLease, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } finally {
    await releaseLease(deps, held)
  }
}

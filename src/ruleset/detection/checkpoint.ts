/**
 * Where a detector stands, kept in the Store so every node (and a restarted one) continues from
 * the same place. The key is the store's `_seq_no` per concrete index: it grows with every write
 * to that index, so "newer than the checkpoint" means "indexed (or re-indexed) since", whatever
 * the event's own `@timestamp` says — a late event with an old timestamp is still evaluated, and
 * nothing is evaluated twice. A new backing index (rollover) starts from its first document.
 *
 * `epoch` is the detector's `enabled_time` the checkpoint belongs to: enabling a detector
 * re-baselines it at the indices' current ends, so what was indexed while it was off is never
 * evaluated (the spec's "the interval missed is never re-evaluated").
 */
import { IndexNotFound, VersionConflict } from '../../store/errors'
import type { Store } from '../../store/port'
import { DETECTOR_STATE_INDEX, ensureIndex } from '../indices'

export interface Checkpoint {
  detector_id: string
  epoch: number | null
  /** Concrete index -> highest `_seq_no` already evaluated. */
  indices: Record<string, number>
  last_run_at: number
  last_run?: RunSummary
  /** The latest failure of a run (kept after later runs succeed, so it stays visible). */
  last_error?: { at: number; message: string }
}

/** What the last run did: the detector's status as its GET and search responses show it. */
export interface RunSummary {
  started_at: number
  finished_at: number
  took_ms: number
  /** Events scanned. */
  documents: number
  /** Findings written. */
  findings: number
  duplicates: number
  shed: number
  /** Findings the findings stream refused (counted; the run moved on). */
  failed_findings: number
  /** Run end minus the `@timestamp` of the newest event at a batch end (the latest indexed ones). */
  lag_ms?: number
  error?: string
  skipped_rules: string[]
  /** IoC findings written (detectors with `threat_intel_enabled`). */
  ioc_findings?: number
}

export interface StoredCheckpoint {
  checkpoint: Checkpoint
  seqNo: number
  primaryTerm: number
}

export async function loadCheckpoint(store: Store, detectorId: string): Promise<StoredCheckpoint | undefined> {
  await ensureIndex(store, DETECTOR_STATE_INDEX)
  const got = await store.get({ index: DETECTOR_STATE_INDEX, id: detectorId })
  if (!got.found) return undefined
  return { checkpoint: got._source as unknown as Checkpoint, seqNo: got._seq_no, primaryTerm: got._primary_term }
}

/**
 * Writes the checkpoint; with `previous` only if nobody else wrote it since (a second node that
 * stole a stale lease must not move it backwards). Answers the new version, or undefined when lost.
 */
export async function saveCheckpoint(
  store: Store,
  cp: Checkpoint,
  previous?: { seqNo: number; primaryTerm: number },
): Promise<StoredCheckpoint | undefined> {
  await ensureIndex(store, DETECTOR_STATE_INDEX)
  try {
    const r = await store.index({
      index: DETECTOR_STATE_INDEX,
      id: cp.detector_id,
      body: cp as unknown as Record<string, unknown>,
      ...(previous ? { if_seq_no: previous.seqNo, if_primary_term: previous.primaryTerm } : {}),
      refresh: true,
    })
    return { checkpoint: cp, seqNo: r._seq_no, primaryTerm: r._primary_term }
  } catch (e) {
    if (e instanceof VersionConflict) return undefined
    throw e
  }
}

export async function deleteCheckpoint(store: Store, detectorId: string): Promise<void> {
  await ensureIndex(store, DETECTOR_STATE_INDEX)
  await store.delete({ index: DETECTOR_STATE_INDEX, id: detectorId, refresh: true })
}

/** Concrete indices behind the detector's index expressions; expressions naming nothing are skipped. */
export async function concreteIndices(store: Store, expressions: string[]): Promise<string[]> {
  const out = new Set<string>()
  for (const e of expressions) {
    try {
      for (const i of await store.resolve(e, { expand_wildcards: 'open', ignore_unavailable: true })) out.add(i)
    } catch (err) {
      if (!(err instanceof IndexNotFound)) throw err
    }
  }
  return [...out].sort()
}

/** The highest `_seq_no` in an index, -1 when it is empty. */
export async function maxSeqNo(store: Store, index: string): Promise<number> {
  const r = await store.search({ index, body: { size: 1, sort: [{ _seq_no: 'desc' }], _source: false, seq_no_primary_term: true } })
  const hit = r.hits.hits[0]
  return hit?._seq_no ?? -1
}

/** The checkpoint at the current end of every index: only what is indexed from now on is new. */
export async function baseline(
  store: Store,
  detectorId: string,
  expressions: string[],
  epoch: number | null,
  now: number,
): Promise<Checkpoint> {
  const indices: Record<string, number> = {}
  for (const index of await concreteIndices(store, expressions)) indices[index] = await maxSeqNo(store, index)
  return { detector_id: detectorId, epoch, indices, last_run_at: now }
}

/** The detector's run status as its GET and search responses show it (nothing before a first run). */
export function renderStatus(cp: Checkpoint | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const r = cp?.last_run
  if (r)
    out.last_run = {
      start_time: new Date(r.started_at).toISOString(),
      end_time: new Date(r.finished_at ?? r.started_at + r.took_ms).toISOString(),
      took_ms: r.took_ms,
      events_scanned: r.documents,
      findings_written: r.findings,
      findings_failed: r.failed_findings ?? 0,
      findings_shed: r.shed,
      findings_duplicate: r.duplicates,
      ...(r.lag_ms !== undefined ? { lag_ms: r.lag_ms } : {}),
      ...(r.ioc_findings !== undefined ? { ioc_findings_written: r.ioc_findings } : {}),
      ...(r.error ? { error: r.error } : {}),
      skipped_rules: r.skipped_rules,
    }
  if (cp?.last_error) out.last_error = { time: new Date(cp.last_error.at).toISOString(), message: cp.last_error.message }
  return out
}

/** Checkpoints of several detectors at once (for search responses). */
export async function loadCheckpoints(store: Store, ids: string[]): Promise<Map<string, Checkpoint>> {
  const out = new Map<string, Checkpoint>()
  if (ids.length === 0) return out
  await ensureIndex(store, DETECTOR_STATE_INDEX)
  const r = await store.search({ index: DETECTOR_STATE_INDEX, body: { size: ids.length, query: { ids: { values: ids } } } })
  for (const h of r.hits.hits) out.set(h._id, h._source as unknown as Checkpoint)
  return out
}

/** Messages between a detector run and the evaluator thread (evaluator-worker.ts), and what both read alike. */
import type { SeqSource, StoredBatch } from '../../store/port'
import type { FieldTypes } from '../../store/query'
import type { CompiledSigmaRule } from '../sigma'
import type { IocCandidates } from '../threat-intel/collect'
import type { IocFieldList } from '../threat-intel/ioc-fields'

/**
 * Documents read per batch. Each batch is evaluated, its findings written and the checkpoint
 * moved past it; a stop request (SIGTERM) is honoured between batches. Small enough that a batch
 * never holds the node for long, large enough that the checkpoint write per batch is cheap.
 */
export const SCAN_BATCH = 2_000

/** Characters of sources read per batch at most (a batch of large events is cut short). */
export const BATCH_CHARS = 64 * 1024 * 1024

/** What the thread needs of a compiled rule: its query and what a match reports (not its document). */
export type WireRule = Omit<CompiledSigmaRule, 'document'>

/** The extent of a batch read after `after`: its size, its last `_seq_no`, and whether more may follow. */
export function extentOf(batch: StoredBatch, after: number): { size: number; last: number; full: boolean } {
  const size = batch.ids.length
  let chars = 0
  for (const s of batch.sources) chars += s.length
  return extent(size, size > 0 ? batch.seqNos[size - 1] : after, chars)
}

/** The extent of a batch of `size` documents, the last one `last` (`after` when none), of `chars` characters in all. */
export const extent = (size: number, last: number, chars: number) => ({ size, last, full: size === SCAN_BATCH || chars >= BATCH_CHARS })

/**
 * A batch the thread read and evaluated: its extent, its (event position, rule position) pairs in
 * event order then rule order, and the events the run needs (each matched event, and the last one
 * for the run's lag), by position.
 */
export interface Scanned {
  size: number
  last: number
  full: boolean
  matches: Int32Array
  kept: { at: number[]; ids: string[]; seqNos: number[]; sources: string[] }
  /** Values of the IoC fields, when the scan was asked for them (threat intel). */
  iocs?: IocCandidates
}

export type EvaluatorRequest =
  /** A rule set the thread may still hold, by name: answered as `set` is, or `unknown rule set`. */
  | { kind: 'use'; id: number; key: string }
  /**
   * `slot` names what the set is for (a source index and the rules, not their mapping): a set
   * sent for a slot replaces the one sent before for it, which no later scan asks for.
   */
  | { kind: 'set'; id: number; key: string; slot?: string; rules: WireRule[]; fieldTypes?: FieldTypes }
  /**
   * `iocFilter` names the IoC filter the IoC values are tested against (the last one the thread
   * was given by `ioc-filter`, FIFO before the scan), none: every value is gathered.
   */
  | ({ kind: 'scan'; id: number; key: string; after: number; iocFields?: IocFieldList; iocFilter?: number } & SeqSource)
  | { kind: 'close'; id: number; file: string }
  /**
   * The node's IoC filter (ioc-filter.ts), shared memory the index keeps in step: given to the
   * thread once, and again only when the index replaces it by a larger one. A buffer carried by
   * every batch's request was made a new object each time on the thread, at the filter's size.
   */
  | { kind: 'ioc-filter'; id: number; generation: number; buffer: SharedArrayBuffer }

export interface EvaluatorReply {
  id: number
  /** Of a `set` or `use`: the rules the evaluator refuses under the mapping (they never match), by position. */
  refused?: Array<{ at: number; error: string }>
  /** Of a `scan`. */
  scanned?: Scanned
  error?: string
}

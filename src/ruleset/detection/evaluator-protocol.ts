/** Messages between a detector run and the evaluator thread (evaluator-worker.ts). */
import type { FieldTypes } from '../../store/query'
import type { CompiledSigmaRule } from '../sigma'

/** What the thread needs of a compiled rule: its query and what a match reports (not its document). */
export type WireRule = Omit<CompiledSigmaRule, 'document'>

/** Events as stored: UTF-8 JSON texts back to back, text i ending at `ends[i]` (see StoredBatch). */
export interface TextBatch {
  sources: Uint8Array<ArrayBuffer>
  ends: Uint32Array<ArrayBuffer>
}

export type EvaluatorRequest =
  | { kind: 'set'; id: number; key: string; rules: WireRule[]; fieldTypes?: FieldTypes }
  | ({ kind: 'evaluate'; id: number; key: string } & TextBatch)

export interface EvaluatorReply {
  id: number
  /** Of a `set`: the rules the evaluator refuses under the mapping (they never match), by position. */
  refused?: Array<{ at: number; error: string }>
  /** Of an `evaluate`: (event position, rule position) pairs, in event order then rule order. */
  matches?: Int32Array
  error?: string
}

const utf8 = new TextDecoder()

/** Event `i` of a batch, parsed. */
export function eventAt(batch: TextBatch, i: number): Record<string, unknown> {
  return JSON.parse(utf8.decode(batch.sources.subarray(i === 0 ? 0 : batch.ends[i - 1], batch.ends[i]))) as Record<string, unknown>
}

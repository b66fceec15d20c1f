/**
 * How a detector run reads and evaluates one source index: batch by batch in `_seq_no` order after
 * its checkpoint, each batch's (event, rule) matches and the events they name. Either on the
 * evaluator thread, which reads the store file itself (evaluator.ts), or here (scanHere): from the
 * stored texts (readSeq) or, on a platform store, from search hits, yielding to pending requests
 * every few milliseconds. Both give the same answer: THE evaluator of src/ruleset/sigma on the
 * same compiled rules.
 */
import { Pacer } from '../../store/embedded/pacer'
import type { SearchHit, Store } from '../../store/port'
import { DocView, type FieldTypes } from '../../store/query'
import { type CompiledSigmaRule, ruleSet, warmRuleSet } from '../sigma'
import { BATCH_CHARS, extentOf, type Scanned, SCAN_BATCH } from './evaluator-protocol'
import { collectorOf, type IocCandidates, type IocCollector } from '../threat-intel/collect'
import type { IocFieldList } from '../threat-intel/ioc-fields'

/** Longest stretch of a run's work on the node thread before pending requests get their turn. */
const SLICE_MILLIS = 10

/** The store's fair-share pacer with a run's slice (no deadline: a run ends at batch boundaries). */
export const runPacer = () => new Pacer(undefined, SLICE_MILLIS)

/** One batch of an index, read and evaluated. */
export interface ScannedPage {
  size: number
  /** A full batch: more may follow. */
  full: boolean
  /** `_seq_no` of the last event (the checkpoint once the batch is done). */
  last: number
  /** (event position, rule position) pairs, in event order then rule order. */
  matches: Int32Array
  /** The event at a position: each matched event, and the last one. */
  hit(at: number): SearchHit
  /** Values of the detector's IoC fields in the batch (threat intel), when asked for. */
  iocs?: IocCandidates
}

export interface Scanner {
  /** Rules the evaluator refuses under the index mapping: they never match. */
  refused: Array<{ rule: CompiledSigmaRule; error: string }>
  /** The batch after `after`. */
  next(after: number): Promise<ScannedPage>
  /** The scan is over: what it holds open is let go. */
  close(): void
}

/** A page of events the thread read: the kept events become hits when asked for. */
export function pageOf(index: string, scanned: Scanned): ScannedPage {
  const { kept } = scanned
  const position = new Map<number, number>()
  kept.at.forEach((at, k) => position.set(at, k))
  const hits = new Map<number, SearchHit>()
  return {
    size: scanned.size,
    full: scanned.full,
    last: scanned.last,
    matches: scanned.matches,
    iocs: scanned.iocs,
    hit(at) {
      let h = hits.get(at)
      if (h) return h
      const k = position.get(at)
      if (k === undefined) throw new Error(`event ${at} of the batch was not kept`)
      h = { _index: index, _id: kept.ids[k], _score: null, _seq_no: kept.seqNos[k], _source: JSON.parse(kept.sources[k]) }
      hits.set(at, h)
      return h
    },
  }
}

/** What one scan reads and evaluates: an index with a detector's rules, typed by its mapping. */
export interface ScanRequest {
  store: Store
  index: string
  rules: CompiledSigmaRule[]
  fieldTypes: FieldTypes | undefined
  /** The detector's IoC fields (threat intel): their values are gathered in the same pass. */
  iocFields?: IocFieldList
  /** The IoC index's filter as it is now (ioc-filter.ts): only the values it may hold are gathered. */
  iocFilter?: () => SharedArrayBuffer
}

/** Reads and evaluates here, yielding between slices. */
export async function scanHere({ store, index, rules, fieldTypes, iocFields, iocFilter }: ScanRequest): Promise<Scanner> {
  // Compiling a large set takes a while: it yields as the evaluation does.
  await warmRuleSet(rules, fieldTypes, runPacer())
  const set = ruleSet(rules, fieldTypes)
  let iocs: IocCollector | undefined
  const evaluate = async (
    size: number,
    source: (at: number) => Record<string, unknown>,
    keep: (at: number, parsed: Record<string, unknown>) => void,
    idOf: (at: number) => string,
  ) => {
    const pacer = runPacer()
    const pairs: number[] = []
    iocs = iocFields && collectorOf(iocFields, iocFilter?.())
    for (let at = 0; at < size; at++) {
      const event = source(at)
      const doc = new DocView(event)
      const matched = set.evaluate(doc)
      iocs?.collect(idOf(at), doc)
      for (const m of matched) pairs.push(at, m.at)
      if (matched.length > 0 || at === size - 1) keep(at, event)
      if (pacer.due()) await pacer.pause()
    }
    return Int32Array.from(pairs)
  }
  return {
    refused: set.refused,
    close() {},
    async next(after) {
      if (store.readSeq) {
        const batch = await store.readSeq({ index, after, size: SCAN_BATCH, maxChars: BATCH_CHARS })
        const hits = new Map<number, SearchHit>()
        const matches = await evaluate(
          batch.ids.length,
          (at) => JSON.parse(batch.sources[at]) as Record<string, unknown>,
          (at, parsed) => hits.set(at, { _index: index, _id: batch.ids[at], _score: null, _seq_no: batch.seqNos[at], _source: parsed }),
          (at) => batch.ids[at],
        )
        return { ...extentOf(batch, after), matches, hit: (at) => hits.get(at)!, iocs: iocs?.take() }
      }
      const page = await store.search({
        index,
        body: { size: SCAN_BATCH, sort: [{ _seq_no: 'asc' }], search_after: [after], seq_no_primary_term: true, track_total_hits: false },
      })
      const hits = page.hits.hits
      const matches = await evaluate(
        hits.length,
        (at) => hits[at]._source ?? {},
        () => {},
        (at) => hits[at]._id,
      )
      return {
        size: hits.length,
        full: hits.length === SCAN_BATCH,
        last: hits.length > 0 ? hits[hits.length - 1]._seq_no! : after,
        matches,
        hit: (at) => hits[at],
        iocs: iocs?.take(),
      }
    },
  }
}

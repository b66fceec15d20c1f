/**
 * The evaluator thread's work on one batch (evaluator-worker.ts), apart from where the batch comes
 * from: each stored document parsed and evaluated against the rule set, the IoC fields' values
 * gathered in the same pass when asked (threat intel), and only the matched documents (and the
 * last, for the run's lag) kept, so the batch's texts and parsed events die young.
 */
import type { RuleSet } from '../sigma'
import { DocView } from '../../store/query'
import { IocCollector } from '../threat-intel/collect'
import type { IocFieldList } from '../threat-intel/ioc-fields'
import type { IocFilter } from '../threat-intel/ioc-filter'
import { extent, type Scanned } from './evaluator-protocol'

/** Visits a batch's documents in order, answering the characters visited. */
export type BatchReader = (visit: (id: string, seq: number, text: string) => void) => number

export function scanBatch(
  set: RuleSet,
  read: BatchReader,
  after: number,
  iocFields?: IocFieldList,
  iocFilter?: Pick<IocFilter, 'mayMatch'>,
): { scanned: Scanned; chars: number } {
  const pairs: number[] = []
  const kept: Scanned['kept'] = { at: [], ids: [], seqNos: [], sources: [] }
  const keep = (at: number, id: string, seq: number, text: string) => {
    kept.at.push(at)
    kept.ids.push(id)
    kept.seqNos.push(seq)
    kept.sources.push(text)
  }
  const iocs = iocFields && new IocCollector(iocFields, iocFilter)
  let size = 0
  let lastId = ''
  let lastSeq = after
  let lastText = ''
  const chars = read((id, seq, text) => {
    const at = size++
    // One view of the event for the rules and the IoC fields: a field both read is walked once.
    const doc = new DocView(JSON.parse(text) as Record<string, unknown>)
    const matched = set.evaluate(doc)
    iocs?.collect(id, doc)
    for (const m of matched) pairs.push(at, m.at)
    if (matched.length > 0) keep(at, id, seq, text)
    lastId = id
    lastSeq = seq
    lastText = text
  })
  if (size > 0 && kept.at[kept.at.length - 1] !== size - 1) keep(size - 1, lastId, lastSeq, lastText)
  return { scanned: { ...extent(size, lastSeq, chars), matches: Int32Array.from(pairs), kept, iocs: iocs?.take() }, chars }
}

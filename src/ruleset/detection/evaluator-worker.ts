// The detection evaluator's thread: it reads a batch of events from the store file on a connection
// of its own, parses and evaluates them against an indexed rule set (THE evaluator of
// src/ruleset/sigma, so its answer is the node thread's), and hands back the matches and the
// matched events, while the node thread writes findings and serves requests.
import { ruleSet } from '../sigma'
import type { CompiledSigmaRule } from '../sigma'
import type { FieldTypes } from '../../store/query'
import { openSeqReader, type SeqReader } from '../../store/embedded/seq-read'
import { BATCH_CHARS, type EvaluatorReply, type EvaluatorRequest, extentOf, type Scanned, SCAN_BATCH } from './evaluator-protocol'

declare const self: Worker

/** Rule sets kept (least recently used dropped first): one per (rules, mapping) a detector runs. */
const MAX_SETS = 16
/** Source characters evaluated between two requests to collect the thread's heap. */
const COLLECT_EVERY_CHARS = 8 * 1024 * 1024
let sinceCollect = 0
const sets = new Map<string, { rules: CompiledSigmaRule[]; fieldTypes?: FieldTypes; refused: EvaluatorReply['refused'] }>()
/** Open readers by store file, until the run that opened one says it is done. */
const readers = new Map<string, SeqReader>()

function answer(reply: EvaluatorReply): void {
  postMessage(reply)
}

self.onmessage = (event: MessageEvent<EvaluatorRequest>) => {
  const request = event.data
  try {
    if (request.kind === 'use') {
      const entry = sets.get(request.key)
      if (!entry) return answer({ id: request.id, error: `unknown rule set ${request.key}` })
      // Most recently used last: the least recently used is dropped first.
      sets.delete(request.key)
      sets.set(request.key, entry)
      return answer({ id: request.id, refused: entry.refused })
    }
    if (request.kind === 'set') {
      // The array and the mapping object are the set's identity for ruleSet's own cache: both are
      // kept here as they arrived, so later batches find the indexed set built once.
      const rules = request.rules as CompiledSigmaRule[]
      const set = ruleSet(rules, request.fieldTypes)
      const refused = set.refused.map(({ rule, error }) => ({ at: rules.indexOf(rule), error }))
      sets.delete(request.key)
      sets.set(request.key, { rules, fieldTypes: request.fieldTypes, refused })
      if (sets.size > MAX_SETS) sets.delete(sets.keys().next().value!)
      return answer({ id: request.id, refused })
    }
    if (request.kind === 'close') {
      readers.get(request.file)?.close()
      readers.delete(request.file)
      return
    }
    const entry = sets.get(request.key)
    if (!entry) return answer({ id: request.id, error: `unknown rule set ${request.key}` })
    const set = ruleSet(entry.rules, entry.fieldTypes)
    let reader = readers.get(request.file)
    if (!reader) readers.set(request.file, (reader = openSeqReader(request.file)))
    const batch = reader.read(request.ix, request.after, SCAN_BATCH, BATCH_CHARS)
    const pairs: number[] = []
    const kept: Scanned['kept'] = { at: [], ids: [], seqNos: [], sources: [] }
    const size = batch.ids.length
    for (let at = 0; at < size; at++) {
      const text = batch.sources[at]
      const matched = set.evaluate(JSON.parse(text) as Record<string, unknown>)
      for (const m of matched) pairs.push(at, m.at)
      if (matched.length > 0 || at === size - 1) {
        kept.at.push(at)
        kept.ids.push(batch.ids[at])
        kept.seqNos.push(batch.seqNos[at])
        kept.sources.push(text)
      }
      sinceCollect += text.length
    }
    const matches = Int32Array.from(pairs)
    // Every batch leaves its parsed events behind: a collection is asked for every few batches, so
    // the thread's heap stays near one batch instead of growing until JavaScriptCore decides to.
    if (sinceCollect >= COLLECT_EVERY_CHARS) {
      sinceCollect = 0
      Bun.gc(false)
    }
    const scanned: Scanned = { ...extentOf(batch, request.after), matches, kept }
    postMessage({ id: request.id, scanned } satisfies EvaluatorReply, [matches.buffer])
  } catch (e) {
    answer({ id: request.id, error: e instanceof Error ? e.message : String(e) })
  }
}

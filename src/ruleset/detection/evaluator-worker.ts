// The detection evaluator's thread: it parses stored event texts and evaluates them against an
// indexed rule set (THE evaluator of src/ruleset/sigma, so its answer is the in-thread one), while
// the main thread reads the next batch, writes findings and serves requests.
import { ruleSet } from '../sigma'
import type { CompiledSigmaRule } from '../sigma'
import type { FieldTypes } from '../../store/query'
import { type EvaluatorReply, type EvaluatorRequest, eventAt } from './evaluator-protocol'

declare const self: Worker

/** Rule sets kept (least recently used dropped first): one per (rules, mapping) a detector runs. */
const MAX_SETS = 16
/** Source bytes evaluated between two collections of the thread's heap. */
const COLLECT_EVERY_BYTES = 8 * 1024 * 1024
let sinceCollect = 0
const sets = new Map<string, { rules: CompiledSigmaRule[]; fieldTypes?: FieldTypes }>()

function answer(reply: EvaluatorReply): void {
  postMessage(reply)
}

self.onmessage = (event: MessageEvent<EvaluatorRequest>) => {
  const request = event.data
  try {
    if (request.kind === 'set') {
      // The array and the mapping object are the set's identity for ruleSet's own cache: both are
      // kept here as they arrived, so later batches find the indexed set built once.
      const rules = request.rules as CompiledSigmaRule[]
      sets.delete(request.key)
      sets.set(request.key, { rules, fieldTypes: request.fieldTypes })
      if (sets.size > MAX_SETS) sets.delete(sets.keys().next().value!)
      const set = ruleSet(rules, request.fieldTypes)
      const refused = set.refused.map(({ rule, error }) => ({ at: rules.indexOf(rule), error }))
      return answer({ id: request.id, refused })
    }
    const entry = sets.get(request.key)
    if (!entry) return answer({ id: request.id, error: `unknown rule set ${request.key}` })
    const set = ruleSet(entry.rules, entry.fieldTypes)
    const pairs: number[] = []
    for (let at = 0; at < request.ends.length; at++) for (const m of set.evaluate(eventAt(request, at))) pairs.push(at, m.at)
    const matches = Int32Array.from(pairs)
    // Every batch leaves its parsed events behind: collect them every few batches, so the thread's
    // heap stays near one batch instead of growing until JavaScriptCore decides to collect.
    sinceCollect += request.sources.byteLength
    if (sinceCollect >= COLLECT_EVERY_BYTES) {
      sinceCollect = 0
      Bun.gc(true)
    }
    postMessage({ id: request.id, matches } satisfies EvaluatorReply, [matches.buffer])
  } catch (e) {
    answer({ id: request.id, error: e instanceof Error ? e.message : String(e) })
  }
}

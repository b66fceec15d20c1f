// The detection evaluator's thread: it reads a batch of events from the store file on a connection
// of its own, parses and evaluates them against an indexed rule set (THE evaluator of
// src/ruleset/sigma, so its answer is the node thread's), and hands back the matches and the
// matched events, while the node thread writes findings and serves requests.
import { ruleSet } from '../sigma'
import type { CompiledSigmaRule, RuleSet } from '../sigma'
import { openSeqReader, type SeqReader } from '../../store/embedded/seq-read'
import { type BatchReader, scanBatch } from './scan-batch'
import { BATCH_CHARS, type EvaluatorReply, type EvaluatorRequest, type Scanned, SCAN_BATCH, type WireRule } from './evaluator-protocol'
import { HeapGrowth } from '../../heap'
import { Lru } from '../../lru'
import { IocFilter } from '../threat-intel/ioc-filter'

declare const self: Worker

/** Rule sets kept (least recently used dropped first): one per (rules, mapping) a detector runs. */
const MAX_SETS = 16
/**
 * Source characters evaluated between two requests to collect the thread's young objects: about
 * one batch of events. Each event leaves its parse and its field views behind; collected every
 * 8 MiB of sources they let the thread's heap grow by 100+ MiB in a 1,000-rule run, while a young
 * collection per batch costs little next to evaluating it.
 */
const COLLECT_EVERY_CHARS = 1024 * 1024
let sinceCollect = 0
/**
 * What outlives those young collections (the kept texts, sent and copied to the node thread) is
 * old garbage until a full one: it grew this thread's heap by 30+ MiB over a 2,407-rule run. The
 * kept texts are what it is told was allocated (two bytes a character at most), so the heap is
 * read every few batches instead of after each.
 */
const heap = new HeapGrowth(16 * 1024 * 1024)
const sets = new Lru<string, { set: RuleSet; refused: EvaluatorReply['refused'] }>(MAX_SETS)
/** The set key last sent for each slot (see EvaluatorRequest): an older one for the slot is dropped. */
const slots = new Map<string, string>()
/** Open readers by store file, until the run that opened one says it is done. */
const readers = new Map<string, SeqReader>()

/** The batch after the last one answered, read ahead (`scanOf` names the request it answers). */
let ahead: { scan: string; scanned: Scanned } | undefined

/** The IoC filter last given (see EvaluatorRequest `ioc-filter`). */
let iocFilter: { generation: number; filter: IocFilter } | undefined

type ScanRequest = Extract<EvaluatorRequest, { kind: 'scan' }>

/** A request's batch, gathered under the IoC filter it names (a batch read ahead under another is read again). */
const scanOf = (r: ScanRequest) => `${r.key}\0${r.file}\0${r.ix}\0${r.after}\0${r.iocFields ? (r.iocFilter ?? 'all') : 'none'}`

/**
 * Reads the batch after `request.after` and evaluates it with the request's rule set, one stored
 * document at a time (scan-batch.ts): only the matched ones are kept, so the batch's texts and
 * parsed events die young instead of being promoted by the collections the evaluation triggers
 * (which let the thread's heap grow by a batch's texts, every batch, up to the next full collection).
 */
function scan(request: ScanRequest): Scanned {
  const entry = sets.get(request.key)
  if (!entry) throw new Error(`unknown rule set ${request.key}`)
  let reader = readers.get(request.file)
  if (!reader) readers.set(request.file, (reader = openSeqReader(request.file)))
  const from = reader
  const read: BatchReader = (visit) => from.each(request.ix, request.after, SCAN_BATCH, BATCH_CHARS, visit)
  let filter: IocFilter | undefined
  if (request.iocFields && request.iocFilter !== undefined) {
    if (iocFilter?.generation !== request.iocFilter) throw new Error(`unknown IoC filter ${request.iocFilter}`)
    filter = iocFilter.filter
  }
  const { scanned, chars } = scanBatch(entry.set, read, request.after, request.iocFields, filter)
  // What evaluation leaves behind is young: a young collection about every batch keeps the
  // thread's heap near its rule sets instead of growing until JavaScriptCore decides to collect.
  sinceCollect += chars
  if (sinceCollect >= COLLECT_EVERY_CHARS) {
    sinceCollect = 0
    let kept = 0
    for (const text of scanned.kept.sources) kept += text.length
    if (!heap.check(2 * kept)) Bun.gc(false)
  }
  return scanned
}

function answer(reply: EvaluatorReply): void {
  postMessage(reply)
}

self.onmessage = (event: MessageEvent<EvaluatorRequest>) => {
  const request = event.data
  try {
    if (request.kind === 'use') {
      const entry = sets.get(request.key)
      if (!entry) return answer({ id: request.id, error: `unknown rule set ${request.key}` })
      return answer({ id: request.id, refused: entry.refused })
    }
    if (request.kind === 'set') {
      const rules = request.rules as CompiledSigmaRule[]
      const replaced = request.slot === undefined ? undefined : slots.get(request.slot)
      if (replaced !== undefined && replaced !== request.key && sets.delete(replaced)) {
        // Collected before the new set is built, so the build's own peak does not come on top of it.
        Bun.gc(true)
      }
      if (request.slot !== undefined) slots.set(request.slot, request.key)
      const set = ruleSet(rules, request.fieldTypes)
      const refused = set.refused.map(({ rule, error }) => ({ at: rules.indexOf(rule), error }))
      sets.set(request.key, { set, refused })
      // The set is built and kept here, never built again from these rules: their query trees
      // (a fifth of what a large set holds) live on as its predicates and index only.
      for (const rule of rules) (rule as Partial<WireRule>).query = undefined
      for (const [slot, key] of slots) if (!sets.has(key)) slots.delete(slot)
      // Compiling and indexing a large set leaves tens of MiB behind: collected now, before the
      // scans' batches come to grow the heap on top of it.
      Bun.gc(true)
      return answer({ id: request.id, refused })
    }
    if (request.kind === 'ioc-filter') {
      iocFilter = { generation: request.generation, filter: new IocFilter(request.buffer) }
      return
    }
    if (request.kind === 'close') {
      // A scan ends with its close: what was read ahead for it would be stale at a later run.
      ahead = undefined
      readers.get(request.file)?.close()
      readers.delete(request.file)
      return
    }
    const wanted = scanOf(request)
    const scanned = ahead?.scan === wanted ? ahead.scanned : scan(request)
    ahead = undefined
    postMessage({ id: request.id, scanned } satisfies EvaluatorReply, [scanned.matches.buffer as ArrayBuffer])
    // A full batch is followed by a request for the next one (unless the run stops there): it is
    // read and evaluated now, while the node thread writes this one's findings.
    if (scanned.full && scanned.size > 0) {
      const next = { ...request, after: scanned.last }
      try {
        ahead = { scan: scanOf(next), scanned: scan(next) }
      } catch {
        // The request itself will meet the failure again, and answer it.
      }
    }
  } catch (e) {
    answer({ id: request.id, error: e instanceof Error ? e.message : String(e) })
  }
}

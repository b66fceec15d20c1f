/**
 * One detection run of one detector: every document indexed into its source indices since its
 * checkpoint is read in `_seq_no` order, in batches of SCAN_BATCH; each event is evaluated once
 * (on the evaluator thread while the next batch is read, see evaluator.ts) against the detector's
 * indexed rule set (`ruleSet` -> THE query evaluator of `src/store/query/`
 * for the candidate rules, typed by the source index mapping, exactly as the platform would run
 * the same trees as queries), and one finding per (event, matched rule) is appended with `_bulk`.
 * After each batch the findings are written first and the checkpoint moved second, so a crash in
 * between repeats the batch, and the deterministic finding ids turn the repeat into create
 * conflicts: no duplicate, no miss. A finding the findings stream refuses (a mapping error) is
 * counted and reported in the run's status, and the run moves on: it never retries it forever.
 */
import type { ClusterSettings, SettingsSnapshot } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import { sourceFieldSpecs, stableTypes } from './field-types'
import type { FieldTypes } from '../../store/query'
import type { SearchHit, Store } from '../../store/port'
import type { CompiledSigmaRule } from '../sigma'
import { type EvaluatorThread, type EventBatch, inThread, Pacer, SLICE_MILLIS, yieldToEventLoop } from './evaluator'
import { eventAt } from './evaluator-protocol'
import { normalizeCompliance, normalizeMitre, strings } from '../findings/rule-metadata'
import type { FindingInput, FindingRule } from '../findings/writer'
import { type PreparedCorrelation, prepareCorrelation } from '../correlation/detector'
import type { StoredDetector, StoredRule } from '../model'
import type { Rules } from '../rules'
import { baseline, type Checkpoint, concreteIndices, loadCheckpoint, type RunSummary, saveCheckpoint } from './checkpoint'
import { FINDINGS_SETTINGS, type FindingsPipeline, findingId } from './findings-pipeline'
import { isObject } from '../../json'

/**
 * Documents read per store call: one batch. Each batch is evaluated (yielding to the event loop
 * every few milliseconds), its findings written, and the checkpoint moved past it; a stop request
 * (SIGTERM) is honoured between batches. Small enough that a read never blocks the node for long,
 * large enough that the checkpoint write per batch is cheap next to the evaluation.
 */
export const SCAN_BATCH = 2_000

/** Distinct finding-write errors kept per run (the count is exact, the reasons are samples). */
const MAX_ERRORS = 5

export interface RunDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  rules: Rules
  findings: FindingsPipeline
  /** Where events are evaluated (a thread of the node's, or this one). */
  evaluator: EvaluatorThread
}

export interface RunControl {
  /** True once the node is stopping: the run ends at the next batch boundary, checkpoint saved. */
  stopping(): boolean
  /** Told of each (rule, event) match (the monitor execute API lists them). */
  onMatch?(ruleId: string, docId: string, index: string): void
}

export type RunOutcome = { status: 'disabled' | 'missing' | 'baselined' | 'lost' } | ({ status: 'ran' | 'stopped' } & RunSummary)

interface Prepared {
  compiled: CompiledSigmaRule[]
  meta: Map<CompiledSigmaRule, FindingRule>
  skipped: string[]
  correlation?: PreparedCorrelation
}

export async function runDetector(
  deps: RunDeps,
  id: string,
  detector: StoredDetector | undefined,
  control: RunControl = { stopping: () => false },
): Promise<RunOutcome> {
  if (!detector) return { status: 'missing' }
  if (!detector.enabled) return { status: 'disabled' }
  const startedAt = deps.now()
  const expressions = detector.inputs.flatMap((i) => i.detector_input.indices)
  let stored = await loadCheckpoint(deps.store, id)
  if (!stored || stored.checkpoint.epoch !== detector.enabled_time) {
    // Never ran since it was (re-)enabled and nobody baselined it: start from the current ends.
    const cp = await baseline(deps.store, id, expressions, detector.enabled_time, startedAt)
    return (await saveCheckpoint(deps.store, cp, stored)) ? { status: 'baselined' } : { status: 'lost' }
  }
  const settings = await deps.settings.snapshot()
  const prepared = await prepareRules(deps, id, detector, settings)
  const batchSize = settings.num(FINDINGS_SETTINGS.batchSize)
  const bulkSize = settings.num(FINDINGS_SETTINGS.bulkSize)
  const summary: RunSummary = {
    started_at: startedAt,
    finished_at: startedAt,
    took_ms: 0,
    documents: 0,
    findings: 0,
    duplicates: 0,
    shed: 0,
    failed_findings: 0,
    skipped_rules: prepared.skipped,
  }
  const errors = new Set<string>()
  const cp: Checkpoint = { ...stored.checkpoint, indices: { ...stored.checkpoint.indices } }
  let newest: number | undefined
  let stopped = false
  const pacer = new Pacer()

  scan: for (const index of await concreteIndices(deps.store, expressions)) {
    if (control.stopping()) {
      stopped = true
      break
    }
    const fieldTypes = await typesOf(
      deps.store,
      index,
      prepared.compiled.flatMap((r) => r.fields),
    )
    // Indexed once per (rules, mapping), on the evaluator thread while the first batch is read
    // here: each event is evaluated once against the whole set.
    // A store without stored texts (the platform) hands out parsed hits: those are evaluated here.
    const preparing = deps.store.readSeq ? deps.evaluator.prepare(prepared.compiled, fieldTypes) : inThread(prepared.compiled, fieldTypes)
    let page = await readPage(deps.store, index, cp.indices[index] ?? -1)
    const rules = await preparing
    for (const { rule, error } of rules.refused) skip(deps, summary, rule.id, error)
    // The next batch is read (and handed to the evaluator) while this one's matches are awaited.
    let matching = page.size > 0 ? rules.evaluate(page.events) : undefined
    while (matching) {
      const next = page.full ? await readPage(deps.store, index, page.last) : undefined
      const matches = await matching
      pacer.resumed()
      matching = next && next.size > 0 ? rules.evaluate(next.events) : undefined
      let pending: Array<FindingInput & { id: string }> = []
      // Findings go out a bulk's worth (`enriched_findings_bulk_size`) at a time, checked after each
      // `enriched_findings_enrich_batch_size` events, and at the batch's end.
      const flush = async () => {
        const r = await deps.findings.submit(pending, settings)
        pending = []
        // The store could not take them now: stop before the checkpoint, the next run repeats the batch.
        if (r.unavailable > 0)
          throw new Error(`detector ${id}: ${r.unavailable} findings could not be written now (${r.errors.join('; ')})`)
        summary.findings += r.written
        summary.duplicates += r.duplicates
        summary.shed += r.shed
        summary.failed_findings += r.failed
        for (const e of r.errors) if (errors.size < MAX_ERRORS) errors.add(e)
      }
      // Pairs (event, rule) arrive in event order: the findings of one event are built together.
      let boundary = batchSize
      for (let i = 0; i < matches.length;) {
        const at = matches[i]
        // Checked once per `enriched_findings_enrich_batch_size` events: a full bulk goes out.
        if (at >= boundary) {
          boundary = (Math.floor(at / batchSize) + 1) * batchSize
          if (pending.length >= bulkSize) await flush()
        }
        const hit = page.hit(at)
        const matched: Array<FindingInput & { id: string }> = []
        for (; i < matches.length && matches[i] === at; i += 2) {
          const rule = prepared.meta.get(prepared.compiled[matches[i + 1]])!
          control.onMatch?.(rule.id, hit._id, hit._index)
          matched.push({
            id: findingId(id, rule.id, hit._index, hit._id, hit._seq_no ?? 0),
            event: { _id: hit._id, _index: hit._index, _source: hit._source ?? {} },
            rule,
            detector: { id, type: detector.detector_type },
          })
        }
        // Correlation rules see every match; rules they pull in write findings only with `generate`.
        pending.push(...(prepared.correlation ? prepared.correlation.admit(hit, matched) : matched))
        if (pacer.due()) await pacer.yield()
      }
      summary.documents += page.size
      // The lag is read off the last event of each batch (the latest indexed), not parsed per event.
      const ts = timestampOf(page.hit(page.size - 1)._source ?? {})
      if (ts !== undefined && (newest === undefined || ts > newest)) newest = ts
      // Findings first, checkpoint second: a crash in between repeats the batch, and the
      // deterministic finding ids turn the repeat into create conflicts.
      if (pending.length > 0) await flush()
      // Correlation findings are written before their windows are saved, and both before the checkpoint.
      await prepared.correlation?.flush(async (found) => {
        pending.push(...found)
        await flush()
      })
      cp.indices[index] = page.last
      const saved = await saveCheckpoint(deps.store, cp, stored)
      if (!saved) return { status: 'lost' } // another node moved it: that node owns this detector now
      stored = saved
      if (pacer.due()) await pacer.yield()
      if (!next) break
      page = next
      if (control.stopping()) {
        // The batch read ahead is left for the next run: the checkpoint is before it.
        stopped = true
        break scan
      }
    }
  }
  summary.finished_at = deps.now()
  summary.took_ms = summary.finished_at - startedAt
  if (newest !== undefined) summary.lag_ms = Math.max(0, summary.finished_at - newest)
  if (errors.size > 0) {
    const message = `${summary.failed_findings} findings could not be written: ${[...errors].join('; ')}`
    summary.error = message
    cp.last_error = { at: summary.finished_at, message }
    // Logged once per distinct failure, not on every run that meets it again.
    if (stored.checkpoint.last_error?.message !== message)
      deps.log.error('detector findings could not be written; the run moved on', {
        detector: id,
        failed: summary.failed_findings,
        errors: [...errors],
      })
  }
  cp.last_run_at = startedAt
  cp.last_run = summary
  const saved = await saveCheckpoint(deps.store, cp, stored)
  if (!saved) return { status: 'lost' }
  return { status: stopped ? 'stopped' : 'ran', ...summary }
}

/** One batch of an index, in `_seq_no` order: the events as the evaluator takes them, hits built on demand. */
interface Page {
  events: EventBatch
  size: number
  /** A full batch: more may follow. */
  full: boolean
  /** `_seq_no` of the last event. */
  last: number
  /** The event at a position, its source parsed once (only matched events and the last are). */
  hit(at: number): SearchHit
}

/** Bytes of sources read per batch at most (a batch of large events is cut short). */
const BATCH_BYTES = 64 * 1024 * 1024

async function readPage(store: Store, index: string, after: number): Promise<Page> {
  if (store.readSeq) {
    // The stored texts go to the evaluator as they are: parsed there, not here.
    const batch = await store.readSeq({ index, after, size: SCAN_BATCH, maxBytes: BATCH_BYTES })
    const size = batch.ids.length
    const hits = new Map<number, SearchHit>()
    return {
      events: batch,
      size,
      full: size === SCAN_BATCH || batch.sources.length >= BATCH_BYTES,
      last: size > 0 ? batch.seqNos[size - 1] : after,
      hit(at) {
        let h = hits.get(at)
        if (!h)
          hits.set(at, (h = { _index: index, _id: batch.ids[at], _score: null, _seq_no: batch.seqNos[at], _source: eventAt(batch, at) }))
        return h
      },
    }
  }
  const page = await store.search({
    index,
    body: { size: SCAN_BATCH, sort: [{ _seq_no: 'asc' }], search_after: [after], seq_no_primary_term: true, track_total_hits: false },
  })
  const hits = page.hits.hits
  return {
    events: hits.map((h) => h._source ?? {}),
    size: hits.length,
    full: hits.length === SCAN_BATCH,
    last: hits.length > 0 ? hits[hits.length - 1]._seq_no! : after,
    hit: (at) => hits[at],
  }
}

function skip(deps: RunDeps, summary: RunSummary, ruleId: string | undefined, error: string): void {
  if (ruleId === undefined || summary.skipped_rules.includes(ruleId)) return
  summary.skipped_rules.push(ruleId)
  deps.log.warn('rule skipped by detector: the source index mapping refuses it', { rule: ruleId, error })
}

/** The event's `@timestamp` in epoch millis, for the run's lag. */
function timestampOf(source: Record<string, unknown>): number | undefined {
  const t = source['@timestamp']
  if (typeof t === 'number') return t
  if (typeof t !== 'string') return undefined
  const ms = Date.parse(t)
  return Number.isNaN(ms) ? undefined : ms
}

/** The detector's rules compiled with their log type's current field mapping; unusable ones skipped. */
async function prepareRules(deps: RunDeps, id: string, detector: StoredDetector, settings: SettingsSnapshot): Promise<Prepared> {
  const compiled: CompiledSigmaRule[] = []
  const meta = new Map<CompiledSigmaRule, FindingRule>()
  const skipped: string[] = []
  const mappings = new Map<string, Promise<Record<string, string>>>()
  const filters = deps.rules.filters()
  const correlations: StoredRule[] = []
  let slice = performance.now()
  for (const { detector_input: di } of detector.inputs) {
    const custom = (di.custom_rules ?? []).map((r) => r.id)
    const pre = (di.pre_packaged_rules ?? []).map((r) => r.id)
    for (const [space, ids] of [
      ['custom', custom],
      ['standard', pre],
    ] as const) {
      if (ids.length === 0) continue
      const { rules, missing } = await deps.rules.bySpaceIds(space, ids)
      skipped.push(...missing)
      for (const { rule } of rules) {
        if (rule.compile_error) {
          skipped.push(rule.document.id)
          continue
        }
        if (rule.kind === 'correlation') {
          correlations.push(rule)
          continue
        }
        if (performance.now() - slice > SLICE_MILLIS) {
          await yieldToEventLoop()
          slice = performance.now()
        }
        try {
          const c = await deps.rules.compileForDetection(rule, settings, mappings, filters)
          compiled.push(c)
          meta.set(c, findingRule(rule))
        } catch (e) {
          skipped.push(rule.document.id)
          deps.log.warn('rule skipped by detector: it does not compile', { rule: rule.document.id, error: e as Error })
        }
      }
    }
  }
  const correlation = await prepareCorrelation(deps, id, detector.detector_type, correlations, compiled, settings, findingRule)
  for (const x of correlation?.extra ?? []) {
    compiled.push(x.compiled)
    meta.set(x.compiled, findingRule(x.rule))
  }
  for (const s of correlation?.skipped ?? []) {
    skipped.push(s.id)
    deps.log.warn('correlation rule skipped by detector', { rule: s.id, reason: s.reason })
  }
  return { compiled, meta, skipped, correlation }
}

function findingRule(rule: StoredRule): FindingRule {
  const out: FindingRule = { id: rule.document.id, title: rule.title, tags: strings(rule.tags) }
  if (rule.sigma_id) out.sigma_id = rule.sigma_id
  if (rule.level) out.level = rule.level
  if (rule.status) out.status = rule.status
  if (rule.author) out.author = rule.author
  if (rule.category) out.category = rule.category
  if (rule.description) out.description = rule.description
  // Normalized to the findings mapping, so a rule's metadata shape never stops its findings.
  const mitre = normalizeMitre(rule.mitre)
  if (mitre) out.mitre = mitre
  const compliance = normalizeCompliance(rule.compliance)
  if (compliance) out.compliance = compliance
  const reference = strings(rule.references)
  if (reference.length) out.reference = reference
  return out
}

/**
 * The index mapping as the evaluator's field types, so detection types fields as a search would;
 * fields the rules read that no event carried yet are typed by the index's dynamic templates.
 */
async function typesOf(store: Store, index: string, fields: string[]): Promise<FieldTypes | undefined> {
  const specs = sourceFieldSpecs((await store.getMapping({ index }))[index]?.mappings, fields)
  return specs && stableTypes(specs)
}

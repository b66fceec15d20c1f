/**
 * One detection run of one detector: every document indexed into its source indices since its
 * checkpoint is read in `_seq_no` order (pages of `enriched_findings_enrich_batch_size`), its
 * rules are evaluated on each with THE query evaluator (`evaluateRules` -> `src/store/query/`,
 * typed by the source index mapping, exactly as the platform would run the same tree as a query),
 * and one finding per (event, matched rule) is appended. After each page the findings are written
 * first and the checkpoint moved second, so a crash in between repeats the page, and the
 * deterministic finding ids turn the repeat into create conflicts: no duplicate, no miss.
 * (Checkpointing per page rather than per batch: each checkpoint is a durable write.)
 */
import type { ClusterSettings, SettingsSnapshot } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import { fieldSpecs } from '../../store/embedded'
import type { FieldTypes } from '../../store/query'
import type { SearchHit, Store } from '../../store/port'
import { type CompiledSigmaRule, evaluateRules } from '../sigma'
import { type PreparedCorrelation, prepareCorrelation } from '../correlation/detector'
import type { FindingInput, FindingRule } from '../findings/writer'
import type { StoredDetector, StoredRule } from '../model'
import type { Rules } from '../rules'
import { baseline, type Checkpoint, concreteIndices, loadCheckpoint, type RunSummary, saveCheckpoint } from './checkpoint'
import { FINDINGS_SETTINGS, type FindingsPipeline, findingId } from './findings-pipeline'

/** Documents read per store call (the platform's default `index.max_result_window`). */
export const SCAN_PAGE = 10_000

export interface RunDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  rules: Rules
  findings: FindingsPipeline
}

export type RunOutcome = { status: 'disabled' | 'missing' | 'baselined' | 'lost' } | ({ status: 'ran' } & RunSummary)

interface Prepared {
  compiled: CompiledSigmaRule[]
  meta: Map<CompiledSigmaRule, FindingRule>
  skipped: string[]
  correlation?: PreparedCorrelation
}

export async function runDetector(deps: RunDeps, id: string, detector: StoredDetector | undefined): Promise<RunOutcome> {
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
    took_ms: 0,
    documents: 0,
    findings: 0,
    duplicates: 0,
    shed: 0,
    skipped_rules: prepared.skipped,
  }
  const cp: Checkpoint = { ...stored.checkpoint, indices: { ...stored.checkpoint.indices } }

  for (const index of await concreteIndices(deps.store, expressions)) {
    const fieldTypes = await typesOf(deps.store, index)
    let after = cp.indices[index] ?? -1
    for (;;) {
      // Read in large pages (one pass over the index each), evaluate batches of
      // `enriched_findings_enrich_batch_size` events, write findings once a bulk's worth
      // (`enriched_findings_bulk_size`) is pending and at the page's end, then move the
      // checkpoint past the page. A crash before the
      // checkpoint re-evaluates at most one page, and the finding ids make that a no-op.
      const page = await deps.store.search({
        index,
        body: { size: SCAN_PAGE, sort: [{ _seq_no: 'asc' }], search_after: [after], seq_no_primary_term: true, track_total_hits: false },
      })
      const hits = page.hits.hits
      let pending: Array<FindingInput & { id: string }> = []
      const flush = async () => {
        const r = await deps.findings.submit(pending, settings)
        pending = []
        if (r.failed > 0) throw new Error(`detector ${id}: ${r.failed} findings could not be written (${r.errors.join('; ')})`)
        summary.findings += r.written
        summary.duplicates += r.duplicates
        summary.shed += r.shed
      }
      for (let at = 0; at < hits.length; at += batchSize) {
        const slice = hits.slice(at, at + batchSize)
        for (const hit of slice) pending.push(...match(id, detector, hit, prepared, fieldTypes))
        summary.documents += slice.length
        if (pending.length >= bulkSize) await flush()
      }
      if (pending.length > 0) await flush()
      // Correlation findings are written before their windows are saved, and both before the checkpoint.
      await prepared.correlation?.flush(async (found) => {
        pending.push(...found)
        await flush()
      })
      if (hits.length === 0) break
      after = hits[hits.length - 1]._seq_no!
      cp.indices[index] = after
      const saved = await saveCheckpoint(deps.store, cp, stored)
      if (!saved) return { status: 'lost' } // another node moved it: that node owns this detector now
      stored = saved
      if (hits.length < SCAN_PAGE) break
    }
  }
  summary.took_ms = deps.now() - startedAt
  cp.last_run_at = startedAt
  cp.last_run = summary
  return (await saveCheckpoint(deps.store, cp, stored)) ? { status: 'ran', ...summary } : { status: 'lost' }
}

function match(
  detectorId: string,
  detector: StoredDetector,
  hit: SearchHit,
  p: Prepared,
  fieldTypes: FieldTypes | undefined,
): Array<FindingInput & { id: string }> {
  const source = hit._source ?? {}
  const out: Array<FindingInput & { id: string }> = []
  const matches = evaluateRules(source, p.compiled, fieldTypes)
  if (matches.length === 0) return out
  const byId = new Map(p.compiled.map((c) => [c.id, c]))
  for (const m of matches) {
    const rule = p.meta.get(byId.get(m.rule.id)!)!
    out.push({
      id: findingId(detectorId, rule.id, hit._index, hit._id, hit._seq_no ?? 0),
      event: { _id: hit._id, _index: hit._index, _source: source },
      rule,
      detector: { id: detectorId, type: detector.detector_type },
    })
  }
  if (!p.correlation) return out
  p.correlation.observe(hit, out)
  return out.filter((f) => !p.correlation!.silent.has(f.rule.id))
}

/** The detector's rules compiled with their log type's current field mapping; unusable ones skipped. */
async function prepareRules(deps: RunDeps, id: string, detector: StoredDetector, settings: SettingsSnapshot): Promise<Prepared> {
  const compiled: CompiledSigmaRule[] = []
  const meta = new Map<CompiledSigmaRule, FindingRule>()
  const skipped: string[] = []
  const mappings = new Map<string, Promise<Record<string, string>>>()
  const filters = deps.rules.filters()
  const correlations: StoredRule[] = []
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
  const out: FindingRule = { id: rule.document.id, title: rule.title, tags: rule.tags.map((t) => t.value) }
  if (rule.sigma_id) out.sigma_id = rule.sigma_id
  if (rule.level) out.level = rule.level
  if (rule.status) out.status = rule.status
  if (rule.author) out.author = rule.author
  if (rule.category) out.category = rule.category
  if (rule.description) out.description = rule.description
  if (isObject(rule.mitre)) out.mitre = rule.mitre as FindingRule['mitre']
  if (isObject(rule.compliance)) out.compliance = rule.compliance as FindingRule['compliance']
  return out
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The index mapping as the evaluator's field types, so detection types fields as a search would. */
async function typesOf(store: Store, index: string): Promise<FieldTypes | undefined> {
  const m = await store.getMapping({ index })
  const mappings = m[index]?.mappings
  return mappings?.properties ? fieldSpecs(mappings) : undefined
}

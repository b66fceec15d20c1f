/**
 * One detection run of one detector: every document indexed into its source indices since its
 * checkpoint is read in `_seq_no` order, in batches of SCAN_BATCH; each event is evaluated once
 * (on the evaluator thread, which reads the next batch while this one's findings are written, see
 * scan.ts) against the detector's indexed rule set (`ruleSet` -> THE query evaluator of
 * `src/store/query/` for the candidate rules, typed by the source index mapping, exactly as the
 * platform would run the same trees as queries), and one finding per (event, matched rule) is
 * appended with `_bulk`.
 * After each batch the findings are written first and the checkpoint moved second, so a crash in
 * between repeats the batch, and the deterministic finding ids turn the repeat into create
 * conflicts: no duplicate, no miss. A finding the findings stream refuses (a mapping error) is
 * counted and reported in the run's status, and the run moves on: it never retries it forever.
 */
import type { ClusterSettings, SettingsSnapshot } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import { sourceFieldSpecs, stableTypes } from './field-types'
import type { FieldTypes } from '../../store/query'
import type { Store } from '../../store/port'
import type { CompiledSigmaRule } from '../sigma'
import type { EvaluatorThread } from './evaluator'
import { runPacer, type ScannedPage, type Scanner, type ScanRequest } from './scan'
import { normalizeCompliance, normalizeMitre, strings } from '../findings/rule-metadata'
import type { FindingInput, FindingRule } from '../findings/writer'
import { type PreparedCorrelation, prepareCorrelation } from '../correlation/detector'
import type { StoredDetector, StoredRule } from '../model'
import type { Rules } from '../rules'
import {
  baseline,
  type Checkpoint,
  concreteIndices,
  loadCheckpoint,
  type RunSummary,
  saveCheckpoint,
  type StoredCheckpoint,
} from './checkpoint'
import { FINDINGS_SETTINGS, type FindingsPipeline, findingId } from './findings-pipeline'
import { isObject } from '../../json'
import type { AlertRaiser } from '../alerts/raise'
import { DetectorThreatIntel, type ThreatIntelDeps } from '../threat-intel/detector-run'
import { HeapGrowth, youngCollections } from '../../heap'

/** Distinct finding-write errors kept per run (the count is exact, the reasons are samples). */
const MAX_ERRORS = 5

/**
 * Every batch's findings are garbage once written (the events parsed, the finding documents, their
 * stored forms): about 2 KB per finding, 250 MiB over 120k findings, and JavaScriptCore left the
 * node thread's heap 60-80 MiB over its live size between its own full collections (2,407 SigmaHQ
 * rules over 100k events). Collected after the batch that grew the heap by 16 MiB; runs of this
 * thread share it. Told FINDING_BYTES per finding, so the heap is read about every 1,000 findings
 * (every fourth batch at the latest) rather than after every batch.
 */
const runHeap = new HeapGrowth(16 * 1024 * 1024)
const FINDING_BYTES = 2048

export interface RunDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  rules: Rules
  findings: FindingsPipeline
  /** Where events are evaluated (a thread of the node's, or this one). */
  evaluator: EvaluatorThread
  /** Raises the alerts of the detector's triggers on each bulk of findings (absent: none). */
  alerts?: Pick<AlertRaiser, 'raise' | 'runFailed' | 'runSucceeded' | 'raiseIoc'>
  /** IoC matching for detectors with `threat_intel_enabled` (absent: the flag does nothing). */
  threatIntel?: Omit<ThreatIntelDeps, 'store' | 'log' | 'now' | 'alerts'>
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
  const stored = await loadCheckpoint(deps.store, id)
  if (!stored || stored.checkpoint.epoch !== detector.enabled_time) {
    // Never ran since it was (re-)enabled and nobody baselined it: start from the current ends.
    const cp = await baseline(deps.store, id, expressions, detector.enabled_time, startedAt)
    return (await saveCheckpoint(deps.store, cp, stored)) ? { status: 'baselined' } : { status: 'lost' }
  }
  const settings = await deps.settings.snapshot()
  // A rule left out of this run is worth a warning when the previous run did not leave it out too.
  const report = skipReporter(deps, id, stored.checkpoint.last_run?.skipped_rules)
  const prepared = await prepareRules(deps, id, detector, settings, report)
  const threatIntel = await DetectorThreatIntel.of(deps.threatIntel && { ...deps, ...deps.threatIntel }, id, detector)
  const run = new DetectorRun(deps, id, detector, control, { settings, report, prepared, threatIntel, stored, startedAt })
  for (const index of await concreteIndices(deps.store, expressions)) {
    if (control.stopping()) {
      run.stopped = true
      break
    }
    const ended = await run.scanIndex(index)
    if (ended === 'lost') return { status: 'lost' }
    if (ended === 'stopped') break
  }
  return run.finish()
}

/** What a run is given once its detector's rules are ready. */
interface RunStart {
  settings: SettingsSnapshot
  report: SkipReport
  prepared: Prepared
  threatIntel: DetectorThreatIntel | undefined
  stored: StoredCheckpoint
  startedAt: number
}

/** One run of one detector past its baseline: the scan of its indices, its findings and its checkpoint. */
class DetectorRun {
  readonly summary: RunSummary
  private readonly errors = new Set<string>()
  private readonly cp: Checkpoint
  private readonly pacer = runPacer()
  private readonly batchSize: number
  private readonly bulkSize: number
  private readonly flushMillis: number
  private newest: number | undefined
  stopped = false
  private pending: Array<FindingInput & { id: string }> = []
  private committed = performance.now()

  constructor(
    private readonly deps: RunDeps,
    private readonly id: string,
    private readonly detector: StoredDetector,
    private readonly control: RunControl,
    private readonly start: RunStart,
  ) {
    const { settings, startedAt, stored } = start
    this.batchSize = settings.num(FINDINGS_SETTINGS.batchSize)
    this.bulkSize = settings.num(FINDINGS_SETTINGS.bulkSize)
    this.flushMillis = settings.num(FINDINGS_SETTINGS.flushInterval) * 1000
    this.summary = {
      started_at: startedAt,
      finished_at: startedAt,
      took_ms: 0,
      documents: 0,
      findings: 0,
      duplicates: 0,
      shed: 0,
      failed_findings: 0,
      skipped_rules: start.prepared.skipped,
    }
    this.cp = { ...stored.checkpoint, indices: { ...stored.checkpoint.indices } }
  }

  /**
   * Findings go out a bulk's worth (`enriched_findings_bulk_size`) at a time, checked after each
   * `enriched_findings_enrich_batch_size` events, and at the batch's end.
   */
  private async flush(): Promise<void> {
    const { deps, id, summary } = this
    const batch = this.pending
    const r = await deps.findings.submit(this.pending, this.start.settings)
    this.pending = []
    youngCollections.due()
    // The store could not take them now: stop before the checkpoint, the next run repeats the batch.
    if (r.unavailable > 0) throw new Error(`detector ${id}: ${r.unavailable} findings could not be written now (${r.errors.join('; ')})`)
    // Alerts (with the notifications they owe) after their findings, both before the checkpoint.
    await deps.alerts?.raise(id, this.detector, batch)
    summary.findings += r.written
    summary.duplicates += r.duplicates
    summary.shed += r.shed
    summary.failed_findings += r.failed
    for (const e of r.errors) if (this.errors.size < MAX_ERRORS) this.errors.add(e)
  }

  /** One batch's findings, a bulk's worth written whenever one is ready. */
  private async collectFindings(page: ScannedPage): Promise<void> {
    const { id, detector, control, batchSize } = this
    const { prepared } = this.start
    const { matches } = page
    // Pairs (event, rule) arrive in event order: the findings of one event are built together.
    let boundary = batchSize
    for (let i = 0; i < matches.length;) {
      const at = matches[i]
      // Checked once per `enriched_findings_enrich_batch_size` events: a full bulk goes out.
      if (at >= boundary) {
        boundary = (Math.floor(at / batchSize) + 1) * batchSize
        if (this.pending.length >= this.bulkSize) await this.flush()
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
      this.pending.push(...(prepared.correlation ? prepared.correlation.admit(hit, matched) : matched))
      if (this.pacer.due()) await this.pacer.pause()
    }
    this.summary.documents += page.size
    // The lag is read off the last event of each batch (the latest indexed), not parsed per event.
    const ts = timestampOf(page.hit(page.size - 1)._source ?? {})
    if (ts !== undefined && (this.newest === undefined || ts > this.newest)) this.newest = ts
  }

  /**
   * Findings first, checkpoint second: a crash in between repeats the batches since the last
   * commit, and the deterministic finding ids turn the repeat into create conflicts.
   */
  private async commit(): Promise<boolean> {
    if (this.pending.length > 0) await this.flush()
    await this.start.threatIntel?.flush()
    // Correlation findings are written before their windows are saved, and both before the checkpoint.
    await this.start.prepared.correlation?.flush(async (found) => {
      this.pending.push(...found)
      await this.flush()
    })
    const saved = await saveCheckpoint(this.deps.store, this.cp, this.start.stored)
    if (!saved) return false
    this.start.stored = saved
    this.committed = performance.now()
    return true
  }

  /** Reads one source index from its checkpoint; 'lost' when another node owns the detector now, 'stopped' when the node stops. */
  async scanIndex(index: string): Promise<'lost' | 'stopped' | undefined> {
    const { cp, pacer, control } = this
    const { threatIntel, prepared, report } = this.start
    // Indexed once per (rules, mapping): each event is evaluated once against the whole set.
    const scanner = await scannerOf(this.deps, index, prepared.compiled, threatIntel?.scan)
    try {
      for (const { rule, error } of scanner.refused) skip(this.summary, rule.id, error, report)
      // The next batch is read and evaluated (on the thread) while this one's findings are written.
      let reading: Promise<ScannedPage> | undefined = scanner.next(cp.indices[index] ?? -1)
      // Batches collected since the last commit: the checkpoint in `cp` is ahead of the saved one.
      let uncommitted = false
      while (reading) {
        const page: ScannedPage = await reading
        pacer.resumed()
        reading = page.full && page.size > 0 ? scanner.next(page.last) : undefined
        // An early failure of the batch read ahead is not unhandled if this one's writing fails.
        reading?.catch(() => {})
        if (page.size > 0) {
          await this.collectFindings(page)
          threatIntel?.admit(index, page.iocs)
          cp.indices[index] = page.last
          uncommitted = true
        }
        const stop = reading !== undefined && control.stopping()
        // A commit (findings, then checkpoint) once the flush interval has passed, and when the scan
        // ends: each costs a durable write (the log's sync, of every page written since the last
        // one: 20 ms and more), not each batch nor each bulk of findings, which go out as they fill.
        const due = !reading || stop || performance.now() - this.committed >= this.flushMillis
        if (uncommitted && due) {
          uncommitted = false
          // Another node moved the checkpoint: that node owns this detector now.
          if (!(await this.commit())) return 'lost'
        }
        if (!runHeap.check((page.matches.length / 2) * FINDING_BYTES)) youngCollections.due()
        if (pacer.due()) await pacer.pause()
        if (stop) {
          // The batch read ahead is left for the next run: the checkpoint is before it.
          this.stopped = true
          return 'stopped'
        }
      }
    } finally {
      scanner.close()
    }
    return undefined
  }

  /** The run's summary saved with the checkpoint (and its write errors logged once each). */
  async finish(): Promise<RunOutcome> {
    const { summary, cp, errors } = this
    const { threatIntel, startedAt, stored } = this.start
    if (threatIntel) summary.ioc_findings = threatIntel.findings
    summary.finished_at = this.deps.now()
    summary.took_ms = summary.finished_at - startedAt
    if (this.newest !== undefined) summary.lag_ms = Math.max(0, summary.finished_at - this.newest)
    if (errors.size > 0) {
      const message = `${summary.failed_findings} findings could not be written: ${[...errors].join('; ')}`
      summary.error = message
      cp.last_error = { at: summary.finished_at, message }
      // Logged once per distinct failure, not on every run that meets it again.
      if (stored.checkpoint.last_error?.message !== message)
        this.deps.log.error('detector findings could not be written; the run moved on', {
          detector: this.id,
          failed: summary.failed_findings,
          errors: [...errors],
        })
    }
    cp.last_run_at = startedAt
    cp.last_run = summary
    const saved = await saveCheckpoint(this.deps.store, cp, stored)
    if (!saved) return { status: 'lost' }
    return { status: this.stopped ? 'stopped' : 'ran', ...summary }
  }
}

/**
 * Readies an enabled detector's rules as its runs use them (compiled, and indexed on the evaluator
 * thread under each source index's mapping), so its first run does not pay for it.
 */
export async function warmDetector(deps: RunDeps, id: string, detector: StoredDetector): Promise<void> {
  if (!detector.enabled) return
  // Quietly: the first run says which rules it leaves out.
  const prepared = await prepareRules(deps, id, detector, await deps.settings.snapshot(), () => {})
  for (const index of await concreteIndices(
    deps.store,
    detector.inputs.flatMap((i) => i.detector_input.indices),
  ))
    (await scannerOf(deps, index, prepared.compiled)).close()
}

/** The scan of one source index with a detector's rules, typed by that index's mapping. */
async function scannerOf(
  deps: RunDeps,
  index: string,
  rules: CompiledSigmaRule[],
  iocs?: Pick<ScanRequest, 'iocFields' | 'iocFilter'>,
): Promise<Scanner> {
  const fieldTypes = await typesOf(
    deps.store,
    index,
    rules.flatMap((r) => r.fields),
  )
  return deps.evaluator.scanner({ store: deps.store, index, rules, fieldTypes, ...iocs })
}

function skip(summary: RunSummary, ruleId: string | undefined, error: string, report: SkipReport): void {
  if (ruleId === undefined || summary.skipped_rules.includes(ruleId)) return
  summary.skipped_rules.push(ruleId)
  report(ruleId, 'rule skipped by detector: the source index mapping refuses it', error)
}

/** Says why a rule is left out of a run. */
type SkipReport = (ruleId: string, message: string, reason: unknown) => void

/** Warns once per rule that `previous` (the last run's skipped rules) did not already leave out. */
function skipReporter(deps: RunDeps, detector: string, previous: string[] | undefined): SkipReport {
  const known = new Set(previous)
  return (rule, message, reason) => {
    if (known.has(rule)) return
    known.add(rule)
    deps.log.warn(message, { detector, rule, reason })
  }
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
async function prepareRules(
  deps: RunDeps,
  id: string,
  detector: StoredDetector,
  settings: SettingsSnapshot,
  report: SkipReport,
): Promise<Prepared> {
  const compiled: CompiledSigmaRule[] = []
  const meta = new Map<CompiledSigmaRule, FindingRule>()
  const skipped: string[] = []
  const mappings = new Map<string, Promise<Record<string, string>>>()
  const filters = deps.rules.filters()
  const correlations: StoredRule[] = []
  const pacer = runPacer()
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
        if (pacer.due()) await pacer.pause()
        try {
          const c = await deps.rules.compileForDetection(rule, settings, mappings, filters)
          compiled.push(c)
          meta.set(c, findingRule(rule))
        } catch (e) {
          skipped.push(rule.document.id)
          report(rule.document.id, 'rule skipped by detector: it does not compile', (e as Error).message)
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
    report(s.id, 'correlation rule skipped by detector', s.reason)
  }
  return { compiled, meta, skipped, correlation }
}

export function findingRule(rule: StoredRule): FindingRule {
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
export async function typesOf(store: Store, index: string, fields: string[]): Promise<FieldTypes | undefined> {
  const specs = sourceFieldSpecs((await store.getMapping({ index }))[index]?.mappings, fields)
  return specs && stableTypes(specs)
}

/**
 * Ruleset Management assembled: log types, rules, detectors, the Content Manager's sync calls,
 * `rules/evaluate`, and the detection runs. Routes are in `./routes`.
 */
import type { Feature } from '../deps'
import type { Caller, Security } from '../http/caller'
import type { RulesetDeps } from './deps'
import { baseline, deleteCheckpoint, loadCheckpoint, saveCheckpoint } from './detection/checkpoint'
import { EvaluatorThread } from './detection/evaluator'
import { FindingsPipeline } from './detection/findings-pipeline'
import { detectionHolds } from './detection/retention-hold'
import { warmDetector } from './detection/run'
import { executeMonitor, type MonitorRunResult } from './detection/monitor'
import { DetectionScheduler, type SchedulerOptions } from './detection/scheduler'
import { Detectors } from './detectors'
import { DETECTORS_INDEX, ensureIndex } from './indices'
import { type EvaluateRequest, type EvaluateResult, evaluateRulesRequest } from './evaluate'
import { LogTypes } from './log-types'
import { Rules } from './rules'
import { rulesetRoutes } from './routes'
import { RulesetService } from './sync'

export interface Ruleset extends Feature {
  logTypes: LogTypes
  rules: Rules
  detectors: Detectors
  /** The Content Manager's `RulesetSync` (plus detector and space calls). */
  sync: RulesetService
  findings: FindingsPipeline
  /** The thread detector runs evaluate events on. */
  evaluator: EvaluatorThread
  scheduler: DetectionScheduler
  /** `rules/evaluate` (logtest detection). */
  evaluate(req: Partial<EvaluateRequest>): Promise<EvaluateResult>
  /** Alerting's monitor `_execute`: runs the detector behind the monitor id now. */
  executeMonitor(monitorId: string, caller: Caller | undefined): Promise<MonitorRunResult>
  /** What the embedded retention job must keep for detectors that have not read it yet. */
  retentionHolds(now?: number): Promise<Map<string, number>>
  /** Starts the detection clock (not started by construction, so tests and tools stay passive). */
  start(): Promise<void>
}

export function createRuleset(
  deps: RulesetDeps & { security: Pick<Security, 'authorizeIndices'> },
  options: SchedulerOptions = {},
): Ruleset {
  const logTypes = new LogTypes(deps)
  const rules = new Rules(deps, logTypes)
  const detectors = new Detectors(deps, rules)
  const findings = new FindingsPipeline(deps.store, deps.log)
  const evaluator = new EvaluatorThread(deps.log)
  const runDeps = { ...deps, rules, findings, evaluator }
  // Detectors whose rules are being readied for their first run (see `started`); stop waits for them.
  let warming: Promise<void> = Promise.resolve()
  detectors.lifecycle = {
    // A detector (re)starting is baselined at once, so documents indexed from now on are its
    // own and nothing from before (or from while it was off) is evaluated.
    async started(id, detector) {
      const previous = await loadCheckpoint(deps.store, id)
      const cp = await baseline(
        deps.store,
        id,
        detector.inputs.flatMap((i) => i.detector_input.indices),
        detector.enabled_time,
        deps.now(),
      )
      await saveCheckpoint(deps.store, cp, previous)
      // Its rules are readied meanwhile (not awaited: the request that started it is not held).
      warming = warming
        .then(() => warmDetector(runDeps, id, detector))
        .catch((e) => deps.log.warn('detector rules could not be readied before its first run', { detector: id, error: e as Error }))
    },
    async deleted(id) {
      await deleteCheckpoint(deps.store, id)
    },
  }
  const scheduler = new DetectionScheduler({ ...runDeps, detectors }, options)
  const run = (monitorId: string, caller: Caller | undefined) => executeMonitor({ detectors, scheduler, now: deps.now }, monitorId, caller)
  return {
    routes: rulesetRoutes({ logTypes, rules, detectors, executeMonitor: run }),
    logTypes,
    rules,
    detectors,
    sync: new RulesetService(deps, logTypes, rules, detectors),
    findings,
    evaluator,
    scheduler,
    evaluate: async (req) => evaluateRulesRequest({ store: deps.store, log: deps.log, logTypes }, req, await deps.settings.snapshot()),
    executeMonitor: run,
    retentionHolds: (now = deps.now()) => detectionHolds({ store: deps.store, detectors }, now),
    start: async () => {
      // The detectors index exists once the node is started, not from the clock's first tick on.
      await ensureIndex(deps.store, DETECTORS_INDEX)
      scheduler.start()
    },
    // The evaluator thread outlives the run that the clock's stop waits for.
    stop: async () => {
      await scheduler.stop()
      await warming
      evaluator.stop()
    },
  }
}

export { rulesetRoutes } from './routes'

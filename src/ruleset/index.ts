/**
 * Ruleset Management assembled: log types, rules, detectors, the Content Manager's sync calls,
 * `rules/evaluate`, and the detection runs. Routes are in `./routes`.
 */
import type { Caller, Security } from '../security/caller'
import type { RulesetDeps } from './deps'
import { baseline, deleteCheckpoint, loadCheckpoint, saveCheckpoint } from './detection/checkpoint'
import { FindingsPipeline } from './detection/findings-pipeline'
import { executeMonitor, type MonitorRunResult } from './detection/monitor'
import { DetectionScheduler, type SchedulerOptions } from './detection/scheduler'
import { Detectors } from './detectors'
import { type EvaluateRequest, type EvaluateResult, evaluateRulesRequest } from './evaluate'
import { LogTypes } from './log-types'
import { Rules } from './rules'
import { RulesetService } from './sync'

export interface Ruleset {
  logTypes: LogTypes
  rules: Rules
  detectors: Detectors
  /** The Content Manager's `RulesetSync` (plus detector and space calls). */
  sync: RulesetService
  findings: FindingsPipeline
  scheduler: DetectionScheduler
  /** `rules/evaluate` (logtest detection). */
  evaluate(req: Partial<EvaluateRequest>): Promise<EvaluateResult>
  /** Alerting's monitor `_execute`: runs the detector behind the monitor id now. */
  executeMonitor(monitorId: string, caller: Caller | undefined): Promise<MonitorRunResult>
  /** Starts the detection clock (not started by construction, so tests and tools stay passive). */
  start(): void
  stop(): Promise<void>
}

export function createRuleset(
  deps: RulesetDeps & { security: Pick<Security, 'authorizeIndices'> },
  options: SchedulerOptions = {},
): Ruleset {
  const logTypes = new LogTypes(deps)
  const rules = new Rules(deps, logTypes)
  const detectors = new Detectors(deps, rules)
  const findings = new FindingsPipeline(deps.store, deps.log)
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
    },
    async deleted(id) {
      await deleteCheckpoint(deps.store, id)
    },
  }
  const scheduler = new DetectionScheduler({ ...deps, rules, findings, detectors }, options)
  return {
    logTypes,
    rules,
    detectors,
    sync: new RulesetService(deps, logTypes, rules, detectors),
    findings,
    scheduler,
    evaluate: async (req) => evaluateRulesRequest({ store: deps.store, log: deps.log, logTypes }, req, await deps.settings.snapshot()),
    executeMonitor: (monitorId, caller) => executeMonitor({ detectors, scheduler, now: deps.now }, monitorId, caller),
    start: () => scheduler.start(),
    stop: () => scheduler.stop(),
  }
}

export { rulesetRoutes } from './routes'

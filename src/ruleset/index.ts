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
import { runThreatIntelMonitor, ThreatIntelMonitorClock } from './threat-intel/monitor-run'
import { DetectionScheduler, type SchedulerOptions } from './detection/scheduler'
import { Detectors } from './detectors'
import { DETECTORS_INDEX, ensureIndex } from './indices'
import { type EvaluateRequest, type EvaluateResult, evaluateRulesRequest } from './evaluate'
import { LogTypes } from './log-types'
import { Rules } from './rules'
import type { StoredDetector } from './model'
import { triggerId } from './alerts/raise'
import { rulesetRoutes } from './routes'
import { RulesetService } from './sync'
import { AlertRaiser } from './alerts/raise'
import { alertsRoutes } from './alerts/routes'
import { Alerts } from './alerts/service'
import { CorrelationAlerts } from './alerts/correlation'
import { ALERT_HISTORY } from './alerts/indices'
import { historyRollover } from './history-indices'
import { IOC_FINDINGS_HISTORY } from './threat-intel/ioc-findings'
import { SyncedIocs } from './threat-intel/synced-iocs'
import { threatIntelRoutes } from './threat-intel/routes'
import { UserSources } from './threat-intel/user-sources'
import { previewRoutes } from './preview/routes'
import { RetroHunt } from './threat-intel/retro-hunt'
import { ThreatIntelMonitors } from './threat-intel/monitors'
import type { StartSyncPass } from './threat-intel/sources'
import type { DestinationExists } from './alerts/actions'

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
  alerts: Alerts
  /** The node's IoC index, which the content sync keeps in step (threat intel on events). */
  iocs: SyncedIocs
  /** Searches stored events for the IoCs the sync adds. */
  retroHunt: RetroHunt
  /** How `_refresh` of the built-in threat-intel source starts a content sync pass (set by the composition). */
  contentSync: { pass?: StartSyncPass }
  /** Starts the detection clock (not started by construction, so tests and tools stay passive). */
  start(): Promise<void>
}

/** How alerts reach notifications (absent: alerts are raised and kept, nothing is sent). */
export interface AlertingHooks {
  /** New alerts owe notifications: deliver them now rather than at the next poll. */
  onPending?: () => void
  /** Whether a trigger action's `destination_id` names a channel (detector and threat-intel monitor triggers). */
  destinationExists?: DestinationExists
}

export function createRuleset(
  deps: RulesetDeps & { security: Pick<Security, 'authorizeIndices' | 'documentFilter' | 'hasDocumentFilters' | 'hasClusterPermission'> },
  options: SchedulerOptions = {},
  hooks: AlertingHooks = {},
): Ruleset {
  const logTypes = new LogTypes(deps)
  const rules = new Rules(deps, logTypes)
  const detectors = new Detectors(deps, rules)
  detectors.destinationExists = hooks.destinationExists
  const findings = new FindingsPipeline(deps.store, deps.log)
  const evaluator = new EvaluatorThread(deps.log)
  const alerts = new Alerts(deps, detectors)
  const raiser = new AlertRaiser({ ...deps, onPending: hooks.onPending })
  const iocs = new SyncedIocs(deps.store, deps.log)
  const monitors = new ThreatIntelMonitors({ ...deps, destinationExists: hooks.destinationExists })
  const threatIntel = { iocs, iocFieldsOfLogType: async (name: string) => (await logTypes.byName(name))?.ioc_fields }
  const runDeps = { ...deps, rules, findings, evaluator, alerts: raiser, threatIntel }
  const retroHunt = new RetroHunt({ ...deps, iocFieldsOfLogType: threatIntel.iocFieldsOfLogType, alerts: raiser })
  iocs.onSynced = (ids) => retroHunt.synced(ids)
  const warming = watchDetectorLifecycle({ deps, detectors, alerts, runDeps })
  // The peer's history jobs: alert history, and IoC findings (each every its own `rollover_period`).
  const rollovers = [historyRollover(deps, ALERT_HISTORY(deps.store)), historyRollover(deps, IOC_FINDINGS_HISTORY(deps.store))]
  const scheduler = new DetectionScheduler({ ...runDeps, detectors }, options)
  const monitorRuns = { ...deps, iocs, monitors, alerts: raiser }
  const monitorClock = new ThreatIntelMonitorClock(monitorRuns)
  const run = monitorExecutor(monitorRuns, monitors, { detectors, scheduler, now: deps.now })
  const contentSync: Ruleset['contentSync'] = {}
  return {
    routes: [
      ...rulesetRoutes({ logTypes, rules, detectors, executeMonitor: run }),
      ...alertsRoutes(alerts, new CorrelationAlerts(deps)),
      ...previewRoutes({ ...deps, rules, logTypes, iocs }),
      ...threatIntelRoutes({ ...deps, iocs, uploads: new UserSources({ ...deps, iocs }), monitors, contentSync }),
    ],
    contentSync,
    alerts,
    iocs,
    retroHunt,
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
      retroHunt.start()
      monitorClock.start()
      for (const r of rollovers) r.start()
    },
    // The evaluator thread outlives the run that the clock's stop waits for.
    stop: async () => {
      for (const r of rollovers) r.stop()
      await scheduler.stop()
      await retroHunt.stop()
      await monitorClock.stop()
      await warming()
      evaluator.stop()
    },
  }
}

/**
 * Baselines a (re)started detector and readies its rules, and retires the alerts of a removed
 * detector or trigger. Answers a wait for the rules being readied (stop waits for them).
 */
function watchDetectorLifecycle(o: {
  deps: RulesetDeps
  detectors: Detectors
  alerts: Alerts
  runDeps: Parameters<typeof warmDetector>[0]
}): () => Promise<void> {
  const { deps, detectors, alerts, runDeps } = o
  // Alerts of a removed detector or trigger are retired in the background: the request is not held.
  const retire = (id: string, detector: StoredDetector, keep: Set<string>) =>
    void alerts
      .retireOrphans(id, detector, keep)
      .catch((e) => deps.log.warn('alerts of a removed detector or trigger could not be retired', { detector: id, error: e as Error }))
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
    async deleted(id, detector) {
      await deleteCheckpoint(deps.store, id)
      if (detector) retire(id, detector, new Set())
    },
    async updated(id, before, after) {
      const keep = new Set(after.triggers.map(triggerId))
      if (before.triggers.some((t) => !keep.has(triggerId(t)))) retire(id, before, keep)
    },
  }
  return () => warming
}

/** Alerting's `_execute`: runs the threat-intel monitor of that id, else the detector behind it. */
function monitorExecutor(
  monitorRuns: Parameters<typeof runThreatIntelMonitor>[0],
  monitors: ThreatIntelMonitors,
  detection: Parameters<typeof executeMonitor>[0],
): (monitorId: string, caller: Caller | undefined) => Promise<MonitorRunResult> {
  return async (monitorId, caller) => {
    const monitor = await monitors.byId(monitorId)
    if (!monitor) return executeMonitor(detection, monitorId, caller)
    const start = detection.now()
    const r = await runThreatIntelMonitor(monitorRuns, monitorId, monitor)
    const found: Record<string, string[]> = {}
    for (const f of r.findings) found[f.ioc_type] = [...(found[f.ioc_type] ?? []), ...f.related_doc_ids]
    return {
      monitor_name: monitor.name,
      period_start: start,
      period_end: detection.now(),
      error: null,
      input_results: { results: [found], error: null },
      trigger_results: {},
    }
  }
}

export { rulesetRoutes } from './routes'

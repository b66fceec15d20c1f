/**
 * Alerting monitor compatibility (reference 5.5): the reference backs each detector with a
 * document-level monitor, and clients (the reference's own end-to-end suite) run a detector at
 * once with `POST /_plugins/_alerting/monitors/<monitor id>/_execute`. Here the monitor id names
 * the detector (`detector.monitor_id[]`); executing it is a detector run now, under the same
 * lease as scheduled runs, answered in the shape of Alerting's execute API.
 */
import type { Caller } from '../../http/caller'
import type { Detectors } from '../detectors'
import type { DetectionScheduler } from './scheduler'

/** Matched documents listed per rule in an execute answer (the run itself is never cut short). */
export const EXECUTE_MAX_REPORTED_DOCS = 10_000

export interface MonitorRunResult {
  monitor_name: string
  period_start: number
  period_end: number
  error: string | null
  /** Doc-level monitors: one map, query (rule) id -> `<doc id>|<index>` of the documents it matched. */
  input_results: { results: Array<Record<string, string[]>>; error: string | null }
  trigger_results: Record<string, unknown>
}

export async function executeMonitor(
  deps: { detectors: Detectors; scheduler: DetectionScheduler; now: () => number },
  monitorId: string,
  caller: Caller | undefined,
): Promise<MonitorRunResult> {
  const { id, detector } = await deps.detectors.byMonitorId(monitorId, caller)
  const matched: Record<string, string[]> = {}
  let reported = 0
  const start = deps.now()
  const answer = (error: string | null): MonitorRunResult => ({
    monitor_name: detector.name,
    period_start: start,
    period_end: deps.now(),
    error,
    input_results: { results: [matched], error },
    trigger_results: {},
  })
  let outcome
  try {
    outcome = await deps.scheduler.runLeased(id, {
      onMatch(ruleId, docId, index) {
        if (reported >= EXECUTE_MAX_REPORTED_DOCS) return
        reported++
        ;(matched[ruleId] ??= []).push(`${docId}|${index}`)
      },
    })
  } catch (e) {
    return answer((e as Error).message)
  }
  if (!outcome) return answer(`detector [${id}] is being run by another node`)
  switch (outcome.status) {
    case 'ran':
    case 'baselined':
      return answer(outcome.status === 'ran' && outcome.error ? outcome.error : null)
    case 'stopped':
      return answer('the node is stopping: the run ended early, the rest is evaluated by the next run')
    case 'disabled':
      return answer(`detector [${id}] is disabled`)
    default:
      return answer(`detector [${id}] run ${outcome.status}`)
  }
}

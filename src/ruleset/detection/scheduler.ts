/**
 * Runs every enabled detector on its interval. One croner clock per node ticks every few
 * seconds; a detector is due when its interval has passed since `last_run_at` in its (shared)
 * checkpoint, and a lease document per detector makes sure one node runs it. Detectors created,
 * changed or disabled on any node are seen at the next tick, since the list is read from the
 * Store every time.
 */
import { Cron } from 'croner'
import { claimTurn } from '../../locks/single-runner'
import type { Detectors } from '../detectors'
import { DETECTOR_LOCKS_INDEX } from '../indices'
import type { Schedule, StoredDetector } from '../model'
import { loadCheckpoint, saveCheckpoint } from './checkpoint'
import { type RunControl, type RunDeps, type RunOutcome, runDetector } from './run'
import { ALERT_SETTINGS } from '../alerts/indices'

const UNIT_MILLIS = { MINUTES: 60_000, HOURS: 3_600_000, DAYS: 86_400_000 } as const

export const intervalMillis = (s: Schedule) => s.period.interval * UNIT_MILLIS[s.period.unit]

export interface SchedulerOptions {
  /** Seconds between ticks (default 10). */
  tickSeconds?: number
  /** A run that outlives this is assumed dead and its lease may be taken over (default 15 min). */
  staleMillis?: number
}

/** What the scheduler needs besides a run's collaborators. */
export interface SchedulerDeps extends RunDeps {
  detectors: Detectors
  /** The store is this node's alone (embedded): a run lease from before this process is a dead one's. */
  nodeLocalStore?: boolean
}

export class DetectionScheduler {
  private cron?: Cron
  private ticking?: Promise<void>
  private stopping = false
  /** When this scheduler (this process) came up: see `SchedulerDeps.nodeLocalStore`. */
  private readonly since: number

  constructor(
    private readonly deps: SchedulerDeps,
    private readonly options: SchedulerOptions = {},
  ) {
    this.since = deps.now()
  }

  start(): void {
    const every = this.options.tickSeconds ?? 10
    this.cron = new Cron(
      `*/${every} * * * * *`,
      { protect: true, catch: (e) => this.deps.log.error('detection tick failed', { error: e as Error }) },
      () => this.tick(),
    )
  }

  /** Stops the clock; a run in progress ends at its next batch boundary with its checkpoint saved. */
  async stop(): Promise<void> {
    this.stopping = true
    this.cron?.stop()
    await this.ticking
    this.deps.log.info('detection clock stopped')
  }

  /** Runs every due detector once (what each clock tick does). */
  tick(): Promise<void> {
    this.ticking = (async () => {
      for (const { id, detector } of await this.deps.detectors.enabled()) {
        if (this.stopping) return
        try {
          if (await this.due(id, detector)) await this.runLeased(id)
        } catch (e) {
          this.deps.log.error('detector run failed', { detector: id, error: e as Error })
          await this.noteError(id, e as Error)
        }
      }
    })()
    return this.ticking
  }

  /** Runs one detector now under its lease; undefined when another node holds it. */
  async runLeased(id: string, control: Omit<RunControl, 'stopping'> = {}): Promise<RunOutcome | undefined> {
    const turn = await claimTurn(this.deps, {
      index: DETECTOR_LOCKS_INDEX,
      id: `run-${id}`,
      staleMillis: this.options.staleMillis ?? 15 * 60_000,
      // A node killed during a run leaves its lease: on a store of its own, the restarted node
      // takes it over at once instead of leaving the detector idle for the stale age.
      ...(this.deps.nodeLocalStore ? { staleBefore: this.since } : {}),
    })
    if (!turn) return undefined
    if (turn.stolen) this.deps.log.info('detector run lease taken over: its holder stopped renewing it', { detector: id })
    return turn.run(async () => {
      // Re-read under the lease: it may have been disabled or deleted since the list was taken.
      const detector = await this.deps.detectors.stored(id)
      let outcome: RunOutcome
      try {
        outcome = await runDetector(this.deps, id, detector, { ...control, stopping: () => this.stopping })
      } catch (e) {
        // The detector's ERROR alert says so (best effort: the store may be what failed).
        if (detector)
          await this.deps.alerts
            ?.runFailed(id, detector, (e as Error).message)
            .catch((err) => this.deps.log.warn('ERROR alert of a failed run not written', { detector: id, error: err as Error }))
        throw e
      }
      if (detector && (outcome.status === 'ran' || outcome.status === 'stopped'))
        await this.deps.alerts?.runSucceeded(id, detector, (await this.deps.settings.snapshot()).bool(ALERT_SETTINGS.historyEnabled))
      if (
        (outcome.status === 'ran' || outcome.status === 'stopped') &&
        (outcome.findings > 0 || outcome.shed > 0 || outcome.status === 'stopped')
      )
        this.deps.log.info('detector run', {
          detector: id,
          status: outcome.status,
          documents: outcome.documents,
          findings: outcome.findings,
          shed: outcome.shed,
        })
      return outcome
    })
  }

  /**
   * Due one interval after the last run started; after a run that outlasted its interval, one
   * interval after it ended: the missed slot is skipped (as an Alerting monitor skips overlapping
   * executions) instead of being followed at once by an empty run that would replace its status.
   */
  private async due(id: string, detector: StoredDetector): Promise<boolean> {
    const cp = await loadCheckpoint(this.deps.store, id)
    if (!cp || cp.checkpoint.epoch !== detector.enabled_time) return true
    const interval = intervalMillis(detector.schedule)
    const started = cp.checkpoint.last_run_at
    const finished = cp.checkpoint.last_run?.finished_at ?? started
    const from = finished - started > interval ? finished : started
    return this.deps.now() - from >= interval
  }

  /** A failed run's error goes into the detector's status (best effort: the store may be what failed). */
  private async noteError(id: string, e: Error): Promise<void> {
    try {
      const cp = await loadCheckpoint(this.deps.store, id)
      if (cp) await saveCheckpoint(this.deps.store, { ...cp.checkpoint, last_error: { at: this.deps.now(), message: e.message } }, cp)
    } catch {
      // already logged above
    }
  }
}

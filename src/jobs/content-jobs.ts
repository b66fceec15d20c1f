// The Content Manager's two periodic jobs: the catalog sync (every `catalog.sync_interval`
// minutes; a run is refused, with no CTI request, while `update_on_schedule` is false) and the
// telemetry ping (first ping as soon as the job is registered, then daily, while
// `telemetry.enabled`). Dynamic settings are polled; a change re-evaluates the job documents and
// the schedules on this node.
import { Cron } from 'croner'
import type { ClusterSettings, SettingsSnapshot } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import type { Journal } from '../journal/journal'
import type { Store } from '../store/port'
import { CATALOG_SYNC_JOB_ID, reconcileJob, removeJob, syncJobDocument, TELEMETRY_JOB_ID, telemetryJobDocument } from './documents'
import { registerWithRetry } from './registration'

const DAY_SECONDS = 86_400

export interface ContentJobsDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  journal: Journal
  /** Runs one scheduled sync pass (busy/locked answers are fine: the next run comes). */
  runSync: () => Promise<unknown>
  /** Sends one telemetry ping. */
  ping: () => Promise<void>
  sleep?: (ms: number) => Promise<void>
  /** How often dynamic settings are looked at (default 2 s). */
  pollMillis?: number
}

interface Watched {
  onSchedule: boolean
  interval: number
  telemetry: boolean
}

const watched = (s: SettingsSnapshot): Watched => ({
  onSchedule: s.bool('plugins.content_manager.catalog.update_on_schedule'),
  interval: s.num('plugins.content_manager.catalog.sync_interval'),
  telemetry: s.bool('plugins.content_manager.telemetry.enabled'),
})

export class ContentJobs {
  private syncCron?: Cron
  private pingCron?: Cron
  private poller?: Timer
  private last?: Watched
  private stopped = false
  private evaluating: Promise<void> = Promise.resolve()

  constructor(private readonly deps: ContentJobsDeps) {}

  /** Registers the jobs (with retries) and starts watching the dynamic settings. */
  async start(): Promise<void> {
    await this.evaluate()
    this.poller = setInterval(() => void this.evaluate(), this.deps.pollMillis ?? 2000)
  }

  stop(): void {
    this.stopped = true
    clearInterval(this.poller)
    this.syncCron?.stop()
    this.pingCron?.stop()
  }

  /** Re-reads the settings and applies what changed; serialised so polls never overlap. */
  evaluate(): Promise<void> {
    this.evaluating = this.evaluating
      .then(() => this.apply())
      .catch((e) => this.deps.log.error('job settings could not be applied', { error: e }))
    return this.evaluating
  }

  /** When the next scheduled sync fires (undefined when not scheduled). */
  nextSyncRun(): Date | undefined {
    return this.syncCron?.nextRun() ?? undefined
  }

  private async apply(): Promise<void> {
    if (this.stopped) return
    const s = await this.deps.settings.snapshot()
    const now = watched(s)
    const before = this.last
    const retry = {
      maxRetries: s.num('plugins.content_manager.job_schedule.max_retries'),
      backoffSeconds: s.num('plugins.content_manager.job_schedule.retry_backoff_seconds'),
      log: this.deps.log,
      sleep: this.deps.sleep ?? ((ms: number) => Bun.sleep(ms)),
    }
    if (!before || before.onSchedule !== now.onSchedule || before.interval !== now.interval) {
      await registerWithRetry(
        CATALOG_SYNC_JOB_ID,
        () =>
          reconcileJob(this.deps.store, this.deps.log, CATALOG_SYNC_JOB_ID, syncJobDocument(now.interval, now.onSchedule, this.deps.now())),
        retry,
      )
      if (!before || before.interval !== now.interval) this.scheduleSync(now.interval)
    }
    if (!before || before.telemetry !== now.telemetry) {
      if (now.telemetry) {
        const ok = await registerWithRetry(
          TELEMETRY_JOB_ID,
          () => reconcileJob(this.deps.store, this.deps.log, TELEMETRY_JOB_ID, telemetryJobDocument(this.deps.now())),
          retry,
        )
        if (ok !== undefined) this.startPing()
      } else {
        this.pingCron?.stop()
        this.pingCron = undefined
        if (before)
          await removeJob(this.deps.store, TELEMETRY_JOB_ID).catch((e) =>
            this.deps.log.warn('telemetry job document not removed', { error: e }),
          )
      }
    }
    this.last = now
  }

  private scheduleSync(minutes: number): void {
    this.syncCron?.stop()
    if (this.stopped) return
    this.syncCron = this.every(minutes * 60, 'scheduled content sync', () => this.scheduledSync())
  }

  /** One firing of the sync job: the setting decides, whatever the stored document says. */
  async scheduledSync(): Promise<void> {
    const s = await this.deps.settings.snapshot()
    if (!s.bool('plugins.content_manager.catalog.update_on_schedule')) {
      this.deps.log.info('scheduled content sync refused: plugins.content_manager.catalog.update_on_schedule is false', {})
      this.deps.journal.record('job.refused', CATALOG_SYNC_JOB_ID, { reason: 'update_on_schedule=false' })
      return
    }
    this.deps.journal.record('job.run', CATALOG_SYNC_JOB_ID, {})
    await this.deps.runSync()
  }

  private startPing(): void {
    this.pingCron?.stop()
    if (this.stopped) return
    void this.pingOnce()
    this.pingCron = this.every(DAY_SECONDS, 'telemetry ping', () => this.pingOnce())
  }

  /**
   * A job run every `seconds`, first that long from now, one run at a time. A failed run is logged:
   * without `catch` croner leaves its rejection unhandled, which ends the process (a platform node
   * lost while settings are read, say).
   */
  private every(seconds: number, what: string, run: () => Promise<void>): Cron {
    return new Cron(
      '* * * * * *',
      {
        interval: seconds,
        startAt: new Date(this.deps.now() + seconds * 1000),
        protect: true,
        catch: (e) => this.deps.log.warn(`${what} failed`, { error: e as Error }),
      },
      run,
    )
  }

  private async pingOnce(): Promise<void> {
    try {
      const s = await this.deps.settings.snapshot()
      if (!s.bool('plugins.content_manager.telemetry.enabled')) return
      await this.deps.ping()
      this.deps.journal.record('job.run', TELEMETRY_JOB_ID, {})
    } catch (e) {
      this.deps.log.warn('telemetry ping failed', { error: (e as Error).message })
    }
  }
}

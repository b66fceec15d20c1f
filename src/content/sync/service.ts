// A sync pass over the three consumers (reference 2.1): one pass per node at a time, one per
// cluster (the `catalog-sync` lease, renewed while the pass runs), after the Setup marker says
// ready, consumers in order with a failure of one not stopping the others, and one immediate retry
// when a consumer asks for it.
import type { IocSink } from '../../ruleset/threat-intel/synced-iocs'
import type { ClusterSettings } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import type { Journal } from '../../journal/journal'
import type { Lease } from '../../locks/lease'
import { claimTurn, type Turn } from '../../locks/single-runner'
import { resourceLockWait } from '../../locks/wait'
import { waitForSetupReady } from '../../setup/status'
import type { Store } from '../../store/port'
import { CtiClient } from '../cti/client'
import type { CtiCredentials } from '../cti/credentials'
import { isCtiError } from '../cti/errors'
import { sleep, type Sleep } from '../cti/sleep'
import type { EngineClient } from '../engine'
import { RESOURCE_LOCKS_INDEX } from '../indices'
import { ContentRepository } from '../repository'
import type { SpaceHashResult } from '../space-hash'
import type { Space } from '../spaces'
import { bulkLimits } from './bulk-writer'
import { CONSUMER_KINDS, CONSUMERS, type ConsumerKind } from './consumers'
import type { PassContext } from './context'
import { LocalSnapshots } from './local-snapshots'
import { runConsumer, type ConsumerOutcome } from './pass'
import type { SyncRuleset } from './ruleset-post-sync'
import { ConsumerStates, type LastPass } from './state'

export const SYNC_LOCK_ID = 'catalog-sync'

export type Trigger = 'start' | 'schedule' | 'demand' | 'registration' | 'test'

export interface ContentSyncDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  journal: Journal
  credentials: CtiCredentials
  engine: EngineClient
  ruleset: SyncRuleset
  recomputeSpaces(spaces: Space[]): Promise<SpaceHashResult[]>
  clusterUuid: () => Promise<string>
  snapshotsDir: string
  iocExportPath: string
  /** The node's in-memory IoC index (threat intel on events). */
  iocs?: IocSink
  /** Tests pass a sleep that records waits; production sleeps for real. */
  sleep?: Sleep
  /** This node's setup bootstrap (SetupWaitOptions.settled): a pass waiting for the marker wakes when it ends. */
  setupSettled?: Promise<unknown>
  /** Offer the packaged sample content to consumers that never loaded anything (production: true). */
  samples?: boolean
  /** Runs after every pass, whatever its outcome (the Engine policy check of issue 15 item 8). */
  afterPass?: () => Promise<void>
}

export interface PassReport {
  trigger: Trigger
  /** `lease_lost`: another node took the sync lock over (this node's renewals were starved); the pass stopped. */
  outcome: 'done' | 'setup_not_ready' | 'aborted' | 'lease_lost'
  consumers: Partial<
    Record<
      ConsumerKind,
      ConsumerOutcome | { kind: ConsumerKind; status: 'failed'; error: string; deferred?: boolean; unreachable?: boolean }
    >
  >
  retried: boolean
}

/** True when a consumer of the pass could not reach its CTI feed (no answer, time-out, 5xx). */
export function feedUnreachable(report: PassReport): boolean {
  return Object.values(report.consumers).some(
    (c) => c !== undefined && (('reason' in c && c.reason === 'feed_unreachable') || ('unreachable' in c && c.unreachable === true)),
  )
}

export type StartResult = 'started' | 'busy' | 'locked'

export class ContentSync {
  private current?: Promise<PassReport>
  private readonly stopping = new AbortController()
  private readonly states: ConsumerStates
  private readonly repo: ContentRepository
  private readonly local: LocalSnapshots

  constructor(private readonly deps: ContentSyncDeps) {
    this.states = new ConsumerStates(deps.store)
    this.repo = new ContentRepository(deps.store)
    this.local = new LocalSnapshots(deps.snapshotsDir, deps.samples ?? false)
    // One ContentSync per process: what an earlier, killed process left half-written goes now.
    try {
      const removed = this.local.sweep(deps.iocExportPath)
      if (removed.length > 0) deps.log.info('temporary files of an interrupted sync removed', { files: removed })
    } catch (e) {
      deps.log.warn('temporary files of an interrupted sync could not be removed', { error: (e as Error).message })
    }
  }

  get running(): boolean {
    return this.current !== undefined
  }

  /** Resolves when the pass in progress (if any) has finished. */
  async idle(): Promise<void> {
    await this.current?.catch(() => undefined)
  }

  /**
   * Starts a pass in the background. `busy` when one runs on this node, `locked` when another node
   * holds the cluster-wide sync lock; the pass itself is not awaited.
   */
  async start(trigger: Trigger): Promise<StartResult> {
    const r = await this.begin(trigger)
    if (typeof r === 'string') return r
    r.pass.catch(() => undefined)
    return 'started'
  }

  /** Runs a pass to its end (scheduled runs and tests). */
  async run(trigger: Trigger): Promise<PassReport | 'busy' | 'locked'> {
    const r = await this.begin(trigger)
    return typeof r === 'string' ? r : r.pass
  }

  /** Aborts the pass in progress (shutdown) and waits for it to unwind. */
  async stop(): Promise<void> {
    this.stopping.abort(new Error('svc-ext is shutting down'))
    await this.idle()
  }

  /**
   * Deletes a sync lock left by a killed process (only for a store no other live process uses),
   * never this node's own: a pass triggered on demand before start-up work ran may hold it, and
   * the node-local permit is held while deleting, so no pass begins meanwhile.
   */
  async releaseDeadLock(): Promise<'released' | 'none' | 'ours'> {
    if (this.current) return 'ours'
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    this.current = gate.then(() => ({ trigger: 'start' as Trigger, outcome: 'aborted' as const, consumers: {}, retried: false }))
    try {
      const r = await this.deps.store.delete({ index: RESOURCE_LOCKS_INDEX, id: SYNC_LOCK_ID, refresh: true })
      return r.result === 'deleted' ? 'released' : 'none'
    } catch (e) {
      if ((e as { status?: number }).status === 404) return 'none'
      throw e
    } finally {
      this.current = undefined
      release()
    }
  }

  /** Starts a pass and hands back its promise (start-up retries look at its report). */
  async begin(trigger: Trigger): Promise<{ pass: Promise<PassReport> } | 'busy' | 'locked'> {
    if (this.current || this.stopping.signal.aborted) return 'busy'
    // Claim the node-local permit before any await, so two triggers cannot both pass this point.
    let release!: () => void
    const gate = new Promise<void>((r) => (release = r))
    this.current = gate.then(() => ({ trigger, outcome: 'aborted' as const, consumers: {}, retried: false }))
    let turn: Turn | undefined
    try {
      const s = await this.deps.settings.snapshot()
      const { log } = this.deps
      turn = await claimTurn(
        {
          store: this.deps.store,
          now: this.deps.now,
          onEvent: (e) => {
            if (e.kind === 'lost') log.warn('sync lock was taken over by another node; no longer renewing it', {})
          },
          onReleaseError: (e) => log.warn('sync lock could not be released', { error: e }),
        },
        { index: RESOURCE_LOCKS_INDEX, id: SYNC_LOCK_ID, staleMillis: resourceLockWait(s).staleMillis },
      )
    } catch (e) {
      this.deps.log.error('sync lock could not be taken', { error: e })
    }
    if (!turn) {
      this.current = undefined
      release()
      this.deps.log.info('a content sync runs on another node; this pass does not start', { trigger })
      return 'locked'
    }
    // Renewed every stale/3 while the pass runs; the pass checks it before each consumer, since a
    // long synchronous stretch can starve the timer and let another node take the lock over.
    const pass = turn
      .run((lease) => this.pass(trigger, lease))
      .finally(() => {
        this.current = undefined
      })
    this.current = pass
    release()
    return { pass }
  }

  private async pass(trigger: Trigger, lease: Lease): Promise<PassReport> {
    const { log, journal } = this.deps
    const report: PassReport = { trigger, outcome: 'done', consumers: {}, retried: false }
    const started = this.deps.now()
    try {
      const s = await this.deps.settings.snapshot()
      const setup = await waitForSetupReady(
        { store: this.deps.store, log },
        {
          retries: s.num('plugins.content_manager.setup_wait.max_retries'),
          baseSeconds: s.num('plugins.content_manager.setup_wait.backoff_base_seconds'),
          sleep: (ms) => (this.deps.sleep ?? sleep)(ms, this.stopping.signal),
          settled: this.deps.setupSettled,
        },
      )
      if (setup !== 'ready') {
        log.warn('content sync skipped: setup is not ready', { trigger, setup })
        report.outcome = 'setup_not_ready'
        return report
      }
      log.info('content sync started', { trigger })
      let retry = await this.consumers(report, lease)
      if (retry && !this.stopping.signal.aborted && report.outcome !== 'lease_lost') {
        log.info('content sync retrying once', { trigger })
        report.retried = true
        retry = await this.consumers(report, lease)
      }
      if (this.stopping.signal.aborted) report.outcome = 'aborted'
      return report
    } finally {
      await this.deps.afterPass?.().catch((e) => log.warn('after-sync work failed', { error: (e as Error).message }))
      journal.record('sync.pass', trigger, {
        outcome: report.outcome,
        millis: this.deps.now() - started,
        consumers: Object.fromEntries(
          Object.entries(report.consumers).map(([k, v]) => [
            k,
            { status: v?.status, updated: 'updated' in (v ?? {}) ? (v as ConsumerOutcome).updated : false },
          ]),
        ),
      })
    }
  }

  /** One round over the consumers; true when one of them asks for the retry. */
  private async consumers(report: PassReport, lease: Lease): Promise<boolean> {
    const s = await this.deps.settings.snapshot()
    const ctx: PassContext = {
      store: this.deps.store,
      repo: this.repo,
      settings: s,
      log: this.deps.log,
      now: this.deps.now,
      cti: new CtiClient(s, {
        credentials: this.deps.credentials,
        log: this.deps.log,
        clusterUuid: await this.deps.clusterUuid(),
        sleep: this.deps.sleep,
        now: this.deps.now,
      }),
      credentials: this.deps.credentials,
      states: this.states,
      local: this.local,
      ruleset: this.deps.ruleset,
      engine: this.deps.engine,
      recomputeSpaces: this.deps.recomputeSpaces,
      iocExportPath: this.deps.iocExportPath,
      iocs: this.deps.iocs,
      signal: this.stopping.signal,
      sleep: this.deps.sleep,
      limits: bulkLimits(s),
    }
    let retry = false
    for (const kind of CONSUMER_KINDS) {
      if (this.stopping.signal.aborted) break
      if (!(await lease.stillMine())) {
        this.deps.log.warn('content sync stopped: another node holds the sync lock now', { consumer: kind })
        report.outcome = 'lease_lost'
        break
      }
      const def = CONSUMERS[kind]
      const started = this.deps.now()
      const lastPass = (outcome: LastPass['outcome'], updated: boolean, error?: string): LastPass => ({
        outcome,
        started_at: new Date(started).toISOString(),
        finished_at: new Date(this.deps.now()).toISOString(),
        duration_millis: Math.max(0, this.deps.now() - started),
        updated,
        ...(error ? { error } : {}),
      })
      try {
        const o = await runConsumer(ctx, def)
        report.consumers[kind] = o
        retry ||= o.retry
        this.deps.log.info('consumer synchronised', {
          consumer: kind,
          updated: o.updated,
          local_offset: o.localOffset,
          remote_offset: o.remoteOffset,
          from: o.loadedFrom,
          millis: this.deps.now() - started,
        })
        await this.states
          .patch(def, { last_pass: lastPass('ready', o.updated) })
          .catch((e) => this.deps.log.warn('consumer pass outcome could not be recorded', { consumer: kind, error: e }))
      } catch (e) {
        const deferred = isCtiError(e, 'rate_limited')
        const aborted = this.stopping.signal.aborted
        const unreachable =
          isCtiError(e, 'unreachable') ||
          isCtiError(e, 'timeout') ||
          (isCtiError(e, 'http') && ((e as { status?: number }).status ?? 0) >= 500)
        report.consumers[kind] = { kind, status: 'failed', error: (e as Error).message, deferred, unreachable }
        this.states.endProgress(def)
        if (aborted) break
        // A rate limit that outlived its retries waits for the next scheduled run (spec background 5).
        if (!deferred) retry = true
        this.deps.log.error(deferred ? 'consumer sync deferred: CTI rate limit' : 'consumer sync failed', {
          consumer: kind,
          error: (e as Error).message,
        })
        try {
          await this.states.patch(def, {
            status: 'failed',
            last_pass: lastPass(deferred ? 'deferred' : 'failed', false, (e as Error).message.slice(0, 500)),
          })
        } catch (pe) {
          this.deps.log.error('consumer status could not be set to failed', { consumer: kind, error: pe })
        }
      }
    }
    return retry
  }
}

// The catalog sync assembled for the composition root: credentials, the sync service, the two
// periodic jobs and the routes (update, subscription, version check). `start()` runs after Setup
// reports ready; `stop()` aborts a running pass and stops the schedules.
import type { IocSink } from '../../ruleset/threat-intel/synced-iocs'
import { dirname, join } from 'node:path'
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { Deps } from '../../deps'
import { ContentJobs } from '../../jobs/content-jobs'
import type { PluginRoute } from '../../http/route'
import { waitForSetupReady } from '../../setup/status'
import { CtiClient } from '../cti/client'
import { CtiCredentials } from '../cti/credentials'
import type { Sleep } from '../cti/sleep'
import type { ContentManager } from '../manager'
import { subscriptionRoutes } from '../subscription/routes'
import { versionCheckRoutes } from '../version/routes'
import type { SyncRuleset } from './ruleset-post-sync'
import { updateRoutes } from './routes'
import { ContentSync, feedUnreachable, type StartResult, type Trigger } from './service'

/** A registration that finds a pass running asks again this often until its own pass starts (reference 7.8). */
const REGISTRATION_RETRY_MS = 30_000
/**
 * A start-up pass that cannot reach the CTI API tries again after a random wait ("full jitter")
 * below a bound that doubles from 5 s to at most 60 s, until a pass reaches it or the scheduled
 * runs take over (`catalog.sync_interval`), instead of spending its retries at once and then
 * waiting an hour (issue 15, item 6).
 */
export const START_RETRY = { firstMillis: 5_000, maxMillis: 60_000 }

/**
 * In a multi-node deployment, how often each node compares its Engine's loaded standard policy
 * with the stored standard hash (one document read), so a sync run by another node reaches this
 * node's Engine too (issue 15 item 8).
 */
export const ENGINE_CHECK_MILLIS = 60_000

export function startRetryDelay(attempt: number, random = Math.random): number {
  const bound = Math.min(START_RETRY.maxMillis, START_RETRY.firstMillis * 2 ** attempt)
  return Math.max(1000, Math.round(random() * bound))
}

export interface ContentSyncOptions {
  /** Packaged and stable snapshots; default `<path.data>/cti-snapshots`. */
  snapshotsDir?: string
  /** IoC export for the Engine; default `<engine dir>/data/iocs.ndjson` next to the Engine socket's directory. */
  iocExportPath?: string
  pollMillis?: number
  sleep?: Sleep
  /** The packaged sample content for consumers that never loaded anything (default true). */
  samples?: boolean
  /** Start-up retry waits (tests shorten them). */
  startRetryDelay?: (attempt: number) => number
  /** The node's in-memory IoC index, told of every IoC change the sync writes. */
  iocs?: IocSink
  /** This node's setup bootstrap: passes asked for before it ends wake when it does. */
  setupSettled?: Promise<unknown>
}

export interface ContentSyncModule {
  routes: PluginRoute[]
  sync: ContentSync
  jobs: ContentJobs
  credentials: CtiCredentials
  /** Registers the jobs and, when `catalog.update_on_start`, starts the first pass (in the background). */
  start(): Promise<void>
  stop(): Promise<void>
}

export function createContentSync(
  deps: Deps,
  content: ContentManager,
  ruleset: SyncRuleset,
  opts: ContentSyncOptions = {},
): ContentSyncModule {
  return new SyncModule(deps, content, ruleset, opts)
}

class SyncModule implements ContentSyncModule {
  readonly routes: PluginRoute[]
  readonly sync: ContentSync
  readonly jobs: ContentJobs
  readonly credentials: CtiCredentials
  private readonly timers = new Set<Timer>()
  private stopped = false
  private readonly uuid: () => Promise<string>

  constructor(
    private readonly deps: Deps,
    private readonly content: ContentManager,
    ruleset: SyncRuleset,
    private readonly opts: ContentSyncOptions,
  ) {
    const node = deps.node.values
    const uuid = (this.uuid = () => deps.store.clusterUuid())
    const credentials = (this.credentials = new CtiCredentials(deps.store, deps.log, deps.now))
    const socket = String(node.get('plugins.content_manager.engine.socket_path'))
    this.sync = new ContentSync({
      afterPass: () => this.checkEngine(),
      samples: opts.samples ?? true,
      store: deps.store,
      settings: deps.settings,
      log: deps.log,
      now: deps.now,
      journal: deps.journal,
      credentials,
      engine: content.engine,
      ruleset,
      recomputeSpaces: (spaces) => content.recomputeSpaces(spaces),
      clusterUuid: uuid,
      snapshotsDir: opts.snapshotsDir ?? join(deps.dataDir, 'cti-snapshots'),
      iocExportPath: opts.iocExportPath ?? join(dirname(dirname(socket)), 'data', 'iocs.ndjson'),
      sleep: opts.sleep,
      iocs: opts.iocs,
      setupSettled: opts.setupSettled,
    })
    this.jobs = this.createJobs()
    this.routes = [
      ...updateRoutes({ settings: deps.settings, start: () => this.startPass('demand') }),
      ...subscriptionRoutes({
        settings: deps.settings,
        log: deps.log,
        credentials,
        clusterUuid: uuid,
        onRegistered: () => this.onRegistered(),
      }),
      ...versionCheckRoutes({ settings: deps.settings, log: deps.log, credentials, clusterUuid: uuid, now: deps.now }),
    ]
  }

  private createJobs(): ContentJobs {
    const { deps, opts, sync, credentials } = this
    return new ContentJobs({
      store: deps.store,
      settings: deps.settings,
      log: deps.log,
      now: deps.now,
      journal: deps.journal,
      pollMillis: opts.pollMillis,
      runSync: async () => {
        const r = await sync.run('schedule')
        if (typeof r === 'string') deps.log.info('scheduled content sync not started', { reason: r })
      },
      ping: async () => {
        const s = await deps.settings.snapshot()
        const cti = new CtiClient(s, { credentials, log: deps.log, clusterUuid: await this.uuid() })
        const r = await cti.ping()
        deps.log.info('telemetry ping answered', { status: r.status })
      },
    })
  }

  /** Every node loads the stored standard policy into its own Engine when they differ. */
  private async checkEngine(): Promise<void> {
    const r = await this.content.ensureEngineLoaded('standard')
    if (r === 'loaded') this.deps.log.info("standard policy loaded into this node's Engine", {})
  }

  private later(ms: number, fn: () => void): void {
    if (this.stopped) return
    const t = setTimeout(() => {
      this.timers.delete(t)
      fn()
    }, ms)
    this.timers.add(t)
  }

  private startPass(trigger: Trigger): Promise<StartResult> {
    return this.sync.start(trigger)
  }

  private onRegistered(): void {
    const attempt = async (): Promise<void> => {
      if (this.stopped) return
      const r = await this.startPass('registration')
      // A pass of this node: start right after it. Another node's: ask again every 30 s.
      if (r === 'busy') await this.sync.idle().then(attempt)
      else if (r === 'locked') this.later(REGISTRATION_RETRY_MS, () => void attempt())
    }
    void attempt()
  }

  async start(): Promise<void> {
    const { deps, sync } = this
    const s = await deps.settings.snapshot()
    const setup = await waitForSetupReady(
      { store: deps.store, log: deps.log },
      {
        retries: s.num('plugins.content_manager.setup_wait.max_retries'),
        baseSeconds: s.num('plugins.content_manager.setup_wait.backoff_base_seconds'),
      },
    )
    if (this.stopped) return
    if (setup !== 'ready') {
      deps.log.warn('content sync start skipped until the next scheduled run: setup is not ready', { setup })
    }
    await this.jobs.start()
    if (setup === 'ready')
      await this.checkEngine().catch((e) => deps.log.warn('Engine policy check failed', { error: (e as Error).message }))
    if (!deps.nodeLocalStore) {
      const t = setInterval(() => void this.checkEngine().catch(() => undefined), ENGINE_CHECK_MILLIS)
      t.unref?.()
      this.timers.add(t)
    }
    if (setup === 'ready' && deps.nodeLocalStore) {
      // The embedded store belongs to one process: a sync lock found now is a killed process's.
      await releaseDeadSyncLock(deps, sync)
    }
    if (setup !== 'ready' || !s.bool('plugins.content_manager.catalog.update_on_start')) return
    await this.startUpPass(s)
  }

  /** The start-up pass, tried again (with jitter) while the CTI API cannot be reached, until the scheduled run comes first. */
  private async startUpPass(s: SettingsSnapshot): Promise<void> {
    const { deps, sync } = this
    const delay = this.opts.startRetryDelay ?? startRetryDelay
    const interval = s.num('plugins.content_manager.catalog.sync_interval') * 60_000
    const startedAt = deps.now()
    const attempt = async (n: number): Promise<void> => {
      if (this.stopped) return
      const r = await sync.begin('start')
      if (r === 'locked') {
        // Another node syncs; try once more when its lock would have gone stale.
        this.later(s.num('plugins.content_manager.resource_lock.stale_threshold_millis') + 5000, () => void this.startPass('start'))
        return
      }
      if (r === 'busy') return
      const report = await r.pass.catch(() => undefined)
      if (!report || this.stopped || !feedUnreachable(report)) return
      const wait = delay(n)
      if (deps.now() - startedAt + wait >= interval) return // the scheduled run comes first
      deps.log.warn('CTI API unreachable at start-up; trying again soon', { retry_in_millis: wait, attempt: n + 1 })
      this.later(wait, () => void attempt(n + 1))
    }
    await attempt(0)
  }

  async stop(): Promise<void> {
    this.stopped = true
    for (const t of this.timers) clearTimeout(t) // clears the interval too (same timer space)
    this.jobs.stop()
    await this.sync.stop()
  }
}

/** Deletes the cluster-wide sync lock of a killed process; only for a store no other live process can hold it in. */
async function releaseDeadSyncLock(deps: Deps, sync: ContentSync): Promise<void> {
  try {
    if ((await sync.releaseDeadLock()) === 'released') deps.log.info('sync lock of an interrupted process released', {})
  } catch (e) {
    deps.log.warn('sync lock left by an earlier process could not be released', { error: e })
  }
}

import type { Deps, Feature } from '../deps'
import { runBootstrap, type BootstrapResult } from './bootstrap'
import { type RetentionDeps, startRetentionJob } from './retention'
import { setupRoutes } from './routes'

export { setupRoutes, setupServices } from './routes'
export { runBootstrap, type BootstrapResult, type BootstrapOptions, type BootstrapTask } from './bootstrap'
export { waitForSetupReady, readSetupStatus, type SetupStatus } from './status'
export { readSetupSettings, type SettingsRecord } from './settings'
export { applyRetention, deleteAge, retentionRule, startRetentionJob } from './retention'
export { writeLifecyclePolicy } from './lifecycle'

export interface SetupOptions {
  /**
   * Whether this node applies the lifecycle policies itself: on the embedded store, and on a
   * platform without ISM (asked once the bootstrap has written the policies).
   */
  ownRetention: () => Promise<boolean>
  /** What retention must keep for readers that have not seen it yet (`RetentionDeps.holds`). */
  retentionHolds?: RetentionDeps['holds']
}

/**
 * What a node does for the Setup extension at start: the bootstrap in the
 * background (requests are served meanwhile; consumers wait for the marker)
 * and, where no ISM applies the policies (embedded, or a platform without the plugin), the
 * retention job that stands in for it.
 */
export function startSetup(
  deps: Pick<Deps, 'store' | 'settings' | 'log' | 'now'>,
  opts: SetupOptions,
): { ready: Promise<BootstrapResult>; retention: Promise<{ stop(): void } | undefined>; stop(): void } {
  const stopping = new AbortController()
  const ready = runBootstrap(deps, { signal: stopping.signal }).catch((e) => {
    deps.log.error('setup bootstrap crashed', { error: e })
    return { status: 'failed', ranHere: true, completed: [], skipped: [] } satisfies BootstrapResult
  })
  // A platform's ISM applies the same policies (written by the bootstrap); a second deleter would only race it.
  const retention = ready.then(async () => {
    if (stopping.signal.aborted || !(await opts.ownRetention().catch(() => false))) return undefined
    return startRetentionJob({ ...deps, holds: opts.retentionHolds })
  })
  return {
    ready,
    retention,
    stop: () => {
      stopping.abort()
      void retention.then((job) => job?.stop())
    },
  }
}

/** The Setup feature: its routes, and at start the bootstrap every other feature waits for. */
export interface SetupFeature extends Feature {
  /** The bootstrap's outcome once `start()` ran it (the other features start only on `ready`). */
  ready: Promise<BootstrapResult>
}

export function createSetup(deps: Deps, opts: SetupOptions): SetupFeature {
  let started: ReturnType<typeof startSetup> | undefined
  let settle!: (r: BootstrapResult) => void
  const ready = new Promise<BootstrapResult>((r) => (settle = r))
  return {
    routes: setupRoutes(deps),
    ready,
    async start() {
      started ??= startSetup(deps, opts)
      settle(await started.ready)
    },
    async stop() {
      started?.stop()
    },
  }
}

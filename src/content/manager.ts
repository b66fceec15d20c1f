// Composition of the Content Manager's resource side: one repository, one Engine client and one
// per-node policy reloader shared by the routes, the start-up work and the tasks that build on it
// (sync and promotion call `recomputeSpaces` after they change content).
import { SettingsSnapshot, type ClusterSettings } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import type { Feature } from '../deps'
import type { Journal } from '../journal/journal'
import type { Caller, Security } from '../http/caller'
import type { Store } from '../store/port'
import { afterChange, type ContentContext } from './context'
import { createEngineClient, createPolicyReloader, engineOptionsFromSettings, type EngineClient, type ReloadOutcome } from './engine'
import { ensureLockIndex, lockLeases } from './resource-locks'
import { withCreationLock, type CreationLock } from './resources/creation-lock'
import { logtestRoutes } from './logtest/routes'
import { ensureSpacePolicies } from './policy/defaults'
import { type EngineLoadState, engineLoads } from './policy/engine-load'
import { PolicyService } from './policy/service'
import { promotionRoutes } from './promotion/routes'
import { ContentRepository, ContentUnavailable } from './repository'
import { ResourceService } from './resources/service'
import { contentResourceRoutes } from './routes'
import { noRulesetSync, type RulesetSync } from '../ports/ruleset-sync'
import { spaceHash, spaceHashes, type SpaceHashResult } from './space-hash'
import type { Space } from './spaces'

export interface ContentManagerDeps {
  store: Store
  settings: ClusterSettings
  security: Security
  log: Logger
  now: () => number
  journal: Journal
  /** Defaults to a client built from the node settings (`engine.socket_path`, `engine.mock`, ...). */
  engine?: EngineClient
  /** Defaults to a no-op until Ruleset Management is wired in. */
  rulesetSync?: RulesetSync
  /** Only the lock benchmark replaces this, to measure creation without it. */
  creationLock?: CreationLock
  /** Platform mode: the store bound to a caller's credentials, for the caller's own writes. */
  storeFor?: (caller: Caller) => Store
}

export interface ContentManager extends Feature {
  /** Start-up work: the lock index and the draft/test/custom policies exist afterwards. Idempotent. */
  start(): Promise<void>
  /** Nothing to stop: an Engine load in flight ends with its own time-out (`engineLoadsSettled` waits for it). */
  stop(): Promise<void>
  repo: ContentRepository
  resources: ResourceService
  policies: PolicyService
  engine: EngineClient
  spaceHash(space: Space): Promise<string | undefined>
  /** Recomputes the hashes of spaces whose content changed; loads `standard` into the Engine when its hash moved. */
  recomputeSpaces(spaces: Space[]): Promise<SpaceHashResult[]>
  /** Loads `space` into this node's Engine when its stored hash differs from what the Engine last accepted. */
  ensureEngineLoaded(space: Space): Promise<ReloadOutcome>
  /** Resolves once every Engine load started so far has finished. */
  engineLoadsSettled(): Promise<ReloadOutcome[]>
  /** This node's Engine load state per space (metrics). */
  engineLoadStates(): EngineLoadState[]
}

export function createContentManager(deps: ContentManagerDeps): ContentManager {
  const engine = deps.engine ?? createEngineClient(engineOptionsFromSettings(new SettingsSnapshot(deps.settings.node.values), deps.log))
  const repo = new ContentRepository(deps.store)
  const loads = engineLoads(repo, createPolicyReloader(engine, deps.now), deps.now)
  let markStarted!: () => void
  const startedWork = new Promise<void>((resolve) => (markStarted = resolve))
  const ctx: ContentContext = {
    store: deps.store,
    repo,
    settings: deps.settings,
    security: deps.security,
    engine,
    ruleset: deps.rulesetSync ?? noRulesetSync,
    journal: deps.journal,
    log: deps.log,
    now: deps.now,
    engineLoads: loads,
    creationLock: deps.creationLock ?? withCreationLock,
    leases: lockLeases(deps),
    // The standard space is what the Engine runs: every change of its hash is loaded (background 8).
    hashes: spaceHashes(repo, (r) => {
      if (r.space === 'standard') loads.trigger('standard')
    }),
    storeFor: deps.storeFor,
    started: (waitMillis) =>
      Promise.race([
        startedWork.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), waitMillis).unref?.()),
      ]),
  }
  const resources = new ResourceService(ctx)
  const policies = new PolicyService(ctx)
  return {
    routes: [...contentResourceRoutes(resources, policies), ...promotionRoutes(ctx), ...logtestRoutes(ctx)],
    async start() {
      await ensureLockIndex(deps.store)
      try {
        await ensureSpacePolicies(deps)
      } catch (e) {
        if (!(e instanceof ContentUnavailable)) throw e
        // Setup has not provisioned the content indices yet; the next start (or reset) creates them.
        deps.log.warn('Space policies not created: content indices are missing', { index: e.alias })
      }
      markStarted()
    },
    async stop() {},
    repo,
    resources,
    policies,
    engine,
    spaceHash: (space) => spaceHash(repo, space),
    recomputeSpaces: (spaces) => afterChange(ctx, spaces),
    ensureEngineLoaded: (space) => loads.ensure(space),
    engineLoadsSettled: () => loads.settled(),
    engineLoadStates: () => loads.states(),
  }
}

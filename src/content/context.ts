// What the content services share: collaborators plus the two things every write ends with
// (writing with the caller's rights, and recomputing the hashes of the spaces it touched).
import type { ClusterSettings } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import type { Logger } from '../http/log'
import type { Journal } from '../journal/journal'
import type { Caller, Security } from '../http/caller'
import { callerStore, platformDecides, storeAs } from '../security/platform/caller-store'
import type { Store } from '../store/port'
import type { EngineClient } from './engine'
import type { KeyedLeases } from '../locks/lease'
import type { CreationLock } from './resources/creation-lock'
import type { EngineLoads } from './policy/engine-load'
import { ContentRepository, ContentUnavailable } from './repository'
import type { RulesetSync } from '../ports/ruleset-sync'
import type { SpaceHashes, SpaceHashResult } from './space-hash'
import type { Space } from './spaces'

export interface ContentContext {
  store: Store
  repo: ContentRepository
  settings: ClusterSettings
  security: Security
  engine: EngineClient
  ruleset: RulesetSync
  journal: Journal
  log: Logger
  now: () => number
  engineLoads: EngineLoads
  creationLock: CreationLock
  /** This node's lease queues over the resource-lock index (creation locks, promotion leases). */
  leases: KeyedLeases
  hashes: SpaceHashes
  /** Platform mode: the store bound to a caller's credentials (see callerStore). */
  storeFor?: (caller: Caller) => Store
  /**
   * Resolves true once this node's start-up work (the space policies) is done, false if it is not
   * within `waitMillis`: a request that arrives while the node starts waits for it instead of
   * failing on a policy that is about to exist.
   */
  started(waitMillis: number): Promise<boolean>
}

/**
 * The repository that makes the caller's writes (spec "Resource creation rules" 3: the resource
 * write runs with the caller's context, so the caller's own privileges on the content indices
 * apply): embedded, after our model allowed each action on the concrete indices behind its
 * aliases (403 otherwise); platform, bound to the caller's credentials, the platform deciding.
 * Reads that validate (draft policy, parents, titles, limit counts) stay on `ctx.repo`: limits and
 * uniqueness hold for the whole space, not for the part of it a caller may see.
 */
export async function writerFor(ctx: ContentContext, caller: Caller, rights: Record<string, string[]>): Promise<ContentRepository> {
  return ctx.repo.writingAs(await contentCallerStore(ctx, caller, rights))
}

/** The store behind `writerFor`, for writes that are not one document at a time (promotion's bulks). */
export async function contentCallerStore(ctx: ContentContext, caller: Caller, rights: Record<string, string[]>): Promise<Store> {
  // Our model is asked about concrete indices; the platform resolves the aliases itself.
  const checks = platformDecides(ctx) ? [] : Object.entries(rights)
  for (const [action, aliases] of checks) callerStore(ctx, caller, action, await concreteIndices(ctx, aliases))
  return storeAs(ctx, caller)
}

async function concreteIndices(ctx: ContentContext, aliases: string[]): Promise<string[]> {
  const indices: string[] = []
  for (const alias of new Set(aliases)) {
    try {
      indices.push(await ctx.repo.concrete(alias))
    } catch (e) {
      if (e instanceof ContentUnavailable) throw new ApiError(500, `Internal Server Error. ${e.message}`)
      throw e
    }
  }
  return indices
}

/**
 * Recomputes the aggregate hash of each space a change touched (and only those), and loads the
 * standard space into the Engine when its hash moved. Never fails the write that triggered it.
 */
export async function afterChange(ctx: ContentContext, spaces: Space[]): Promise<SpaceHashResult[]> {
  const results: SpaceHashResult[] = []
  for (const space of new Set(spaces)) {
    try {
      results.push(await ctx.hashes.recompute(space))
    } catch (e) {
      ctx.log.error('Space hash could not be recomputed', { space, error: e instanceof Error ? e.message : String(e) })
    }
  }
  return results
}

/** How long a request waits for the node's start-up work before a missing policy is an error. */
export const START_WAIT_MILLIS = 30_000

export async function requireDraftPolicy(ctx: ContentContext) {
  let policy = await ctx.repo.policy('draft')
  if (!policy && (await ctx.started(START_WAIT_MILLIS))) policy = await ctx.repo.policy('draft')
  if (!policy) throw new ApiError(500, 'Draft policy not found.')
  return policy
}

// What the content services share: collaborators plus the two things every write ends with
// (authorising the caller's index writes, and recomputing the hashes of the spaces it touched).
import type { ClusterSettings } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import type { Logger } from '../http/log'
import type { Journal } from '../journal/journal'
import type { Caller, Security } from '../security/caller'
import type { Store } from '../store/port'
import type { EngineClient } from './engine'
import type { CreationLock, LocalTurns } from './locks/creation-lock'
import type { EngineLoads } from './policy/engine-load'
import { ContentRepository, ContentUnavailable } from './repository'
import type { RulesetSync } from './ruleset-sync'
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
  turns: LocalTurns
  hashes: SpaceHashes
}

/** Throws 403 unless the caller may perform `action` on the concrete indices behind `aliases`. */
export async function authorizeWrites(ctx: ContentContext, caller: Caller, action: string, aliases: string[]): Promise<void> {
  const indices: string[] = []
  for (const alias of new Set(aliases)) {
    try {
      indices.push(await ctx.repo.concrete(alias))
    } catch (e) {
      if (e instanceof ContentUnavailable) throw new ApiError(500, `Internal Server Error. ${e.message}`)
      throw e
    }
  }
  ctx.security.authorizeIndices(caller, action, indices)
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

export async function requireDraftPolicy(ctx: ContentContext) {
  const policy = await ctx.repo.policy('draft')
  if (!policy) throw new ApiError(500, 'Draft policy not found.')
  return policy
}

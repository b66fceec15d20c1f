// What one sync pass works with: the collaborators plus the settings snapshot taken at its start.
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import type { CtiClient } from '../cti/client'
import type { CtiCredentials } from '../cti/credentials'
import type { Sleep } from '../cti/sleep'
import type { EngineClient } from '../engine'
import type { ContentRepository } from '../repository'
import type { SpaceHashResult } from '../space-hash'
import type { Space } from '../spaces'
import { bulkLimits, BulkWriter, type BulkLimits } from './bulk-writer'
import type { ConsumerDef } from './consumers'
import type { LocalSnapshots } from './local-snapshots'
import type { SyncRuleset } from './ruleset-post-sync'
import { loadSnapshotFile } from './snapshot'
import type { ConsumerStates } from './state'
import type { ContentKind } from '../../setup/indices'
import type { IocSink } from '../../ruleset/threat-intel/synced-iocs'

export interface PassContext {
  store: Store
  repo: ContentRepository
  settings: SettingsSnapshot
  log: Logger
  now: () => number
  cti: CtiClient
  credentials: CtiCredentials
  states: ConsumerStates
  local: LocalSnapshots
  ruleset: SyncRuleset
  engine: EngineClient
  recomputeSpaces(spaces: Space[]): Promise<SpaceHashResult[]>
  iocExportPath: string
  /** The node's in-memory IoC index, kept in step with what the IoC consumer writes (absent: none). */
  iocs?: IocSink
  signal: AbortSignal
  sleep?: Sleep
  limits: BulkLimits
}

export const limitsOf = (s: SettingsSnapshot) => bulkLimits(s)

export class SnapshotIncomplete extends Error {
  override name = 'SnapshotIncomplete'
}

/**
 * Loads an archive into the given physical indices. Any document the bulk layer dropped makes
 * the load a failure (reference 2.9): no offset advance and no promotion to stable.
 */
export interface LoadResume {
  /** Records of the archive an interrupted attempt already loaded. */
  skip: number
  /** Highest offset those records carried. */
  maxOffset: number
  /** Records progress (`position` records done, highest offset) once it is durable. */
  save(position: number, maxOffset: number): Promise<void>
}

export async function loadArchive(
  ctx: PassContext,
  def: ConsumerDef,
  file: string,
  targets: Partial<Record<ContentKind, string>>,
  resume?: LoadResume,
): Promise<{ maxOffset: number; documents: number }> {
  const flushEvery = ctx.settings.num('plugins.content_manager.offset_flush_interval')
  const indices = Object.values(targets).filter((x): x is string => !!x)
  const writer = new BulkWriter(ctx.store, ctx.limits, { signal: ctx.signal, sleep: ctx.sleep })
  const target = (kind: ContentKind) => {
    const index = targets[kind]
    if (!index) throw new Error(`no target index for ${kind}`)
    return index
  }
  const flush = () => ctx.store.flush({ index: indices, expand_wildcards: 'all', ignore_unavailable: true })
  const loaded = await loadSnapshotFile(file, def, target, writer, {
    log: ctx.log,
    signal: ctx.signal,
    now: ctx.now,
    report: (p) => ctx.states.reportProgress(def, p),
    skip: resume?.skip,
    // Durable progress every `offset_flush_interval` bulks (reference 7.5): flushed, then recorded.
    checkpoint: {
      every: flushEvery,
      save: async (position, maxOffset) => {
        await flush()
        await resume?.save(position, Math.max(maxOffset, resume.maxOffset))
      },
    },
  })
  const result = await writer.finish()
  await ctx.store.refresh({ index: indices, expand_wildcards: 'all', ignore_unavailable: true })
  if (result.dropped > 0) {
    throw new SnapshotIncomplete(`${result.dropped} snapshot documents were dropped: ${result.reasons.slice(0, 3).join('; ')}`)
  }
  return { maxOffset: Math.max(loaded.maxOffset, resume?.maxOffset ?? 0), documents: result.written }
}

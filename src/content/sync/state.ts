// Consumer state documents in `.svc-cti-consumers` (spec "Consumer state document", reference
// 5.3): one per consumer, `_id` = its type, always rewritten whole with the other fields kept, and
// refreshed at once so readers (and the next pass on any node) see it.
import { t, type Static } from 'elysia'
import { Value } from '@sinclair/typebox/value'
import { IndexNotFound } from '../../store/errors'
import type { Store } from '../../store/port'
import { CTI_CONSUMERS_INDEX } from '../../setup/indices'
import { consumerIdentity } from '../cti/urls'
import type { ConsumerDef } from './consumers'

export const SYNC_PHASES = ['integrations', 'rules', 'detectors'] as const
export type SyncPhase = (typeof SYNC_PHASES)[number]

export const PassProgress = t.Object({
  phase: t.String(),
  documents: t.Integer({ minimum: 0 }),
  percent: t.Optional(t.Number()),
  docs_per_second: t.Number(),
  eta_seconds: t.Optional(t.Number()),
  updated_at: t.String(),
})
export type PassProgress = Static<typeof PassProgress>

export const LastPass = t.Object({
  outcome: t.Union([t.Literal('ready'), t.Literal('failed'), t.Literal('deferred')]),
  started_at: t.String(),
  finished_at: t.String(),
  duration_millis: t.Integer({ minimum: 0 }),
  updated: t.Boolean(),
  error: t.Optional(t.String()),
})
export type LastPass = Static<typeof LastPass>

/**
 * A snapshot load in progress into staging indices, recorded every `offset_flush_interval` bulks
 * once every bulk before it is written and flushed: after a crash the next pass goes on from
 * `position` (records of the archive, in order) instead of loading the whole archive again.
 */
export const StagingLoad = t.Object({
  source: t.Union([t.Literal('remote'), t.Literal('stable'), t.Literal('packaged')]),
  snapshot_offset: t.Integer({ minimum: 0 }),
  position: t.Integer({ minimum: 0 }),
  max_offset: t.Integer({ minimum: 0 }),
  indices: t.Record(t.String(), t.String()),
})
export type StagingLoad = Static<typeof StagingLoad>

export const ConsumerState = t.Object({
  name: t.String(),
  context: t.String(),
  type: t.String(),
  resource: t.String(),
  is_public: t.Boolean(),
  status: t.Union([t.Literal('running'), t.Literal('ready'), t.Literal('failed')]),
  local_offset: t.Integer({ minimum: 0 }),
  remote_offset: t.Integer({ minimum: 0 }),
  pending_sync_phases: t.Array(t.String()),
  /**
   * Content was written and the consumer's post-sync (IoC hashes and export, ruleset hash and
   * Engine load, refresh) has not finished since: set before the first write, cleared only with
   * `ready`, so a crash in between makes the next pass redo the post-sync instead of reporting
   * `ready` over work never done.
   */
  post_sync_pending: t.Optional(t.Boolean()),
  /**
   * The content was loaded from a packaged snapshot that does not come from the consumer's feed
   * (the sample shipped with svc-ext, or another feed's archive): its offsets mean other documents
   * on this feed, so its changes are never applied over it, and every pass tries the feed's
   * snapshot first until one is loaded.
   */
  foreign_content: t.Optional(t.Boolean()),
  /**
   * IoC consumer: what its last post-sync read (IoC count, highest `_seq_no`). A pass that finds the
   * index otherwise (a write the post-sync never saw, whatever made it) runs the post-sync again
   * before `ready`, so `ready` means the summary and export describe exactly the stored IoCs.
   */
  post_sync_over: t.Optional(t.Object({ documents: t.Integer({ minimum: 0 }), max_seq_no: t.Integer() })),
  staging: t.Optional(StagingLoad),
  /** The running pass's progress (rewritten at most every 5 s). */
  progress: t.Optional(PassProgress),
  /** Outcome of the last finished pass of this consumer. */
  last_pass: t.Optional(LastPass),
})
export type ConsumerState = Static<typeof ConsumerState>

/** A document that lost fields (hand edits, older versions) is read with defaults rather than refused. */
function coerce(def: ConsumerDef, source: Record<string, unknown>): ConsumerState {
  const base = placeholder(def, typeof source.resource === 'string' ? source.resource : '')
  const merged = { ...base, ...source, type: def.type }
  if (Value.Check(ConsumerState, merged)) return merged
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : 0)
  return {
    ...base,
    name: typeof source.name === 'string' ? source.name : base.name,
    context: typeof source.context === 'string' ? source.context : base.context,
    is_public: typeof source.is_public === 'boolean' ? source.is_public : base.is_public,
    status: source.status === 'ready' || source.status === 'failed' ? source.status : 'running',
    local_offset: num(source.local_offset),
    remote_offset: num(source.remote_offset),
    pending_sync_phases: Array.isArray(source.pending_sync_phases)
      ? source.pending_sync_phases.filter((p): p is string => typeof p === 'string')
      : [],
    ...(source.post_sync_pending === true ? { post_sync_pending: true } : {}),
    ...(source.foreign_content === true ? { foreign_content: true } : {}),
  }
}

/** What is written for a consumer never seen before (reference 2.3 step 3). */
export function placeholder(def: ConsumerDef, resource: string): ConsumerState {
  const { context, name } = consumerIdentity(resource)
  return {
    name,
    context,
    type: def.type,
    resource,
    is_public: true,
    status: 'running',
    local_offset: 0,
    remote_offset: 0,
    pending_sync_phases: [],
  }
}

export class ConsumerStates {
  /** Progress of the pass running on this node, per consumer type, carried by every write. */
  private readonly progress = new Map<string, PassProgress>()
  /** What this node wrote last, per consumer type: progress reports rewrite it, never an older read. */
  private readonly last = new Map<string, ConsumerState>()
  /** Writes go out one at a time, so a progress report can never land after a newer checkpoint. */
  private queue: Promise<unknown> = Promise.resolve()

  constructor(private readonly store: Store) {}

  async read(def: ConsumerDef): Promise<ConsumerState | undefined> {
    try {
      const doc = await this.store.get({ index: CTI_CONSUMERS_INDEX, id: def.type })
      return doc.found ? coerce(def, doc._source ?? {}) : undefined
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
  }

  async write(state: ConsumerState): Promise<ConsumerState> {
    const { progress: _old, ...rest } = state
    const p = this.progress.get(state.type)
    const body: ConsumerState = p ? { ...rest, progress: p } : rest
    this.last.set(state.type, rest)
    const done = this.queue.then(() => this.store.index({ index: CTI_CONSUMERS_INDEX, id: state.type, body, refresh: true }))
    this.queue = done.catch(() => undefined)
    await done
    return state
  }

  /** Rewrites the document with `change` applied to what is stored now (nothing when absent). */
  async patch(def: ConsumerDef, change: Partial<ConsumerState>): Promise<ConsumerState | undefined> {
    const current = await this.read(def)
    if (!current) return undefined
    return this.write({ ...current, ...change, type: def.type })
  }

  /** Shows a running pass's progress in the consumer document (over the last state this node wrote). */
  async reportProgress(def: ConsumerDef, p: PassProgress): Promise<void> {
    this.progress.set(def.type, p)
    const last = this.last.get(def.type) ?? (await this.read(def))
    if (last) await this.write(last)
  }

  /** The pass is over: later writes carry no progress. */
  endProgress(def: ConsumerDef): void {
    this.progress.delete(def.type)
  }
}

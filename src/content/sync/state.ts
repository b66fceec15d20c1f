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
})
export type ConsumerState = Static<typeof ConsumerState>
export type ConsumerStatus = ConsumerState['status']

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
    await this.store.index({ index: CTI_CONSUMERS_INDEX, id: state.type, body: state, refresh: true })
    return state
  }

  /** Rewrites the document with `change` applied to what is stored now (nothing when absent). */
  async patch(def: ConsumerDef, change: Partial<ConsumerState>): Promise<ConsumerState | undefined> {
    const current = await this.read(def)
    if (!current) return undefined
    return this.write({ ...current, ...change, type: def.type })
  }
}

// Incremental update (reference 1.4, 2.4, 7.4, 7.5): the feed is read in windows of
// `max_items_per_bulk` offsets, `(from, to]`; each change is applied in feed order and after every
// window the consumer's `local_offset` is checkpointed. On any error the last applied offset is
// checkpointed before the error propagates, so the next pass resumes exactly there. Replays are
// harmless: a document already at (or past) a change's offset is left alone, a delete of a missing
// document is a no-op, and a create overwrites by id.
import type { Logger } from '../../http/log'
import type { Sleep } from '../cti/sleep'
import { IndexNotFound } from '../../store/errors'
import type { Source, Store } from '../../store/port'
import type { ContentKind } from '../../setup/indices'
import type { CtiClient } from '../cti/client'
import type { Change } from '../cti/schemas'
import { isObject, type Doc } from '../repository'
import { BulkWriter, type BulkLimits } from './bulk-writer'
import type { ConsumerDef } from './consumers'
import { cveType, reprocess, routeRecord } from './documents'
import { applyPatch, PatchError } from './json-patch'
import { Progress } from './progress'
import { pacer, yieldToLoop } from './yield'
import type { ConsumerState, ConsumerStates, PassProgress } from './state'

export interface ChangesDeps {
  store: Store
  cti: CtiClient
  states: ConsumerStates
  log: Logger
  limits: BulkLimits
  /** `update_sub_batch_size`. */
  subBatch: number
  /** `offset_flush_interval`: windows between forced flushes of the content indices. */
  flushEvery: number
  /** Physical index per content kind of this consumer. */
  targets: Partial<Record<ContentKind, string>>
  signal?: AbortSignal
  now?: () => number
  /** Bulk retry backoff (tests record it). */
  sleep?: Sleep
  /** Shows progress in the consumer document. */
  report?: (p: PassProgress) => Promise<void>
  /** Told of each window written to a single-index consumer: every document's final state, null when deleted. */
  onWritten?: (written: ReadonlyMap<string, Doc | null>) => void
}

export interface ChangesResult {
  applied: number
  skipped: number
  /** Offset the consumer is at afterwards. */
  offset: number
}

interface Located {
  kind: ContentKind
  index: string
  source: Source
}

const offsetOf = (source: Source) => (typeof source.offset === 'number' ? source.offset : -1)

export async function applyChanges(
  deps: ChangesDeps,
  def: ConsumerDef,
  url: string,
  state: ConsumerState,
  target: number,
): Promise<ChangesResult> {
  const window = deps.limits.maxItems
  const start = state.local_offset
  const progress = new Progress(deps.log, 'change feed', { consumer: def.kind, from: start, to: target }, deps.now, undefined, deps.report)
  let checkpointed = start
  let applied = 0
  let skipped = 0
  let last = start
  let windows = 0
  const pace = pacer()
  const checkpoint = async (offset: number) => {
    Object.assign(state, { local_offset: offset, remote_offset: target, status: 'running' })
    await deps.states.write(state)
    checkpointed = offset
  }
  try {
    for (let from = start; from < target;) {
      const to = Math.min(from + window, target)
      const changes = await deps.cti.changes(url, from, to, deps.signal)
      const inWindow = [...changes].sort((a, b) => a.offset - b.offset).filter((c) => c.offset > from && c.offset <= to)
      if (def.singleIndex) {
        const r = await applyWindow(deps, def, inWindow, pace)
        applied += r.applied
        skipped += r.skipped
      } else {
        for (const change of inWindow) {
          if (deps.signal?.aborted) throw deps.signal.reason ?? new Error('aborted')
          await pace()
          if (await applyOne(deps, def, change, change.type.toLowerCase())) applied++
          else skipped++
          last = change.offset
        }
      }
      last = to
      await checkpoint(to)
      windows++
      if (windows % deps.flushEvery === 0) await flush(deps)
      progress.tick(changes.length, (to - start) / Math.max(1, target - start))
      from = to
      await yieldToLoop()
    }
  } catch (e) {
    if (last > checkpointed) {
      try {
        await checkpoint(last)
      } catch (cpError) {
        deps.log.error('checkpoint after a failed window could not be written', { consumer: def.kind, error: cpError })
      }
    }
    throw e
  }
  await flush(deps)
  progress.finish()
  return { applied, skipped, offset: last }
}

async function flush(deps: ChangesDeps): Promise<void> {
  const indices = Object.values(deps.targets).filter((x): x is string => !!x)
  if (indices.length > 0) await deps.store.flush({ index: indices, expand_wildcards: 'all', ignore_unavailable: true })
}

/** Which of this consumer's indices holds `_id = resource` (a resource named `policy` is the policy). */
async function locate(deps: ChangesDeps, def: ConsumerDef, resource: string): Promise<Located | undefined> {
  const kinds: ContentKind[] = resource === 'policy' && def.kind === 'ruleset' ? ['policies'] : def.indices
  for (const kind of kinds) {
    const index = deps.targets[kind]
    if (!index) continue
    try {
      const doc = await deps.store.get({ index, id: resource })
      if (doc.found) return { kind, index, source: doc._source ?? {} }
    } catch (e) {
      if (!(e instanceof IndexNotFound)) throw e
    }
  }
  return undefined
}

function patched(def: ConsumerDef, found: Located, change: Change): Doc {
  const operations = change.operations ?? []
  if (def.kind === 'vulnerabilities') {
    const document = found.source.document
    const next = isObject(document) || Array.isArray(document) ? applyPatch(document as Doc, operations) : document
    return reprocess(found.kind, { ...found.source, document: next }, change.offset)
  }
  const { yaml: _derived, ...root } = found.source
  return reprocess(found.kind, applyPatch(root, operations), change.offset)
}

/** Applies one change; false when it was skipped (already applied, unknown type, nothing to do). */
async function applyOne(deps: ChangesDeps, def: ConsumerDef, change: Change, type: string): Promise<boolean> {
  if (type === 'create') {
    if (!isObject(change.payload)) return false
    const routed = routeRecord(def, change.resource, change.payload, change.offset)
    if ('skip' in routed) {
      deps.log.warn('change skipped', { consumer: def.kind, offset: change.offset, resource: change.resource, reason: routed.skip })
      return false
    }
    const index = deps.targets[routed.kind]
    if (!index) return false
    await deps.store.index({ index, id: routed.id, body: routed.body })
    return true
  }
  if (type === 'update') {
    const found = await locate(deps, def, change.resource)
    if (!found) {
      // Upstream fails the pass here, which would stall the feed at this offset forever.
      deps.log.warn('update of a document that is not stored; skipped', {
        consumer: def.kind,
        offset: change.offset,
        resource: change.resource,
      })
      return false
    }
    if (offsetOf(found.source) >= change.offset) return false
    try {
      await deps.store.index({ index: found.index, id: change.resource, body: patched(def, found, change) })
    } catch (e) {
      if (e instanceof PatchError) throw new PatchError(`change ${change.offset} (${change.resource}): ${e.message}`)
      throw e
    }
    return true
  }
  if (type === 'delete') {
    if (def.kind === 'vulnerabilities' || cveType(change.resource)) return false
    const found = await locate(deps, def, change.resource)
    if (!found) return false
    await deps.store.delete({ index: found.index, id: change.resource })
    return true
  }
  deps.log.warn('change of unknown type skipped', { consumer: def.kind, offset: change.offset, type: change.type })
  return false
}

/**
 * A window of a single-index consumer (IoCs, CVEs; reference 7.4, generalised to the window):
 * the documents its updates patch are read with multi-gets of `update_sub_batch_size` ids, the
 * changes are applied in feed order to an in-memory view of the window (a create or delete earlier
 * in the window is what a later update sees), and the final state of every document touched goes
 * out in bulks. Memory is bounded by the window (`max_items_per_bulk` changes). Replaying a window
 * after a crash gives the same result: a document already at a change's offset skips it.
 */
async function applyWindow(
  deps: ChangesDeps,
  def: ConsumerDef,
  changes: Change[],
  pace: () => Promise<void> | undefined,
): Promise<{ applied: number; skipped: number }> {
  const kind = def.indices[0]
  const index = deps.targets[kind]
  if (!index) return { applied: 0, skipped: changes.length }
  const wanted = [...new Set(changes.filter((c) => c.type.toLowerCase() === 'update').map((c) => c.resource))]
  const stored = new Map<string, Source>()
  for (let i = 0; i < wanted.length; i += deps.subBatch) {
    const ids = wanted.slice(i, i + deps.subBatch)
    const r = await deps.store.search({ index, expand_wildcards: 'all', body: { query: { ids: { values: ids } }, size: ids.length } })
    for (const h of r.hits.hits) stored.set(h._id, h._source ?? {})
    await pace()
  }
  const next = new Map<string, Doc | null>() // null: deleted
  let applied = 0
  let skipped = 0
  for (const change of changes) {
    if (deps.signal?.aborted) throw deps.signal.reason ?? new Error('aborted')
    await pace()
    const type = change.type.toLowerCase()
    if (type === 'create') {
      const routed = isObject(change.payload) ? routeRecord(def, change.resource, change.payload, change.offset) : undefined
      if (!routed || 'skip' in routed || routed.kind !== kind) {
        deps.log.warn('change skipped', {
          consumer: def.kind,
          offset: change.offset,
          resource: change.resource,
          reason: routed && 'skip' in routed ? routed.skip : 'no_payload',
        })
        skipped++
        continue
      }
      next.set(routed.id, routed.body)
      applied++
    } else if (type === 'update') {
      const base = next.has(change.resource) ? next.get(change.resource) : stored.get(change.resource)
      if (!base) {
        // Upstream fails the pass here, which would stall the feed at this offset forever.
        deps.log.warn('update of a document that is not stored; skipped', {
          consumer: def.kind,
          offset: change.offset,
          resource: change.resource,
        })
        skipped++
        continue
      }
      if (offsetOf(base) >= change.offset) {
        skipped++
        continue
      }
      try {
        next.set(change.resource, patched(def, { kind, index, source: base }, change))
      } catch (e) {
        if (e instanceof PatchError) throw new PatchError(`change ${change.offset} (${change.resource}): ${e.message}`)
        throw e
      }
      applied++
    } else if (type === 'delete') {
      // Deletes are ignored for the vulnerability feed (reference 2.5).
      if (def.kind === 'vulnerabilities' || cveType(change.resource)) {
        skipped++
        continue
      }
      next.set(change.resource, null)
      applied++
    } else {
      deps.log.warn('change of unknown type skipped', { consumer: def.kind, offset: change.offset, type: change.type })
      skipped++
    }
  }
  const writer = new BulkWriter(deps.store, deps.limits, { signal: deps.signal, sleep: deps.sleep })
  for (const [id, body] of next) {
    await writer.add(body === null ? { op: 'delete', index, id } : { op: 'index', index, id, body })
    await pace()
  }
  const result = await writer.finish()
  if (result.dropped > 0) throw new Error(`changes could not all be written: ${result.reasons.join('; ')}`)
  deps.onWritten?.(next)
  return { applied, skipped }
}

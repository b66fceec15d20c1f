/**
 * Correlation windows kept in the Store (`.platform-sap-correlation-state`), one document per
 * (detector, correlation rule, group): they survive restarts and every node reads the same ones.
 * Writes are conditional on the version read (`if_seq_no`/`if_primary_term`, or create-only for a
 * new group), so two nodes can never overwrite each other's events; the loser re-reads and merges.
 */
import type { BulkLine, Store } from '../../store/port'
import { CORRELATION_STATE_INDEX, ensureIndex } from '../indices'
import type { GroupStore, StoredGroup } from './engine'
import type { GroupWindow, WindowEvent } from './window'

interface StateDoc {
  scope: string
  rule: string
  /** The group values as JSON text: user field names must not become mapping fields. */
  group: string
  newest: number
  window: StoredWindow
}

/**
 * A window as stored: every page rewrites the windows it touched, so events are compact tuples
 * `[t, r, index position, id, value?, finding?, key?]` (index names listed once, the key only
 * when it is not `index/id`), anchors `[t, key]`.
 */
interface StoredWindow {
  indices: string[]
  events: Array<[number, number, number, string, (string | null)?, (string | null)?, (string | null)?]>
  emitted: Array<[number, string]>
}

function encode(w: GroupWindow): StoredWindow {
  const indices: string[] = []
  const at = new Map<string, number>()
  const events = w.events.map((e) => {
    let i = at.get(e.i)
    if (i === undefined) at.set(e.i, (i = indices.push(e.i) - 1))
    const tail = [e.v ?? null, e.f ?? null, e.k === `${e.i}/${e.d}` ? null : e.k]
    while (tail.length > 0 && tail[tail.length - 1] === null) tail.pop()
    return [e.t, e.r, i, e.d, ...tail] as StoredWindow['events'][number]
  })
  return { indices, events, emitted: w.emitted.map((f) => [f.t, f.k]) }
}

function decode(w: StoredWindow): GroupWindow {
  const events = w.events.map(([t, r, i, d, v, f, k]): WindowEvent => {
    const index = w.indices[i]
    return { t, r, i: index, d, k: k ?? `${index}/${d}`, ...(v == null ? {} : { v }), ...(f == null ? {} : { f }) }
  })
  return { events, emitted: w.emitted.map(([t, k]) => ({ t, k })) }
}

interface Version {
  seqNo: number
  primaryTerm: number
}

/** Groups read per search (the platform's default `index.max_result_window`). */
const LOAD_PAGE = 10_000

export class StoreGroups implements GroupStore {
  constructor(private readonly store: Store) {}

  async load(keys: string[]): Promise<Map<string, StoredGroup>> {
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const out = new Map<string, StoredGroup>()
    for (let at = 0; at < keys.length; at += LOAD_PAGE) {
      const ids = keys.slice(at, at + LOAD_PAGE)
      const r = await this.store.search({
        index: CORRELATION_STATE_INDEX,
        body: { size: ids.length, query: { ids: { values: ids } }, seq_no_primary_term: true, track_total_hits: false },
      })
      for (const h of r.hits.hits) {
        const doc = h._source as unknown as StateDoc
        out.set(h._id, { window: decode(doc.window), version: { seqNo: h._seq_no!, primaryTerm: h._primary_term! } satisfies Version })
      }
    }
    return out
  }

  async save(entries: Parameters<GroupStore['save']>[0]): Promise<string[]> {
    if (entries.length === 0) return []
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const body: BulkLine[] = []
    for (const e of entries) {
      const v = e.stored.version as Version | undefined
      const meta = { _index: CORRELATION_STATE_INDEX, _id: e.key }
      body.push(v ? { index: { ...meta, if_seq_no: v.seqNo, if_primary_term: v.primaryTerm } } : { create: meta })
      const events = e.stored.window.events
      const doc: StateDoc = {
        scope: e.scope,
        rule: e.rule,
        group: JSON.stringify(e.group),
        newest: events.length ? events[events.length - 1].t : 0,
        window: encode(e.stored.window),
      }
      body.push(doc as unknown as BulkLine)
    }
    const r = await this.store.bulk({ body, refresh: true })
    const lost: string[] = []
    r.items.forEach((item, i) => {
      const res = item.index ?? item.create
      if (!res) return
      if (res.status === 409) lost.push(entries[i].key)
      else if (res.status >= 300) throw new Error(`correlation state write failed: ${JSON.stringify(res.error ?? res.status)}`)
      else entries[i].stored.version = { seqNo: res._seq_no!, primaryTerm: res._primary_term! } satisfies Version
    })
    return lost
  }

  /** Drops the groups of `scope` whose newest event is older than their rule's `before` (their windows are over). */
  async prune(scope: string, cutoffs: Array<{ rule: string; before: number }>): Promise<number> {
    if (cutoffs.length === 0) return 0
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const r = await this.store.search({
      index: CORRELATION_STATE_INDEX,
      body: {
        size: LOAD_PAGE,
        _source: false,
        query: {
          bool: {
            filter: [{ term: { scope } }],
            should: cutoffs.map(({ rule, before }) => ({ bool: { filter: [{ term: { rule } }, { range: { newest: { lt: before } } }] } })),
            minimum_should_match: 1,
          },
        },
        track_total_hits: false,
      },
    })
    if (r.hits.hits.length === 0) return 0
    await this.store.bulk({ body: r.hits.hits.map((h) => ({ delete: { _index: CORRELATION_STATE_INDEX, _id: h._id } })), refresh: true })
    return r.hits.hits.length
  }
}

/** Groups a run keeps in memory between its pages (a detector run holds the detector's lease). */
export const MAX_CACHED_GROUPS = 10_000

/**
 * A run's read-through cache over a GroupStore: a window read or written earlier in the run is not
 * read again. Writes still go to the store, conditional on the version last written, so a window
 * another node changed meanwhile is a lost write: dropped from the cache and read again.
 */
export class CachedGroups implements GroupStore {
  private readonly cache = new Map<string, StoredGroup>()

  constructor(
    private readonly inner: GroupStore,
    private readonly max = MAX_CACHED_GROUPS,
  ) {}

  async load(keys: string[]): Promise<Map<string, StoredGroup>> {
    const out = new Map<string, StoredGroup>()
    const missing: string[] = []
    for (const k of keys) {
      const hit = this.cache.get(k)
      if (hit) out.set(k, hit)
      else missing.push(k)
    }
    if (missing.length > 0) for (const [k, v] of await this.inner.load(missing)) out.set(k, v)
    return out
  }

  async save(entries: Parameters<GroupStore['save']>[0]): Promise<string[]> {
    const lost = await this.inner.save(entries)
    const lostSet = new Set(lost)
    for (const e of entries) {
      this.cache.delete(e.key)
      if (!lostSet.has(e.key)) this.cache.set(e.key, e.stored)
    }
    // Least recently written first out.
    for (const k of this.cache.keys()) {
      if (this.cache.size <= this.max) break
      this.cache.delete(k)
    }
    return lost
  }
}

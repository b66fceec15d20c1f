/**
 * Correlation windows kept in the Store (`.platform-sap-correlation-state`): the windows of one
 * detector are spread over BUCKETS documents by group, whatever the rule, so a page writes at most
 * BUCKETS documents however many rules and groups it touches (a document per rule and bucket made
 * the per-document cost of the Store the largest part of a correlating run). They survive restarts
 * and every node reads the same ones. Writes are conditional on the version read
 * (`if_seq_no`/`if_primary_term`, or create-only for a new bucket), so two nodes never overwrite
 * each other's events: the loser drops its copy, re-reads and merges. A bucket drops the groups
 * silent for a whole timespan (of their own rule) whenever it is written, and keeps at most
 * MAX_GROUPS_PER_BUCKET.
 *
 * One instance serves one detector run: the buckets it read or wrote stay in memory between pages,
 * with the encoded text of each group, so a group the page did not touch is not encoded again.
 */
import type { BulkLine, Store } from '../../store/port'
import { CORRELATION_STATE_INDEX, ensureIndex } from '../indices'
import type { GroupStore, StoredGroup } from './engine'
import { type ConvertedGroup, convertLegacy, type LegacyRule, mergeWindows } from './legacy-state'
import type { GroupWindow, WindowEvent } from './window'

/** Documents per detector. */
export const BUCKETS = 64
/** Groups one bucket keeps; beyond it the longest silent are dropped (bounded state). */
export const MAX_GROUPS_PER_BUCKET = 10_000
/** Buckets a run keeps in memory between pages. */
export const MAX_CACHED_BUCKETS = 10_000

interface BucketDoc {
  scope: string
  /** Newest event time of any group in the bucket. */
  newest: number
  /**
   * The groups (`StoredEntry[]`) as deflated JSON text in base64 (`unpackWindows`): user field names
   * must not become mapping fields, one string is far cheaper for the Store to take than a tree of
   * small values, and the rules grouping by the same values repeat the same events in one bucket
   * (about 9x smaller, and cheaper to deflate than to escape as a JSON string).
   */
  windows: string
}

/** A group as stored: its key, its rule's timespan (for pruning), its values and its window. */
export type StoredEntry = [key: string, span: number, group: Record<string, string>, window: StoredWindow]

interface Group {
  span: number
  group: Record<string, string>
  window: GroupWindow
  /** The `StoredEntry` JSON (UTF-8) of the window as last written; dropped when the window changes. */
  text?: Buffer
}

interface Bucket {
  scope: string
  groups: Map<string, Group>
  version?: Version
}

/**
 * A window as stored: events are compact tuples `[t, r, index position, id, value?, finding?, key?]`
 * (index names listed once, the key only when it is not `index/id`), anchors `[t, key]`.
 */
export interface StoredWindow {
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
    const tuple: StoredWindow['events'][number] = [e.t, e.r, i, e.d]
    // Trailing absent members are left out (most events have no value, finding or own key).
    const k = e.k === `${e.i}/${e.d}` ? null : e.k
    if (e.v !== undefined || e.f !== undefined || k !== null) tuple.push(e.v ?? null)
    if (e.f !== undefined || k !== null) tuple.push(e.f ?? null)
    if (k !== null) tuple.push(k)
    return tuple
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

/** Buckets read per search (the platform's default `index.max_result_window`). */
const LOAD_PAGE = 10_000
/** Attempts at writing converted old windows into buckets other nodes keep changing. */
const MAX_CONVERT_ATTEMPTS = 3

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
/** `<scope>.<n>`: the key is `<scope>.<rule>.<group>`, n the first character of the group hash. */
const bucketOf = (key: string) => {
  const last = key.lastIndexOf('.')
  return `${key.slice(0, key.indexOf('.'))}.${BASE64URL.indexOf(key[last + 1]) % BUCKETS}`
}
const newestOf = (w: GroupWindow) => (w.events.length > 0 ? w.events[w.events.length - 1].t : -Infinity)
const [OPEN, COMMA, CLOSE] = ['[', ',', ']'].map((c) => Buffer.from(c))
function packWindows(texts: Buffer[]): string {
  const parts: Uint8Array[] = [OPEN]
  texts.forEach((t, i) => parts.push(...(i === 0 ? [t] : [COMMA, t])))
  parts.push(CLOSE)
  return Buffer.from(Bun.deflateSync(Buffer.concat(parts), { level: 1 })).toString('base64')
}
export const unpackWindows = (packed: string) =>
  JSON.parse(Buffer.from(Bun.inflateSync(Buffer.from(packed, 'base64'))).toString()) as StoredEntry[]

const textOf = (key: string, g: Group) =>
  (g.text ??= Buffer.from(JSON.stringify([key, g.span, g.group, encode(g.window)] satisfies StoredEntry)))

export class StoreGroups implements GroupStore {
  private readonly buckets = new Map<string, Bucket>()
  private converted?: Promise<void>

  /**
   * `detector` (its id, the engine's scope, and its correlation rules) lets the first read of the
   * run convert the windows an older version stored for it (`./legacy-state.ts`).
   */
  constructor(
    private readonly store: Store,
    private readonly detector?: { scope: string; rules: LegacyRule[] },
  ) {}

  async load(keys: string[]): Promise<Map<string, StoredGroup>> {
    // Before the engine reads a window, so it sees the events stored before the upgrade too.
    if (this.detector) await (this.converted ??= this.convert(this.detector))
    const buckets = keys.map(bucketOf)
    await this.read(buckets)
    const out = new Map<string, StoredGroup>()
    keys.forEach((k, at) => {
      const g = this.buckets.get(buckets[at])?.groups.get(k)
      if (g) out.set(k, { window: g.window })
    })
    return out
  }

  private async convert(d: { scope: string; rules: LegacyRule[] }): Promise<void> {
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    await convertLegacy(this.store, d.scope, d.rules, (groups) => this.absorb(d.scope, groups))
  }

  /** Reads the buckets not in memory. */
  private async read(buckets: string[]): Promise<void> {
    const wanted = [...new Set(buckets.filter((b) => !this.buckets.has(b)))]
    if (wanted.length > 0) await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    for (let at = 0; at < wanted.length; at += LOAD_PAGE) {
      const ids = wanted.slice(at, at + LOAD_PAGE)
      const r = await this.store.search({
        index: CORRELATION_STATE_INDEX,
        body: { size: ids.length, query: { ids: { values: ids } }, seq_no_primary_term: true, track_total_hits: false },
      })
      const found = new Set<string>()
      for (const h of r.hits.hits) {
        found.add(h._id)
        const doc = h._source as unknown as BucketDoc
        const groups = new Map<string, Group>()
        for (const [key, span, group, window] of unpackWindows(doc.windows)) groups.set(key, { span, group, window: decode(window) })
        this.remember(h._id, { scope: doc.scope, groups, version: { seqNo: h._seq_no!, primaryTerm: h._primary_term! } })
      }
      // A bucket not stored yet is remembered empty: its first write is create-only.
      for (const id of ids) if (!found.has(id)) this.remember(id, { scope: '', groups: new Map() })
    }
  }

  /** Merges converted old windows into their buckets and writes them; throws when it cannot. */
  private async absorb(scope: string, groups: ConvertedGroup[]): Promise<void> {
    let pending = groups
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > MAX_CONVERT_ATTEMPTS) throw new Error('correlation windows kept changing while converting the old ones')
      await this.read(pending.map((g) => bucketOf(g.key)))
      const touched = new Map<string, { bucket: Bucket; keys: string[] }>()
      for (const g of pending) {
        const id = bucketOf(g.key)
        const bucket = this.buckets.get(id)
        if (!bucket) continue
        const current = bucket.groups.get(g.key)
        bucket.scope = scope
        bucket.groups.set(g.key, { span: g.span, group: g.group, window: current ? mergeWindows(current.window, g.window) : g.window })
        const t = touched.get(id) ?? { bucket, keys: [] as string[] }
        t.keys.push(g.key)
        touched.set(id, t)
      }
      // A conflict dropped the bucket from memory: the next attempt re-reads it and merges again.
      const lost = new Set(await this.write(touched))
      pending = pending.filter((g) => !touched.has(bucketOf(g.key)) || lost.has(g.key))
    }
  }

  async save(entries: Parameters<GroupStore['save']>[0]): Promise<string[]> {
    if (entries.length === 0) return []
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const touched = new Map<string, { bucket: Bucket; keys: string[] }>()
    const lost: string[] = []
    for (const e of entries) {
      const id = bucketOf(e.key)
      const bucket = this.buckets.get(id)
      // Not in memory any more (the run touched more buckets than it keeps): read again first.
      if (!bucket) {
        lost.push(e.key)
        continue
      }
      bucket.scope = e.scope
      bucket.groups.set(e.key, { span: e.span, group: e.group, window: e.stored.window })
      const t = touched.get(id) ?? { bucket, keys: [] as string[] }
      t.keys.push(e.key)
      touched.set(id, t)
    }
    return [...lost, ...(await this.write(touched))]
  }

  /** Writes the touched buckets, each conditional on the version read; answers the keys that lost. */
  private async write(touched: Map<string, { bucket: Bucket; keys: string[] }>): Promise<string[]> {
    const ids = [...touched.keys()]
    const lost: string[] = []
    if (ids.length === 0) return lost
    const body: BulkLine[] = []
    for (const id of ids) {
      const { bucket } = touched.get(id)!
      const newest = prune(bucket)
      const meta = { _index: CORRELATION_STATE_INDEX, _id: id }
      const v = bucket.version
      body.push(v ? { index: { ...meta, if_seq_no: v.seqNo, if_primary_term: v.primaryTerm } } : { create: meta })
      const texts: Buffer[] = []
      for (const [key, g] of bucket.groups) texts.push(textOf(key, g))
      const doc: BucketDoc = { scope: bucket.scope, newest, windows: packWindows(texts) }
      body.push(doc as unknown as BulkLine)
    }
    const r = await this.store.bulk({ body, refresh: true })
    r.items.forEach((item, i) => {
      const res = item.index ?? item.create
      if (!res) return
      const { bucket, keys } = touched.get(ids[i])!
      if (res.status === 409) {
        // Another node wrote this bucket: forget our copy, the engine re-reads and merges.
        this.buckets.delete(ids[i])
        lost.push(...keys)
      } else if (res.status >= 300) throw new Error(`correlation state write failed: ${JSON.stringify(res.error ?? res.status)}`)
      else {
        bucket.version = { seqNo: res._seq_no!, primaryTerm: res._primary_term! }
        this.remember(ids[i], bucket)
      }
    })
    return lost
  }

  /** Keeps a bucket in memory (most recently used last), within MAX_CACHED_BUCKETS. */
  private remember(id: string, bucket: Bucket): void {
    this.buckets.delete(id)
    this.buckets.set(id, bucket)
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= MAX_CACHED_BUCKETS) break
      this.buckets.delete(k)
    }
  }
}

/**
 * Drops the groups silent for a whole timespan of their rule (they can no longer fire), then the
 * longest silent beyond MAX_GROUPS_PER_BUCKET; answers the bucket's newest event time.
 */
function prune(bucket: Bucket): number {
  let newest = -Infinity
  for (const g of bucket.groups.values()) newest = Math.max(newest, newestOf(g.window))
  for (const [key, g] of bucket.groups) if (newestOf(g.window) < newest - g.span) bucket.groups.delete(key)
  if (bucket.groups.size > MAX_GROUPS_PER_BUCKET) {
    const kept = [...bucket.groups].sort((a, b) => newestOf(b[1].window) - newestOf(a[1].window))
    bucket.groups = new Map(kept.slice(0, MAX_GROUPS_PER_BUCKET))
  }
  return newest
}

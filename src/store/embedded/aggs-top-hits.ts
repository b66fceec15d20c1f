/**
 * `top_hits`: the best documents of a bucket, by a field sort or in index order (every match
 * scores 1 here). Memory stays bounded by from + size.
 */
import { IllegalArgument, ParsingError } from '../errors'
import type { DocView } from '../query/doc'
import { isObject } from '../query/doc'
import { NestedDoc, nestedIdentity } from '../query/nested'
import type { SourceFilter } from '../port'
import { filterSource, noSourceToFilter, sourceSpec } from '../source-filter'
import { type Agg, type AggSpec, defineCheckedAgg, type Key, reader, type TargetCtx } from './aggs'
import { compareKeys } from './aggs-order'

interface SortSpec {
  field: string
  order: 1 | -1
}

interface Entry {
  keys: Array<Key | undefined>
  seq: number
  index: string
  id: string | undefined
  /** Undefined for an index without a source (its hits show none). */
  source: Record<string, unknown> | undefined
  /** A nested document: its place (`_nested`), its source being its own object. */
  nested?: NestedDoc
  /** The (root) document's `_seq_no` and `_version`. */
  seqNo?: number
  version?: number
}

function parseSort(sort: unknown): SortSpec[] {
  if (sort === undefined) return []
  return [sort].flat().flatMap((s): SortSpec[] => {
    if (typeof s === 'string') return [{ field: s, order: s === '_score' ? -1 : 1 }]
    if (!isObject(s)) throw new ParsingError('[sort] malformed')
    return Object.entries(s).map(([field, v]) => {
      const order = typeof v === 'string' ? v : isObject(v) ? v.order : undefined
      return { field, order: order === 'desc' ? -1 : order === 'asc' || order === undefined ? (field === '_score' ? -1 : 1) : 1 }
    })
  })
}

class TopHitsAgg implements Agg {
  private entries: Entry[] = []
  private total = 0
  private readonly size: number
  private readonly from: number
  private readonly sort: SortSpec[]
  private readonly spec: ReturnType<typeof sourceSpec>
  /** `seq_no_primary_term` and `version`: each hit's `_seq_no` and `_primary_term`, its `_version`. */
  private readonly seqNo: boolean
  private readonly version: boolean
  private readers = new Map<string, Array<((d: DocView) => Array<{ key: Key }>) | undefined>>()

  constructor(private readonly agg: AggSpec) {
    const p = agg.params
    this.size = p.size === undefined ? 3 : Number(p.size)
    this.from = p.from === undefined ? 0 : Number(p.from)
    if (!Number.isInteger(this.size) || this.size < 0) throw new IllegalArgument(`[size] must be a non-negative integer in [${agg.name}]`)
    if (!Number.isInteger(this.from) || this.from < 0) throw new IllegalArgument(`[from] must be a non-negative integer in [${agg.name}]`)
    if (this.from + this.size > 100)
      throw new IllegalArgument(
        `Top hits result window is too large, the top hits aggregator [${agg.name}]'s from + size must be less than or equal to: [100] but was [${this.from + this.size}]. This limit can be set by changing the [index.max_inner_result_window] index level setting.`,
      )
    this.sort = parseSort(p.sort)
    this.spec = sourceSpec(p._source as SourceFilter | undefined)
    this.seqNo = p.seq_no_primary_term === true
    this.version = p.version === true
  }

  private keysOf(d: DocView, t: TargetCtx): Array<Key | undefined> {
    let rs = this.readers.get(t.name)
    if (!rs) {
      rs = this.sort.map((s) => (s.field === '_score' || s.field === '_doc' ? undefined : reader(s.field, t, 'top_hits')))
      this.readers.set(t.name, rs)
    }
    return this.sort.map((s, i) => {
      if (s.field === '_score') return 1
      const r = rs![i]
      if (s.field === '_doc' || !r) return undefined
      const vs = r(d).map((v) => v.key)
      if (vs.length === 0) return undefined
      return vs.reduce((best, v) => (compareKeys(v, best) * s.order < 0 ? v : best))
    })
  }

  private compare = (a: Entry, b: Entry): number => {
    for (let i = 0; i < this.sort.length; i++) {
      const x = a.keys[i]
      const y = b.keys[i]
      if (x === y) continue
      if (x === undefined) return 1
      if (y === undefined) return -1
      const c = compareKeys(x, y) * this.sort[i].order
      if (c !== 0) return c
    }
    return a.seq - b.seq
  }

  collect(d: DocView, t: TargetCtx): void {
    if (t.sourceDisabled && this.spec) throw noSourceToFilter(t.name)
    this.total++
    const window = this.from + this.size
    if (window === 0) return
    if (this.sort.length === 0 && this.entries.length >= window) return // index order: the first ones win
    const nested = d instanceof NestedDoc ? d : undefined
    const root = nested ? nested.root : d
    this.entries.push({
      seqNo: root.seq,
      version: root.version,
      keys: this.keysOf(d, t),
      seq: this.total,
      index: t.name,
      id: d.id,
      source: t.sourceDisabled ? undefined : (d.source as Record<string, unknown>),
      nested,
    })
    if (this.entries.length >= 2 * window + 64) {
      this.entries.sort(this.compare)
      this.entries.length = window
    }
  }

  result(): Record<string, unknown> {
    this.entries.sort(this.compare)
    const sortedByField = this.sort.length > 0 && !(this.sort.length === 1 && this.sort[0].field === '_score')
    const hits = this.entries.slice(this.from, this.from + this.size).map((e) => {
      // A nested document's source filters read full paths, and show its own object.
      const filtered = e.source && filterSource(e.source, this.spec)
      const src = e.nested && filtered !== undefined ? (e.nested.own(filtered) ?? {}) : filtered
      return {
        _index: e.index,
        _id: e.id,
        ...(e.nested ? { _nested: nestedIdentity(e.nested) } : {}),
        ...(this.version && e.version !== undefined ? { _version: e.version } : {}),
        ...(this.seqNo && e.seqNo !== undefined ? { _seq_no: e.seqNo, _primary_term: 1 } : {}),
        _score: sortedByField ? null : 1,
        ...(src !== undefined ? { _source: src } : {}),
        ...(sortedByField ? { sort: e.keys.map((k) => (k === undefined ? null : k)) } : {}),
      }
    })
    return {
      hits: {
        total: { value: this.total, relation: 'eq' },
        max_score: sortedByField ? null : hits.length > 0 ? 1 : null,
        hits,
      },
    }
  }
}

defineCheckedAgg('top_hits', (spec) => new TopHitsAgg(spec))

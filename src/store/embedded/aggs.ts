/**
 * Aggregations over matching documents: `terms` (with sub-aggregations), `cardinality`,
 * `value_count`, `min`, `max`, `sum`, `avg`, `filter` — OpenSearch's response shapes.
 */
import { dateText } from './aggs-time'
import { zoneOf } from '../query/zones'
import { CompensatedSum } from './compensated-sum'
import { IllegalArgument, ParsingError, QueryShardError, StoreError } from '../errors'
import { termsKeyFilter, type KeyFilter } from './aggs-include'
import { compile, kindOf, toNumber, type FieldSpec, type Test } from '../query/compile'
import { parseDate } from '../query/dates'
import { compareIps, compareKeys, parseOrder, topBuckets, type Key, type Order } from './aggs-order'
import { setOwn } from '../own'
import { DocView, fieldPath, isObject, keywordOf } from '../query/doc'
import { FLAT_OBJECT, flatObjectRoot } from '../query/flat-object'
import { DEFAULT_SEARCH_LIMITS } from './search-limits'

/** The index a document came from, with its mapping (undefined = typed by value). */
export interface TargetCtx {
  name: string
  specs?: Map<string, FieldSpec>
  /**
   * How many indices the search reads: each is one OpenSearch shard, and OpenSearch reduces the
   * shards' digests only when there are several (aggs-metrics.ts). Absent: those read so far.
   */
  shards?: number
  /** The index's mapping disables `_source` (source-filter.ts): hits show none. */
  sourceDisabled?: boolean
  /**
   * The index's documents a query matches, whatever the search's query (a significant_terms
   * background set); null for each document read that does not match (a reader may pause there).
   */
  documents?(query: unknown): Iterable<DocView | null>
  /** Every value of a field in the index, by field: read ahead (aggs-whole-index.ts) for `terms` with `min_doc_count: 0`. */
  allTerms?: Map<string, Map<Key, AggValue>>
}

/** Every aggregation a request's `aggs` holds, at any depth, as written (malformed ones are left to their parsing). */
export function* aggDefs(aggs: unknown): Generator<{ name: string; type: string; params: Record<string, unknown> }> {
  if (!isObject(aggs)) return
  for (const [name, def] of Object.entries(aggs)) {
    if (!isObject(def)) continue
    for (const [type, params] of Object.entries(def)) {
      if (type === 'aggs' || type === 'aggregations') yield* aggDefs(params)
      else if (type !== 'meta' && isObject(params)) yield { name, type, params }
    }
  }
}

export interface Agg {
  collect(d: DocView, t: TargetCtx): void
  /** `level`: the results of the other aggregations of its level, given to a `late` one. */
  result(level?: Readonly<Record<string, unknown>>): Record<string, unknown>
  /** A sibling pipeline (aggs-pipeline.ts): reads no document, its result is made from the others' (see results). */
  late?: true
  /** See Counting; absent or undefined: the aggregation must read documents. */
  counting?(t: TargetCtx): Counting | undefined
  /** Learns an index's mapping before (or without) its documents: a date histogram renders empty buckets in its field's format. */
  see?(t: TargetCtx): void
}

/**
 * An aggregation whose answer depends only on how many documents fall in each of its buckets,
 * fed counts per key by aggs-columnar.ts's counting pass instead of documents one by one (the
 * same buckets, then the same orders, bounds and renderings). Parameters that read more
 * (`missing`, `hard_bounds`...) leave the aggregation to the documents.
 */
export interface Counting {
  /** The source path of the field's column. */
  path: string
  /** The bucket key of a document holding this one value (undefined: in no bucket). */
  key(v: unknown): Key | undefined
  /** Integer values from `key` up to (not including) the returned one all fall in `key`'s bucket. */
  end?(key: number): number
  /** `count` more documents in the bucket of `key`; answers the bucket's sub-aggregations. */
  add(key: Key, count: number): Map<string, Agg>
  /** Sub-aggregations as a bucket holds them, for their keys only (counted against no budget). */
  subs(): Map<string, Agg>
}

/** The sub-aggregations of a bucket when there are none (one map shared by every bucket, never written). */
const NO_SUBS: Map<string, Agg> = new Map()

/** A document holding one value (of whichever field is read): how a column's value reads as a key. */
export class OneValue extends DocView {
  constructor(private readonly value: unknown) {
    super({})
  }
  override values(): unknown[] {
    return [this.value]
  }
}
export type Factory = (budget?: BucketBudget) => Agg

/**
 * `search.max_buckets` (65,535), counted as buckets are created: bucket maps are the part of a
 * search that grows with the data, so they are bounded while collecting, not only when reduced.
 */
export class BucketBudget {
  private count = 0
  private candidates = 0
  constructor(
    readonly max: number,
    private readonly maxKeys = DEFAULT_SEARCH_LIMITS.maxRequestKeys,
  ) {}
  add(n = 1): void {
    this.count += n
    if (this.count > this.max)
      throw new StoreError(
        'too_many_buckets_exception',
        400,
        `Trying to create too many buckets. Must be less than or equal to: [${this.max}] but was [${this.count}]. This limit can be set by changing the [search.max_buckets] cluster level setting.`,
        { max_buckets: this.max },
      )
  }

  /**
   * A terms key collected without sub-aggregations: a count, not a bucket, until the result keeps
   * it (OpenSearch counts a terms aggregation's shard_size best keys against max_buckets, not every
   * key it saw). Bounded as OpenSearch's request circuit breaker bounds its ordinals.
   */
  candidate(): void {
    if (++this.candidates > this.maxKeys)
      throw new StoreError(
        'circuit_breaking_exception',
        429,
        `[request] Data too large, data for [<terms keys>] would be larger than the limit of [${this.maxKeys}] distinct keys per request`,
        { durability: 'TRANSIENT' },
      )
  }
}

export type Aggs = Map<string, Factory>

export type { Key } from './aggs-order'
/** A value as aggregations read it; dates carry `date` (their text is made only where it is shown). */
export type AggValue = { key: Key; asString?: string; date?: boolean }
export type ValueReader = (d: DocView) => AggValue[]

/** What an aggregation type's parser gets: its parameters, its sub-aggregations, the time of the request. */
export interface AggSpec {
  name: string
  type: string
  params: Record<string, unknown>
  subs: () => Aggs
  now: number
}
/** Aggregation types defined in their own modules (aggs-*.ts), by type name. */
const EXTRA = new Map<string, (spec: AggSpec) => Factory>()
export function defineAgg(type: string, make: (spec: AggSpec) => Factory): void {
  EXTRA.set(type, make)
}

/**
 * A type whose request is checked as it is parsed: one instance is made at once (its constructor
 * throws OpenSearch's errors before any document is read), then one per use.
 */
export function defineCheckedAgg(type: string, make: (spec: AggSpec, budget?: BucketBudget) => Agg): void {
  defineAgg(type, (spec) => {
    make(spec)
    return (budget) => make(spec, budget)
  })
}

/**
 * Pipeline aggregations (aggs-pipeline.ts) read no documents: they are made from the rendered
 * results of the others, as OpenSearch makes them after its final reduce.
 */
export interface PipelineHooks {
  types: ReadonlySet<string>
  /** Throws what OpenSearch answers a request's pipelines before running it: parse errors, then validation's. */
  check(aggs: Record<string, unknown>): void
  /** Sibling pipeline `name` of a level (its definitions `defs`): its result from the level's other results (undefined: a parent pipeline). */
  sibling(name: string, defs: Record<string, unknown>): ((level: Readonly<Record<string, unknown>>) => Record<string, unknown>) | undefined
  /** Aggregation `name` of `type` with the parent pipelines among its sub-aggregations `subs` applied to its result (undefined: none). */
  parents(
    name: string,
    type: string,
    subs: Record<string, unknown>,
  ): ((result: Record<string, unknown>) => Record<string, unknown>) | undefined
}
let PIPELINES: PipelineHooks | undefined
export function definePipelines(hooks: PipelineHooks): void {
  PIPELINES = hooks
}
export const isPipeline = (type: string): boolean => PIPELINES?.types.has(type) === true

/** A request's `aggs`: its pipelines checked first in the whole tree, then each level parsed when its aggregation is made. */
export function parseAggs(body: unknown, now: number): Aggs {
  if (isObject(body)) PIPELINES?.check(body)
  return parseLevel(body, now)
}

function parseLevel(body: unknown, now: number): Aggs {
  const out: Aggs = new Map()
  if (body === undefined) return out
  if (!isObject(body)) throw new ParsingError('Aggregation definition must be an object')
  for (const [name, def] of Object.entries(body)) {
    if (!isObject(def)) throw new ParsingError(`Expected [START_OBJECT] under [${name}]`)
    const sub = def.aggs ?? def.aggregations
    const types = Object.keys(def).filter((k) => k !== 'aggs' && k !== 'aggregations' && k !== 'meta')
    if (types.length !== 1) throw new ParsingError(`Expected one aggregation type under [${name}] but found [${types.join(', ')}]`)
    const type = types[0]
    const params = def[type]
    if (!isObject(params)) throw new ParsingError(`[${type}] aggregation [${name}] must be an object`)
    const subs = () => parseLevel(sub, now)
    if (def.meta !== undefined && !isObject(def.meta)) throw new ParsingError(`[meta] of [${name}] must be an object`)
    if (PIPELINES?.types.has(type)) {
      // A sibling pipeline is made after the other aggregations of its level (see results); a
      // parent one by the aggregation holding it (see withPipelines).
      const made = PIPELINES.sibling(name, body)
      if (made) out.set(name, () => ({ collect: () => {}, late: true, result: (level = {}) => made(level) }))
      continue
    }
    switch (type) {
      case 'terms':
        out.set(name, (b) => new TermsAgg(name, params, subs(), b))
        break
      case 'cardinality':
      case 'value_count':
      case 'min':
      case 'max':
      case 'sum':
      case 'avg':
        if (type === 'cardinality' && params.precision_threshold !== undefined && Number(params.precision_threshold) < 0)
          throw new IllegalArgument(
            `[precisionThreshold] must be greater than or equal to 0. Found [${params.precision_threshold}] in [${name}]`,
          )
        out.set(name, () => new MetricAgg(type, params))
        break
      case 'filter': {
        const q = params
        out.set(name, (b) => new FilterAgg(q, subs(), now, b))
        break
      }
      default: {
        const make = EXTRA.get(type)
        if (!make) throw new ParsingError(`Unknown aggregation type [${type}]`)
        out.set(name, make({ name, type, params, subs, now }))
      }
    }
    const rewrite = isObject(sub) ? PIPELINES?.parents(name, type, sub) : undefined
    if (rewrite) out.set(name, withPipelines(out.get(name)!, rewrite))
    if (isObject(def.meta)) out.set(name, withMeta(out.get(name)!, def.meta))
  }
  return out
}

/** The aggregation's result rewritten by its parent pipelines; its documents are read (or counted) as without them. */
function withPipelines(make: Factory, rewrite: (result: Record<string, unknown>) => Record<string, unknown>): Factory {
  return (budget) => {
    const agg = make(budget)
    return {
      collect: (d, t) => agg.collect(d, t),
      counting: agg.counting?.bind(agg),
      see: agg.see?.bind(agg),
      result: () => rewrite(agg.result()),
    }
  }
}

/** `meta` is echoed in the aggregation's result, as OpenSearch does. */
function withMeta(make: Factory, meta: Record<string, unknown>): Factory {
  return (budget) => {
    const agg = make(budget)
    return { collect: (d, t) => agg.collect(d, t), result: () => ({ meta, ...agg.result() }) }
  }
}

export function instantiate(aggs: Aggs, budget?: BucketBudget): Map<string, Agg> {
  return new Map([...aggs].map(([n, f]) => [n, f(budget)]))
}

/**
 * A document into each range (from inclusive, to exclusive) holding one of its values, once per
 * range whatever how many values fall there (ip_range, geo_distance).
 */
export function collectInRanges<V extends number | bigint>(
  ranges: ReadonlyArray<{ from?: V; to?: V; count: number; subs: Map<string, Agg> }>,
  values: readonly V[],
  d: DocView,
  t: TargetCtx,
): void {
  if (values.length === 0) return
  for (const r of ranges) {
    if (!values.some((v) => (r.from === undefined || v >= r.from) && (r.to === undefined || v < r.to))) continue
    r.count++
    for (const sub of r.subs.values()) sub.collect(d, t)
  }
}

/** Range-like buckets as a list, or with `keyed` as an object by their keys (range, ip_range, geo_distance). */
export function keyedBuckets(buckets: Array<{ key: string } & Record<string, unknown>>, keyed: boolean): Record<string, unknown> {
  if (!keyed) return { buckets }
  const out: Record<string, unknown> = {}
  for (const { key, ...b } of buckets) setOwn(out, key, b)
  return { buckets: out }
}

export function results(aggs: Map<string, Agg>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [n, a] of aggs) if (!a.late) setOwn(out, n, a.result())
  // Sibling pipelines read the other results of their level, so they are made after them.
  for (const [n, a] of aggs) if (a.late) setOwn(out, n, a.result(out))
  return out
}

/** How one field's values read as aggregation keys, per index mapping. */
export function reader(field: string, t: TargetCtx, forAgg: string): ValueReader | undefined {
  if (field === '_ignored') throw new IllegalArgument('Fielddata is not supported on field [_ignored] of type [_ignored]')
  let spec = t.specs?.get(field)
  if (t.specs && !spec) {
    if (flatObjectRoot(t.specs, field) === undefined) return undefined // unmapped: contributes nothing
    spec = { type: 'keyword' } // a path below a flat_object: its leaves there, as keywords
  }
  // OpenSearch aggregates the leaves of a path below a flat_object, not the root's mixed leaves.
  if (spec?.type === FLAT_OBJECT)
    throw new IllegalArgument(`Field [${field}] of type [${FLAT_OBJECT}] does not support doc_value in root field`)
  const fp = fieldPath(spec?.path ?? field)
  const kind = spec ? kindOf(spec.type) : 'auto'
  if (kind === 'text')
    throw new IllegalArgument(
      `Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${field}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    )
  if (kind === 'object') throw new QueryShardError(`Field [${field}] of type [object] is not supported for aggregation [${forAgg}]`)
  const limit = spec?.ignore_above
  return (d) => {
    const out: AggValue[] = []
    for (const v of d.values(fp)) {
      switch (kind) {
        case 'number': {
          const n = toNumber(v)
          if (n !== undefined) out.push({ key: n })
          break
        }
        case 'date': {
          const ms = parseDate(v, spec?.format)
          if (ms !== undefined) out.push({ key: ms, date: true })
          break
        }
        case 'boolean':
          if (v === true || v === 'true') out.push({ key: 1, asString: 'true' })
          else if (v === false || v === 'false') out.push({ key: 0, asString: 'false' })
          break
        case 'auto':
          if (typeof v === 'number') out.push({ key: v })
          else if (typeof v === 'boolean') out.push({ key: v ? 1 : 0, asString: String(v) })
          else if (typeof v === 'string') out.push({ key: v })
          break
        default: {
          const k = keywordOf(v)
          if (k !== undefined && (limit === undefined || k.length <= limit)) out.push({ key: k })
        }
      }
    }
    return out
  }
}

export class FieldAgg {
  private readers = new Map<string, ValueReader | undefined>()
  constructor(
    protected readonly field: string,
    private readonly aggName: string,
  ) {}
  private last?: { t: TargetCtx; r: ValueReader | undefined }
  protected read(d: DocView, t: TargetCtx): AggValue[] {
    // Documents come index by index: the reader of the last index is kept at hand.
    if (this.last?.t !== t) {
      let r = this.readers.get(t.name)
      if (!this.readers.has(t.name)) this.readers.set(t.name, (r = reader(this.field, t, this.aggName)))
      this.last = { t, r }
    }
    const r = this.last.r
    return r ? r(d) : []
  }
}

export function fieldParam(type: string, params: Record<string, unknown>): string {
  if (params.field === undefined && params.script === undefined)
    throw new IllegalArgument('Required one of fields [field, script], but none were specified. ')
  if (typeof params.field !== 'string') throw new IllegalArgument(`Required [field] for aggregation [${type}]`)
  return params.field
}

/** A terms bucket: its sub-aggregations (`aggs`), and their results once made (`subs`). */
interface TermBucket {
  key: Key
  asString?: string
  count: number
  aggs: Map<string, Agg>
  list: Agg[]
  subs: Record<string, unknown>
}

class TermsAgg extends FieldAgg implements Agg {
  private buckets = new Map<Key, TermBucket>()
  private readonly size: number
  private readonly minDocCount: number
  private readonly order: Order

  constructor(
    private readonly name: string,
    private readonly params: Record<string, unknown>,
    private readonly subs: Aggs,
    private readonly budget?: BucketBudget,
  ) {
    super(fieldParam('terms', params), 'terms')
    this.size = params.size === undefined ? 10 : Number(params.size)
    if (!Number.isInteger(this.size) || this.size < 1)
      throw new IllegalArgument(`[size] must be greater than 0. Found [${params.size}] in [terms]`)
    this.minDocCount = params.min_doc_count === undefined ? 1 : Number(params.min_doc_count)
    this.order = parseOrder(params.order, [['_count', -1]])
  }

  /** The candidates a shard keeps: `shard_size`, by default size * 1.5 + 10 (never below size). */
  private get shardSize(): number {
    const given = Number(this.params.shard_size)
    return Math.max(this.size, Number.isInteger(given) && given > 0 ? given : Math.floor(this.size * 1.5 + 10))
  }

  /** The terms a shard answers with: `size` when ordered by key (the order is exact there), else shard_size. */
  private get candidates(): number {
    return this.order[0]?.[0] === '_key' && this.params.shard_size === undefined ? this.size : this.shardSize
  }

  /** Keys of an `ip` field sort by address; the mapping is looked at once per index. */
  private ipFor?: TargetCtx
  private ip = false

  /** include/exclude, made for the field's type in each index read (undefined: every term). */
  private accepts: KeyFilter | undefined

  private filterFor(t: TargetCtx): KeyFilter | undefined {
    const spec = t.specs?.get(this.field)
    return termsKeyFilter(this.name, this.params, { kind: spec ? kindOf(spec.type) : 'keyword', type: spec?.type, index: t.name })
  }

  /** The indices read (min_doc_count 0 lists their terms that no matched document holds). */
  private readonly targets = new Set<TargetCtx>()
  /** What a date key renders with: the aggregation's `format`, else the field's (OpenSearch's doc value format). */
  private dateFormat?: string

  see(t: TargetCtx): void {
    this.targets.add(t)
  }

  collect(d: DocView, t: TargetCtx): void {
    if (this.ipFor !== t) {
      this.targets.add(t)
      this.ipFor = t
      if (t.specs?.get(this.field)?.type === 'ip') this.ip = true
      this.accepts = this.filterFor(t)
      this.dateFormat = typeof this.params.format === 'string' ? this.params.format : t.specs?.get(this.field)?.format
    }
    let values = this.read(d, t)
    if (values.length === 0 && this.params.missing !== undefined) values = this.missing(t)
    // A document counts once per bucket (the set is only needed for several values).
    const seen = values.length > 1 ? new Set<Key>() : undefined
    for (const v of values) {
      if (this.accepts && !this.accepts(v.key)) continue
      if (seen) {
        if (seen.has(v.key)) continue
        seen.add(v.key)
      }
      const b = this.bucket(v)
      b.count++
      for (let i = 0; i < b.list.length; i++) b.list[i].collect(d, t)
    }
  }

  /**
   * `missing` read as the field's values are; where the field is unmapped, as `value_type` says
   * (a boolean's key is 1, a date's its epoch millis, as OpenSearch's unmapped value sources).
   */
  private missing(t: TargetCtx): AggValue[] {
    const type = t.specs?.get(this.field)?.type ?? VALUE_TYPES[String(this.params.value_type)]
    const read = type === undefined ? undefined : reader(this.field, { name: t.name, specs: new Map([[this.field, { type }]]) }, 'terms')
    return read ? read(new OneValue(this.params.missing)) : [{ key: this.params.missing as Key }]
  }

  private bucket(v: AggValue) {
    let b = this.buckets.get(v.key)
    if (!b) {
      // With sub-aggregations a key carries their state: a bucket from the start.
      if (this.subs.size === 0) this.budget?.candidate()
      else this.budget?.add()
      const asString = v.date ? dateText(v.key as number, this.dateFormat) : v.asString
      const aggs = this.subs.size === 0 ? NO_SUBS : instantiate(this.subs, this.budget)
      this.buckets.set(v.key, (b = { key: v.key, asString, count: 0, aggs, list: aggs === NO_SUBS ? [] : [...aggs.values()], subs: {} }))
    }
    return b
  }

  /** Keyword and numeric fields (keys without a rendering of their own). */
  counting(t: TargetCtx): Counting | undefined {
    const spec = t.specs?.get(this.field)
    if (this.params.missing !== undefined || !spec || spec.type === 'ip') return undefined
    const kind = kindOf(spec.type)
    if (kind !== 'keyword' && kind !== 'number') return undefined
    const read = reader(this.field, t, 'terms')!
    const accepts = this.filterFor(t)
    return {
      path: spec.path ?? this.field,
      key: (v) => {
        const key = read(new OneValue(v))[0]?.key
        return key === undefined || !accepts || accepts(key) ? key : undefined
      },
      add: (key, count) => {
        const b = this.bucket({ key })
        b.count += count
        return b.aggs
      },
      subs: () => instantiate(this.subs),
    }
  }

  /** With `min_doc_count: 0`, the terms of the indices' other documents, as buckets of no documents. */
  private addUnmatched(): void {
    for (const t of this.targets) {
      const accepts = this.filterFor(t)
      for (const v of t.allTerms?.get(this.field)?.values() ?? [])
        if (!this.buckets.has(v.key) && (!accepts || accepts(v.key))) this.bucket(v)
    }
  }

  result(): Record<string, unknown> {
    if (this.minDocCount === 0) this.addUnmatched()
    // Sub-aggregation results are made for the buckets shown, unless the order reads them.
    const bySub = this.order.some(([by]) => by !== '_count' && by !== '_key')
    const compare = this.ip ? compareIps : compareKeys
    let all = [...this.buckets.values()]
    // As a shard answers: its candidates (the first `candidates` terms in the order), the documents
    // of the terms past them counted as other, then the candidates under `min_doc_count` dropped
    // with their documents, then the first `size` shown and the rest of the candidates' counted.
    let beyond = 0
    if (!bySub) {
      const candidates = topBuckets(all, this.candidates, this.order, compare)
      beyond = sumOfCounts(all) - sumOfCounts(candidates)
      all = candidates
    }
    all = all.filter((b) => b.count >= this.minDocCount)
    if (bySub) for (const b of all) b.subs = results(b.aggs)
    if (this.subs.size === 0) this.budget?.add(Math.min(all.length, this.shardSize))
    const shown = topBuckets(all, this.size, this.order, compare)
    if (!bySub) for (const b of shown) b.subs = results(b.aggs)
    const other = beyond + sumOfCounts(all) - sumOfCounts(shown)
    // OpenSearch's bound: 0 when the shard answered with every term or the order is by key or by
    // descending count; unknown (-1) otherwise, once its candidates (shard_size, by default
    // size * 1.5 + 10) ran out, whatever min_doc_count then dropped.
    const [by, dir] = this.order[0] ?? ['_count', -1]
    const bounded = this.buckets.size < this.shardSize || by === '_key' || (by === '_count' && dir === -1)
    return {
      doc_count_error_upper_bound: bounded ? 0 : -1,
      sum_other_doc_count: other,
      buckets: shown.map((b) => ({
        key: b.key,
        ...(b.asString !== undefined ? { key_as_string: b.asString } : {}),
        doc_count: b.count,
        ...b.subs,
      })),
    }
  }
}

class MetricAgg extends FieldAgg implements Agg {
  private distinct = new Set<Key>()
  private count = 0
  private total = new CompensatedSum()
  private min = Infinity
  private max = -Infinity
  private asDate = false

  constructor(
    private readonly type: string,
    private readonly params: Record<string, unknown>,
  ) {
    super(fieldParam(type, params), type)
    if (typeof params.format === 'string') this.format = params.format
  }

  /** The aggregation's `format`, else a date field's own, renders `value_as_string`, as in OpenSearch. */
  private format?: string
  private formatFor?: TargetCtx

  collect(d: DocView, t: TargetCtx): void {
    if (this.formatFor !== t) {
      this.formatFor = t
      this.format ??= t.specs?.get(this.field)?.format
    }
    let values = this.read(d, t)
    if (values.length === 0 && this.params.missing !== undefined) {
      const m = this.params.missing
      values = [{ key: typeof m === 'number' ? m : this.type === 'cardinality' || this.type === 'value_count' ? String(m) : Number(m) }]
    }
    for (const v of values) {
      this.count++
      if (this.type === 'cardinality') this.distinct.add(v.key)
      if (typeof v.key === 'number') {
        if (v.date) this.asDate = true
        this.total.add(v.key)
        if (v.key < this.min) this.min = v.key
        if (v.key > this.max) this.max = v.key
      } else if (this.type !== 'cardinality' && this.type !== 'value_count') {
        throw new IllegalArgument(`Field [${this.field}] of type [keyword] is not supported for aggregation [${this.type}]`)
      }
    }
  }

  result(): Record<string, unknown> {
    const dated = (value: number | null) =>
      value !== null && this.asDate ? { value, value_as_string: dateText(value, this.format) } : { value }
    switch (this.type) {
      case 'cardinality':
        return { value: this.distinct.size }
      case 'value_count':
        return { value: this.count }
      case 'sum':
        return { value: this.total.value }
      case 'avg':
        return dated(this.count === 0 ? null : this.total.value / this.count)
      case 'min':
        return dated(this.count === 0 ? null : this.min)
      default:
        return dated(this.count === 0 ? null : this.max)
    }
  }
}

class FilterAgg implements Agg {
  private count = 0
  private tests = new Map<string, Test>()
  private subAggs: Map<string, Agg>

  constructor(
    private readonly query: Record<string, unknown>,
    subs: Aggs,
    private readonly now: number,
    budget?: BucketBudget,
  ) {
    this.subAggs = instantiate(subs, budget)
    compile(query, undefined, { now }) // reject a malformed filter up front
  }

  collect(d: DocView, t: TargetCtx): void {
    let test = this.tests.get(t.name)
    if (!test) this.tests.set(t.name, (test = compile(this.query, t.specs, { now: this.now }).test))
    if (!test(d)) return
    this.count++
    for (const s of this.subAggs.values()) s.collect(d, t)
  }

  result(): Record<string, unknown> {
    return { doc_count: this.count, ...results(this.subAggs) }
  }
}

/** The field types `value_type` names (how an unmapped field's `missing` reads). */
const VALUE_TYPES: Record<string, string> = { boolean: 'boolean', date: 'date', long: 'long', double: 'double', numeric: 'double' }

const sumOfCounts = (buckets: ReadonlyArray<{ count: number }>) => buckets.reduce((n, b) => n + b.count, 0)

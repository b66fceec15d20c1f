/**
 * Aggregations over matching documents: `terms` (with sub-aggregations), `cardinality`,
 * `value_count`, `min`, `max`, `sum`, `avg`, `filter` — OpenSearch's response shapes.
 */
import { IllegalArgument, ParsingError, QueryShardError, StoreError } from '../errors'
import { compile, kindOf, toNumber, type FieldSpec, type Test } from '../query/compile'
import { parseDate } from '../query/dates'
import { compareCodePoints } from '../query/fold'
import { setOwn } from '../own'
import { type DocView, fieldPath, isObject, keywordOf } from '../query/doc'

/** The index a document came from, with its mapping (undefined = typed by value). */
export interface TargetCtx {
  name: string
  specs?: Map<string, FieldSpec>
}

interface Agg {
  collect(d: DocView, t: TargetCtx): void
  result(): Record<string, unknown>
}
type Factory = (budget?: BucketBudget) => Agg

/**
 * `search.max_buckets` (65,535), counted as buckets are created: bucket maps are the part of a
 * search that grows with the data, so they are bounded while collecting, not only when reduced.
 */
export class BucketBudget {
  private count = 0
  constructor(readonly max: number) {}
  add(): void {
    if (++this.count > this.max)
      throw new StoreError(
        'too_many_buckets_exception',
        400,
        `Trying to create too many buckets. Must be less than or equal to: [${this.max}] but was [${this.count}]. This limit can be set by changing the [search.max_buckets] cluster level setting.`,
        { max_buckets: this.max },
      )
  }
}
export type Aggs = Map<string, Factory>

type Key = string | number
type ValueReader = (d: DocView) => Array<{ key: Key; asString?: string }>

export function parseAggs(body: unknown, now: number): Aggs {
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
    const subs = () => parseAggs(sub, now)
    switch (type) {
      case 'terms':
        out.set(name, (b) => new TermsAgg(params, subs(), b))
        break
      case 'cardinality':
      case 'value_count':
      case 'min':
      case 'max':
      case 'sum':
      case 'avg':
        out.set(name, () => new MetricAgg(type, params))
        break
      case 'filter': {
        const q = params
        out.set(name, (b) => new FilterAgg(q, subs(), now, b))
        break
      }
      default:
        throw new ParsingError(`Unknown aggregation type [${type}]`)
    }
  }
  return out
}

export function instantiate(aggs: Aggs, budget?: BucketBudget): Map<string, Agg> {
  return new Map([...aggs].map(([n, f]) => [n, f(budget)]))
}

export function results(aggs: Map<string, Agg>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [n, a] of aggs) setOwn(out, n, a.result())
  return out
}

/** How one field's values read as aggregation keys, per index mapping. */
function reader(field: string, t: TargetCtx, forAgg: string): ValueReader | undefined {
  let spec = t.specs?.get(field)
  if (t.specs && !spec) return undefined // unmapped: contributes nothing
  const fp = fieldPath(spec?.path ?? field)
  const kind = spec ? kindOf(spec.type) : 'auto'
  if (kind === 'text')
    throw new IllegalArgument(
      `Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${field}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    )
  if (kind === 'object') throw new QueryShardError(`Field [${field}] of type [object] is not supported for aggregation [${forAgg}]`)
  const limit = spec?.ignore_above
  return (d) => {
    const out: Array<{ key: Key; asString?: string }> = []
    for (const v of d.values(fp)) {
      switch (kind) {
        case 'number': {
          const n = toNumber(v)
          if (n !== undefined) out.push({ key: n })
          break
        }
        case 'date': {
          const ms = parseDate(v, spec?.format)
          if (ms !== undefined) out.push({ key: ms, asString: new Date(ms).toISOString() })
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

class FieldAgg {
  private readers = new Map<string, ValueReader | undefined>()
  constructor(
    protected readonly field: string,
    private readonly aggName: string,
  ) {}
  protected read(d: DocView, t: TargetCtx) {
    let r = this.readers.get(t.name)
    if (!this.readers.has(t.name)) this.readers.set(t.name, (r = reader(this.field, t, this.aggName)))
    return r ? r(d) : []
  }
}

function fieldParam(type: string, params: Record<string, unknown>): string {
  if (typeof params.field !== 'string') throw new IllegalArgument(`Required [field] for aggregation [${type}]`)
  return params.field
}

class TermsAgg extends FieldAgg implements Agg {
  private buckets = new Map<Key, { asString?: string; count: number; subs: Map<string, Agg> }>()
  private readonly size: number
  private readonly minDocCount: number
  private readonly order: Array<[string, 1 | -1]>

  constructor(
    private readonly params: Record<string, unknown>,
    private readonly subs: Aggs,
    private readonly budget?: BucketBudget,
  ) {
    super(fieldParam('terms', params), 'terms')
    this.size = params.size === undefined ? 10 : Number(params.size)
    if (!Number.isInteger(this.size) || this.size < 1)
      throw new IllegalArgument(`[size] must be greater than 0. Found [${params.size}] in [terms]`)
    this.minDocCount = params.min_doc_count === undefined ? 1 : Number(params.min_doc_count)
    const order = params.order === undefined ? [{ _count: 'desc' }] : Array.isArray(params.order) ? params.order : [params.order]
    this.order = (order as unknown[]).flatMap((o) =>
      isObject(o) ? Object.entries(o).map(([k, v]) => [k, String(v) === 'asc' ? 1 : -1] as [string, 1 | -1]) : [],
    )
  }

  collect(d: DocView, t: TargetCtx): void {
    const seen = new Set<Key>()
    let values = this.read(d, t)
    if (values.length === 0 && this.params.missing !== undefined) values = [{ key: this.params.missing as Key }]
    for (const v of values) {
      if (seen.has(v.key)) continue // a document counts once per bucket
      seen.add(v.key)
      let b = this.buckets.get(v.key)
      if (!b) {
        this.budget?.add()
        this.buckets.set(v.key, (b = { asString: v.asString, count: 0, subs: instantiate(this.subs, this.budget) }))
      }
      b.count++
      for (const s of b.subs.values()) s.collect(d, t)
    }
  }

  result(): Record<string, unknown> {
    const cmpKey = (a: Key, b: Key) => (typeof a === 'number' && typeof b === 'number' ? a - b : compareCodePoints(String(a), String(b)))
    const all = [...this.buckets.entries()].filter(([, b]) => b.count >= this.minDocCount)
    all.sort(([ka, a], [kb, b]) => {
      for (const [by, dir] of this.order) {
        const c = by === '_count' ? a.count - b.count : by === '_key' || by === '_term' ? cmpKey(ka, kb) : 0
        if (c !== 0) return c * dir
      }
      return a.count !== b.count ? b.count - a.count : cmpKey(ka, kb)
    })
    const shown = all.slice(0, this.size)
    const other = all.slice(this.size).reduce((n, [, b]) => n + b.count, 0)
    return {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: other,
      buckets: shown.map(([key, b]) => ({
        key,
        ...(b.asString !== undefined ? { key_as_string: b.asString } : {}),
        doc_count: b.count,
        ...results(b.subs),
      })),
    }
  }
}

class MetricAgg extends FieldAgg implements Agg {
  private distinct = new Set<Key>()
  private count = 0
  private sum = 0
  private min = Infinity
  private max = -Infinity
  private asDate = false

  constructor(
    private readonly type: string,
    params: Record<string, unknown>,
  ) {
    super(fieldParam(type, params), type)
  }

  collect(d: DocView, t: TargetCtx): void {
    for (const v of this.read(d, t)) {
      this.count++
      if (this.type === 'cardinality') this.distinct.add(v.key)
      if (typeof v.key === 'number') {
        if (v.asString !== undefined && v.asString !== 'true' && v.asString !== 'false') this.asDate = true
        this.sum += v.key
        if (v.key < this.min) this.min = v.key
        if (v.key > this.max) this.max = v.key
      } else if (this.type !== 'cardinality' && this.type !== 'value_count') {
        throw new IllegalArgument(`Field [${this.field}] of type [keyword] is not supported for aggregation [${this.type}]`)
      }
    }
  }

  result(): Record<string, unknown> {
    const dated = (value: number | null) =>
      value !== null && this.asDate ? { value, value_as_string: new Date(value).toISOString() } : { value }
    switch (this.type) {
      case 'cardinality':
        return { value: this.distinct.size }
      case 'value_count':
        return { value: this.count }
      case 'sum':
        return { value: this.sum }
      case 'avg':
        return { value: this.count === 0 ? null : this.sum / this.count }
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

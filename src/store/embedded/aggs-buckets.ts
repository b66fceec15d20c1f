/**
 * Bucket aggregations over numbers and dates: `histogram`, `date_histogram` (calendar and fixed
 * intervals, time zones, offsets, `min_doc_count`, `extended_bounds`, `hard_bounds`), `range`,
 * `date_range`, `filters` and `missing`. Each bucket runs its own sub-aggregations.
 */
import { javaDouble } from './java-double'
import { decimalFormat, type DecimalFormat } from './decimal-format'
import { IllegalArgument, ParsingError, QueryCreationFailed } from '../errors'
import { compile, toNumber, type Test } from '../query/compile'
import { dateValueFailure, parseDate, parseDateMath } from '../query/dates'
import { DEFAULT_DATE_FORMAT } from '../query/date-pattern'
import { type DocView, isObject } from '../query/doc'
import { setOwn } from '../own'
import {
  type Agg,
  type AggSpec,
  type Counting,
  type Aggs,
  BucketBudget,
  defineAgg,
  defineCheckedAgg,
  FieldAgg,
  fieldParam,
  instantiate,
  keyedBuckets,
  OneValue,
  reader,
  results,
  type TargetCtx,
} from './aggs'
import { calendarUnit, fixedInterval, formatInZone, nextCalendar, roundCalendar, roundFixed } from './aggs-time'
import { type Zone, zoneOf } from '../query/zones'
import { parseOrder, sortBuckets, type Order } from './aggs-order'

/** A bucket's count and sub-aggregations. */
class Bucket {
  count = 0
  readonly subs: Map<string, Agg>
  /** Every bucket counts against `search.max_buckets` (the request's budget). */
  private readonly list: Agg[]
  constructor(subs: Aggs, budget?: BucketBudget) {
    budget?.add()
    this.subs = instantiate(subs, budget)
    this.list = [...this.subs.values()]
  }
  add(d: DocView, t: TargetCtx): void {
    this.count++
    for (let i = 0; i < this.list.length; i++) this.list[i].collect(d, t)
  }
}

function num(v: unknown, what: string): number {
  const n = toNumber(v)
  if (n === undefined) throw new ParsingError(`[${what}] must be a number, found [${String(v)}]`)
  return n
}

function minDocCount(params: Record<string, unknown>, fallback: number): number {
  if (params.min_doc_count === undefined) return fallback
  const n = Number(params.min_doc_count)
  if (!Number.isInteger(n) || n < 0)
    throw new IllegalArgument(`[min_doc_count] must be greater than or equal to 0. Found [${params.min_doc_count}] in [${'histogram'}]`)
  return n
}

interface Bounds {
  min?: number
  max?: number
}

/**
 * What histogram and date_histogram share: values rounded to a key, buckets per key, empty
 * buckets filled between the bounds when `min_doc_count` is 0.
 */
abstract class KeyedHistogram extends FieldAgg implements Agg {
  private buckets = new Map<number, Bucket>()
  protected readonly minDocs: number
  private readonly order: Order
  protected readonly keyed: boolean

  constructor(
    protected readonly spec: AggSpec,
    protected extended: Bounds,
    protected hard: Bounds,
    protected readonly budget?: BucketBudget,
  ) {
    super(fieldParam(spec.type, spec.params), spec.type)
    this.minDocs = minDocCount(spec.params, 0)
    this.order = parseOrder(spec.params.order, [['_key', 1]])
    this.keyed = spec.params.keyed === true
  }

  /** The bucket key of a value. */
  protected abstract round(v: number): number
  /** The key an extended bound reaches out to (the bucket holding it, unless the histogram says otherwise). */
  protected boundKey(v: number): number {
    return this.round(v)
  }
  /** Whether a value, of this key, is within `hard_bounds` (by value: min inclusive, max exclusive). */
  protected withinHard(v: number, _key: number): boolean {
    return (this.hard.min === undefined || v >= this.hard.min) && (this.hard.max === undefined || v < this.hard.max)
  }
  /** The key after `key`. */
  protected abstract next(key: number): number
  /** The bucket's extra fields (key_as_string). */
  protected abstract render(key: number): Record<string, unknown>
  /** A value as this histogram reads it (a date's millis, a number). */
  protected abstract numberOf(v: { key: string | number }): number | undefined

  collect(d: DocView, t: TargetCtx): void {
    let values = this.read(d, t)
    if (values.length === 0 && this.spec.params.missing !== undefined) values = [{ key: this.missingValue() }]
    // A document counts once per bucket (the set is only needed for several values).
    const seen = values.length > 1 ? new Set<number>() : undefined
    for (const raw of values) {
      const v = this.numberOf(raw)
      if (v === undefined) continue
      const key = this.round(v)
      if (!this.withinHard(v, key)) continue
      if (seen) {
        if (seen.has(key)) continue
        seen.add(key)
      }
      this.bucket(key).add(d, t)
    }
  }

  private bucket(key: number): Bucket {
    let b = this.buckets.get(key)
    if (!b) this.buckets.set(key, (b = new Bucket(this.spec.subs(), this.budget)))
    return b
  }

  /** Without `missing` or `hard_bounds`: a key per value, and runs of values in one bucket when `span` allows. */
  counting(t: TargetCtx): Counting | undefined {
    const p = this.spec.params
    const spec = t.specs?.get(this.field)
    if (p.missing !== undefined || p.hard_bounds !== undefined || !spec) return undefined
    this.prepare(t)
    const read = reader(this.field, t, this.spec.type)!
    return {
      path: spec.path ?? this.field,
      key: (v) => {
        const raw = read(new OneValue(v))[0]
        const n = raw === undefined ? undefined : this.numberOf(raw)
        return n === undefined ? undefined : this.round(n)
      },
      end: this.span() ? (key) => this.next(key) : undefined,
      add: (key, count) => {
        const b = this.bucket(key as number)
        b.count += count
        return b.subs
      },
      subs: () => instantiate(this.spec.subs()),
    }
  }

  /** Whether every integer from a key up to the next key rounds to that key. */
  protected abstract span(): boolean
  /** What collect learns of the index before its first document. */
  protected prepare(_t: TargetCtx): void {}

  protected abstract missingValue(): string | number

  result(): Record<string, unknown> {
    const keys = [...this.buckets.keys()].sort((a, b) => a - b)
    if (this.minDocs === 0 && (keys.length > 0 || (this.extended.min !== undefined && this.extended.max !== undefined))) {
      // Fill the gaps, and reach out to extended_bounds (never past hard_bounds).
      let lo = keys.length > 0 ? keys[0] : this.boundKey(this.extended.min!)
      let hi = keys.length > 0 ? keys[keys.length - 1] : this.boundKey(this.extended.max!)
      if (this.extended.min !== undefined) lo = Math.min(lo, this.boundKey(this.extended.min))
      if (this.extended.max !== undefined) hi = Math.max(hi, this.boundKey(this.extended.max))
      if (this.hard.min !== undefined) lo = Math.max(lo, this.round(this.hard.min))
      if (this.hard.max !== undefined) hi = Math.min(hi, this.round(this.hard.max))
      let guard = 0
      for (let k = lo; k <= hi; k = this.next(k)) {
        if (!this.buckets.has(k)) this.buckets.set(k, new Bucket(this.spec.subs(), this.budget))
        if (++guard > 65_535)
          throw new IllegalArgument(
            'Trying to create too many buckets. Must be less than or equal to: [65535] but was [65536]. This limit can be set by changing the [search.max_buckets] cluster level setting.',
          )
      }
    }
    const list = [...this.buckets]
      .filter(([, b]) => b.count >= this.minDocs)
      .map(([key, b]) => ({ key, count: b.count, subs: results(b.subs) }))
    sortBuckets(list, this.order)
    const ordered = list.map((b) => ({ ...this.render(b.key), key: b.key, doc_count: b.count, ...b.subs }) as Record<string, unknown>)
    if (!this.keyed) return { buckets: ordered }
    const out: Record<string, unknown> = {}
    for (const b of ordered) setOwn(out, String(b.key_as_string ?? this.keyString(b.key as number)), b)
    return { buckets: out }
  }

  protected keyString(key: number): string {
    return Number.isInteger(key) ? `${key}.0` : String(key)
  }
}

class HistogramAgg extends KeyedHistogram {
  private readonly interval: number
  private readonly offset: number

  constructor(spec: AggSpec, budget?: BucketBudget) {
    const p = spec.params
    super(
      spec,
      boundsOf(p.extended_bounds, (v) => num(v, 'extended_bounds')),
      boundsOf(p.hard_bounds, (v) => num(v, 'hard_bounds')),
      budget,
    )
    if (p.interval === undefined) throw new IllegalArgument('[interval] must be >0 for histogram aggregation [' + spec.name + ']')
    this.interval = num(p.interval, 'interval')
    if (!(this.interval > 0)) throw new IllegalArgument(`[interval] must be >0 for histogram aggregation [${spec.name}]`)
    this.offset = p.offset === undefined ? 0 : num(p.offset, 'offset')
    this.format = typeof p.format === 'string' ? decimalFormat(p.format) : undefined
  }
  /** `format`: keys also as text, in Java's DecimalFormat. */
  private readonly format?: DecimalFormat
  protected round(v: number): number {
    return Math.floor((v - this.offset) / this.interval) * this.interval + this.offset
  }
  protected next(key: number): number {
    return key + this.interval
  }
  protected render(key: number): Record<string, unknown> {
    return this.format ? { key_as_string: this.format(key) } : {}
  }
  protected numberOf(v: { key: string | number }): number | undefined {
    return typeof v.key === 'number' ? v.key : toNumber(v.key)
  }
  protected missingValue(): number {
    return num(this.spec.params.missing, 'missing')
  }
  protected span(): boolean {
    return Number.isInteger(this.interval) && Number.isInteger(this.offset)
  }
}

function boundsOf(v: unknown, conv: (v: unknown) => number): Bounds {
  if (v === undefined) return {}
  if (!isObject(v)) throw new ParsingError('bounds must be an object with [min] and [max]')
  return {
    ...(v.min !== undefined && v.min !== null ? { min: conv(v.min) } : {}),
    ...(v.max !== undefined && v.max !== null ? { max: conv(v.max) } : {}),
  }
}

class DateHistogramAgg extends KeyedHistogram {
  private readonly zone: Zone
  private readonly unit
  private readonly fixed: number | undefined
  private readonly offset: number
  private readonly format: string | undefined

  constructor(spec: AggSpec, budget?: BucketBudget) {
    const p = spec.params
    // Bounds are read in the aggregation's time zone, as its keys are.
    const zone = zoneOf(typeof p.time_zone === 'string' ? p.time_zone : undefined)
    super(spec, {}, {}, budget)
    this.zone = zone
    this.format = typeof p.format === 'string' ? p.format : undefined
    // Bounds read in the aggregation's format now, else in the field's once an index names it (prepare).
    if (this.format !== undefined) this.readBounds(this.format)
    const given = [p.calendar_interval, p.fixed_interval, p.interval].filter((v) => v !== undefined)
    if (given.length === 0) throw new IllegalArgument('Invalid interval specified, must be non-null and non-empty')
    if (given.length > 1) throw new IllegalArgument('Cannot use more than one of [interval], [calendar_interval] and [fixed_interval]')
    if (p.calendar_interval !== undefined) {
      this.unit = calendarUnit(String(p.calendar_interval))
      if (!this.unit)
        throw new IllegalArgument(`The supplied interval [${String(p.calendar_interval)}] could not be parsed as a calendar interval.`)
    } else if (p.fixed_interval !== undefined) {
      this.fixed = fixedInterval(String(p.fixed_interval))
    } else {
      const legacy = String(p.interval)
      this.unit = calendarUnit(legacy)
      if (!this.unit) this.fixed = typeof p.interval === 'number' ? p.interval : fixedInterval(legacy, 'interval')
    }
    this.offset = p.offset === undefined ? 0 : offsetMillis(String(p.offset))
  }
  protected round(v: number): number {
    if (this.unit) return roundCalendar(v - this.offset, this.unit, this.zone) + this.offset
    return roundFixed(v, this.fixed!, this.offset, this.zone)
  }
  protected next(key: number): number {
    if (this.unit) return nextCalendar(key - this.offset, this.unit, this.zone) + this.offset
    return key + this.fixed!
  }
  /** A bound rounded as OpenSearch rounds it: without the offset. */
  private roundBound(v: number): number {
    return this.unit ? roundCalendar(v, this.unit, this.zone) : roundFixed(v, this.fixed!, 0, this.zone)
  }
  /** An extended bound is rounded without the offset, which is then added (2024-03-20 with +6h: 06:00 that day). */
  protected override boundKey(v: number): number {
    return this.roundBound(v) + this.offset
  }
  /** hard_bounds, rounded without the offset, hold bucket keys: min inclusive, max exclusive. */
  protected override withinHard(_v: number, key: number): boolean {
    return (
      (this.hard.min === undefined || key >= this.roundBound(this.hard.min)) &&
      (this.hard.max === undefined || key < this.roundBound(this.hard.max))
    )
  }
  /** Without a `format`, keys are rendered in the field's own (its first pattern), as OpenSearch does. */
  private fieldFormat?: string
  private formatFor?: TargetCtx
  override collect(d: DocView, t: TargetCtx): void {
    this.prepare(t)
    super.collect(d, t)
  }
  see(t: TargetCtx): void {
    this.prepare(t)
  }
  protected override prepare(t: TargetCtx): void {
    if (this.formatFor !== t) {
      this.formatFor = t
      this.fieldFormat ??= t.specs?.get(this.field)?.format
      if (!this.boundsRead) this.readBounds(this.format ?? this.fieldFormat ?? DEFAULT_DATE_FORMAT)
    }
  }
  private boundsRead = false
  /** `extended_bounds` and `hard_bounds` read in `format`: one it cannot read fails the shard, as a range query's bound does. */
  private readBounds(format: string): void {
    this.boundsRead = true
    const { params, now } = this.spec
    const date = (v: unknown) => {
      const unreadable = dateValueFailure(v, format)
      if (unreadable) throw new QueryCreationFailed(unreadable, 'direct')
      return parseDateMath(v, false, now, format, this.zone)
    }
    this.extended = boundsOf(params.extended_bounds, date)
    this.hard = boundsOf(params.hard_bounds, date)
  }
  /** In a zone of one offset, a bucket is every instant from its key to the next (dates are whole milliseconds). */
  protected span(): boolean {
    return this.zone.fixed === true && (this.fixed === undefined || Number.isInteger(this.fixed))
  }
  protected render(key: number): Record<string, unknown> {
    return { key_as_string: formatInZone(key, this.zone, this.format ?? this.fieldFormat) }
  }
  protected numberOf(v: { key: string | number }): number | undefined {
    return typeof v.key === 'number' ? v.key : parseDate(v.key)
  }
  protected missingValue(): string | number {
    return this.spec.params.missing as string | number
  }
}

/** `+6h`, `-1d`, `30m`: an offset in milliseconds. */
function offsetMillis(v: string): number {
  const m = /^([+-])?(\d+)(ms|s|m|h|d)$/.exec(v.trim())
  if (!m) throw new IllegalArgument(`failed to parse setting [date_histogram.offset] with value [${v}] as a time value`)
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[3] as 'ms']!
  return (m[1] === '-' ? -1 : 1) * Number(m[2]) * unit
}

interface RangeDef {
  /** The range as the request gave it. */
  raw: unknown
  key?: string
  from?: number
  to?: number
  fromText?: string
  toText?: string
}

/** `range` and `date_range`: a document falls in every range that holds one of its values. */
class RangeAgg extends FieldAgg implements Agg {
  private ranges: Array<RangeDef & { bucket: Bucket }>
  private readonly keyed: boolean
  private readonly dates: boolean
  private readonly zone: Zone
  private format: string | undefined
  /** A date_range without a `format` reads its bounds (and `missing`) in its field's: learnt from the first index seen. */
  private formatLearnt: boolean

  constructor(
    private readonly spec: AggSpec,
    budget?: BucketBudget,
  ) {
    super(fieldParam(spec.type, spec.params), spec.type)
    const p = spec.params
    this.dates = spec.type === 'date_range'
    this.keyed = p.keyed === true
    this.zone = zoneOf(typeof p.time_zone === 'string' ? p.time_zone : undefined)
    this.format = typeof p.format === 'string' ? p.format : undefined
    if (!Array.isArray(p.ranges) || p.ranges.length === 0)
      throw new IllegalArgument(`No [ranges] specified for the [${spec.name}] aggregation`)
    this.formatLearnt = !this.dates || this.format !== undefined
    this.ranges = this.bounds(p.ranges, budget)
  }

  /** The request's ranges read (dates in the format), sorted as OpenSearch answers them: by from, then to. */
  private bounds(given: unknown[], budget?: BucketBudget, buckets?: Bucket[]): Array<RangeDef & { bucket: Bucket }> {
    const conv = (v: unknown, what: string): number | undefined => {
      if (v === undefined || v === null) return undefined
      if (!this.dates) return num(v, what)
      if (this.formatLearnt) return parseDateMath(v, false, this.spec.now, this.format, this.zone)
      // Read again in the field's format once an index names it (see): a bound only that format reads waits for it.
      try {
        return parseDateMath(v, false, this.spec.now, this.format, this.zone)
      } catch {
        return undefined
      }
    }
    const ranges = given.map((r: unknown, i) => {
      if (!isObject(r)) throw new ParsingError('[ranges] must hold objects')
      return {
        raw: r,
        key: typeof r.key === 'string' ? r.key : undefined,
        from: conv(r.from, 'from'),
        to: conv(r.to, 'to'),
        bucket: buckets?.[i] ?? new Bucket(this.spec.subs(), budget),
      }
    })
    return ranges.sort((a, b) => (a.from ?? -Infinity) - (b.from ?? -Infinity) || (a.to ?? Infinity) - (b.to ?? Infinity))
  }

  see(t: TargetCtx): void {
    if (this.formatLearnt) return
    this.formatLearnt = true
    const format = t.specs?.get(this.field)?.format
    if (format === undefined) return
    this.format = format
    // The same buckets (none holds a document yet), in request order, for the bounds read again.
    const byRequest = (this.spec.params.ranges as unknown[]).map((r) => this.ranges.find((x) => x.raw === r)!.bucket)
    this.ranges = this.bounds(this.spec.params.ranges as unknown[], undefined, byRequest)
  }

  collect(d: DocView, t: TargetCtx): void {
    if (!this.formatLearnt) this.see(t)
    const values: number[] = []
    for (const v of this.read(d, t)) {
      const n = typeof v.key === 'number' ? v.key : this.dates ? parseDate(v.key) : toNumber(v.key)
      if (n !== undefined) values.push(n)
    }
    const missing = this.spec.params.missing
    if (values.length === 0 && missing !== undefined)
      values.push(this.dates ? parseDateMath(missing, false, this.spec.now, this.format, this.zone) : num(missing, 'missing'))
    for (const r of this.ranges) {
      if (values.some((v) => (r.from === undefined || v >= r.from) && (r.to === undefined || v < r.to))) r.bucket.add(d, t)
    }
  }

  private text(v: number): string {
    return this.dates ? formatInZone(v, this.zone, this.format) : javaDouble(v)
  }

  result(): Record<string, unknown> {
    const buckets = this.ranges.map((r) => {
      const key = r.key ?? `${r.from === undefined ? '*' : this.text(r.from)}-${r.to === undefined ? '*' : this.text(r.to)}`
      return {
        key,
        ...(r.from !== undefined ? { from: r.from, ...(this.dates ? { from_as_string: this.text(r.from) } : {}) } : {}),
        ...(r.to !== undefined ? { to: r.to, ...(this.dates ? { to_as_string: this.text(r.to) } : {}) } : {}),
        doc_count: r.bucket.count,
        ...results(r.bucket.subs),
      }
    })
    return keyedBuckets(buckets, this.keyed)
  }
}

/** `filters`: one bucket per named (or listed) query, plus the optional other bucket. */
class FiltersAgg implements Agg {
  private readonly filters: Array<{ name: string; query: unknown; bucket: Bucket; tests: Map<string, Test> }>
  private readonly keyed: boolean
  private readonly other?: { name: string; bucket: Bucket }

  constructor(
    private readonly spec: AggSpec,
    budget?: BucketBudget,
  ) {
    const p = spec.params
    const given = p.filters
    if (given === undefined) throw new IllegalArgument('[filters] cannot be empty.')
    if (isObject(given)) {
      this.keyed = p.keyed !== false
      this.filters = Object.entries(given).map(([name, query]) => ({
        name,
        query,
        bucket: new Bucket(spec.subs(), budget),
        tests: new Map(),
      }))
    } else if (Array.isArray(given)) {
      this.keyed = false
      this.filters = given.map((query, i) => ({ name: String(i), query, bucket: new Bucket(spec.subs(), budget), tests: new Map() }))
    } else throw new ParsingError(`[filters] must be an object or an array in [${spec.name}]`)
    if (this.filters.length === 0) throw new IllegalArgument('[filters] cannot be empty.')
    for (const f of this.filters) compile(f.query, undefined, { now: spec.now }) // malformed queries fail up front
    if (p.other_bucket === true || p.other_bucket_key !== undefined)
      this.other = {
        name: typeof p.other_bucket_key === 'string' ? p.other_bucket_key : '_other_',
        bucket: new Bucket(spec.subs(), budget),
      }
  }

  collect(d: DocView, t: TargetCtx): void {
    let any = false
    for (const f of this.filters) {
      let test = f.tests.get(t.name)
      if (!test) f.tests.set(t.name, (test = compile(f.query, t.specs, { now: this.spec.now }).test))
      if (test(d)) {
        any = true
        f.bucket.add(d, t)
      }
    }
    if (!any && this.other) this.other.bucket.add(d, t)
  }

  result(): Record<string, unknown> {
    const all = [...this.filters.map((f) => ({ name: f.name, bucket: f.bucket })), ...(this.other ? [this.other] : [])]
    if (this.keyed) {
      const out: Record<string, unknown> = {}
      for (const f of all) setOwn(out, f.name, { doc_count: f.bucket.count, ...results(f.bucket.subs) })
      return { buckets: out }
    }
    return {
      buckets: all.map((f) => ({
        ...(isObject(this.spec.params.filters) ? { key: f.name } : {}),
        doc_count: f.bucket.count,
        ...results(f.bucket.subs),
      })),
    }
  }
}

/** `missing`: the documents without a value for the field. */
class MissingAgg extends FieldAgg implements Agg {
  private readonly bucket: Bucket
  private readonly missingGiven: boolean
  constructor(spec: AggSpec, budget?: BucketBudget) {
    super(fieldParam('missing', spec.params), 'missing')
    this.bucket = new Bucket(spec.subs(), budget)
    this.missingGiven = spec.params.missing !== undefined
  }
  collect(d: DocView, t: TargetCtx): void {
    // With a `missing` value every document has a value, so none is missing.
    if (this.missingGiven) return
    if (this.read(d, t).length === 0) this.bucket.add(d, t)
  }
  result(): Record<string, unknown> {
    return { doc_count: this.bucket.count, ...results(this.bucket.subs) }
  }
}

defineAgg('histogram', (spec) => (budget) => new HistogramAgg(spec, budget))
defineCheckedAgg('date_histogram', (spec, budget) => new DateHistogramAgg(spec, budget))
defineAgg('range', (spec) => (budget) => new RangeAgg(spec, budget))
defineAgg('date_range', (spec) => (budget) => new RangeAgg(spec, budget))
defineCheckedAgg('filters', (spec, budget) => new FiltersAgg(spec, budget))
defineAgg('missing', (spec) => (budget) => new MissingAgg(spec, budget))

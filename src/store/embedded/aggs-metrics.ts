/**
 * Numeric metric aggregations beyond the single-value ones: `stats`, `extended_stats`,
 * `percentiles` and `percentile_ranks` (t-digest or HDR histogram, as OpenSearch builds them),
 * `weighted_avg` and `median_absolute_deviation`.
 */
import { CompensatedSum } from './compensated-sum'
import { FieldParseError, IllegalArgument, ShardsFailed, StoreError } from '../errors'
import { type DocView, isObject } from '../query/doc'
import { jsonToken } from '../../json'
import { type Agg, type AggSpec, type AggValue, defineAgg, defineCheckedAgg, FieldAgg, fieldParam, type TargetCtx } from './aggs'
import { javaDouble } from './java-double'
import { dateText } from './aggs-time'
import { kindOf } from '../query/compile'
import { MergingDigest } from './t-digest'
import { DoubleHdrHistogram, HistogramOutOfBounds } from './hdr-histogram'

/** Numbers of a field in a document (dates as millis); `asDate` is set when the field holds dates. */
abstract class NumericAgg extends FieldAgg implements Agg {
  protected asDate = false
  /** What dates render with: the aggregation's `format`, else the field's (see dateText). */
  protected dateFormat?: string
  private dateFormatFor?: TargetCtx
  /**
   * A document's values are added in ascending order, as OpenSearch reads them from doc values:
   * set where the order of adding shows in the answer (a digest).
   */
  protected inDocValueOrder = false
  constructor(protected readonly spec: AggSpec) {
    super(fieldParam(spec.type, spec.params), spec.type)
  }
  protected abstract add(v: number): void
  abstract result(): Record<string, unknown>
  /** How a date field's values render (undefined for numbers). */
  protected dateText(): ((v: number) => string) | undefined {
    return this.asDate ? (v) => dateText(v, this.dateFormat) : undefined
  }
  collect(d: DocView, t: TargetCtx): void {
    let values = this.read(d, t)
    if (values.length === 0 && this.spec.params.missing !== undefined) values = [{ key: Number(this.spec.params.missing) }]
    if (values.length > 1 && this.inDocValueOrder) values = [...values].sort((a, b) => (a.key as number) - (b.key as number))
    for (const v of values) {
      if (typeof v.key !== 'number')
        throw new IllegalArgument(`Field [${this.field}] of type [keyword] is not supported for aggregation [${this.spec.type}]`)
      if (v.date) this.asDate = true
      this.add(v.key)
    }
    if (this.dateFormatFor !== t) {
      this.dateFormatFor = t
      this.dateFormat = typeof this.spec.params.format === 'string' ? this.spec.params.format : t.specs?.get(this.field)?.format
    }
  }
}

class StatsAgg extends NumericAgg {
  protected count = 0
  private total = new CompensatedSum()
  private squares = new CompensatedSum()
  protected get sum(): number {
    return this.total.value
  }
  protected get sumSq(): number {
    return this.squares.value
  }
  protected min = Infinity
  protected max = -Infinity
  protected add(v: number): void {
    this.count++
    this.total.add(v)
    this.squares.add(v * v)
    if (v < this.min) this.min = v
    if (v > this.max) this.max = v
  }
  protected get moments(): Moments {
    return { count: this.count, sum: this.sum, sumSq: this.sumSq, min: this.min, max: this.max }
  }
  protected base(): Record<string, unknown> {
    return statsResult(this.moments, this.dateText())
  }
  result(): Record<string, unknown> {
    return this.base()
  }
}

/** What a stats result is made of. */
export interface Moments {
  count: number
  sum: number
  sumSq: number
  min: number
  max: number
}

/** `stats` as OpenSearch renders it; `asString` writes each value as text too (a date field, a `format`). */
export function statsResult(m: Moments, asString?: (v: number) => string): Record<string, unknown> {
  if (m.count === 0) return { count: 0, min: null, max: null, avg: null, sum: m.sum }
  const values = { min: m.min, max: m.max, avg: m.sum / m.count, sum: m.sum }
  return { count: m.count, ...values, ...(asString ? textsOf(values, asString) : {}) }
}

const textsOf = (values: Record<string, number>, asString: (v: number) => string) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [`${k}_as_string`, asString(v)]))

const BOUNDS = ['upper', 'lower', 'upper_population', 'lower_population', 'upper_sampling', 'lower_sampling']

/** What `extended_stats` adds to stats, `sigma` deviations wide; `asString` writes each value as text too. */
export function extendedStatsResult(m: Moments, sigma: number, asString?: (v: number) => string): Record<string, unknown> {
  const n = m.count
  if (n === 0) {
    const none = ['sum_of_squares', 'variance', 'variance_population', 'variance_sampling', 'std_deviation']
    const nulls = Object.fromEntries([...none, 'std_deviation_population', 'std_deviation_sampling'].map((k) => [k, null]))
    return { ...nulls, std_deviation_bounds: Object.fromEntries(BOUNDS.map((k) => [k, null])) }
  }
  const avg = m.sum / n
  // OpenSearch's formulas, so the last digits agree; one value has no sampling variance (NaN).
  const variance = Math.max(0, (m.sumSq - (m.sum * m.sum) / n) / n)
  const sampling = n > 1 ? Math.max(0, (m.sumSq - (m.sum * m.sum) / n) / (n - 1)) : Number.NaN
  const sd = Math.sqrt(variance)
  const sds = Math.sqrt(sampling)
  const values = {
    sum_of_squares: m.sumSq,
    variance,
    variance_population: variance,
    variance_sampling: sampling,
    std_deviation: sd,
    std_deviation_population: sd,
    std_deviation_sampling: sds,
  }
  const bounds = [avg + sigma * sd, avg - sigma * sd, avg + sigma * sd, avg - sigma * sd, avg + sigma * sds, avg - sigma * sds]
  const boundsBy = (f: (v: number) => unknown) => Object.fromEntries(BOUNDS.map((k, i) => [k, f(bounds[i])]))
  const nan = (v: number) => (Number.isNaN(v) ? 'NaN' : v)
  return {
    ...Object.fromEntries(Object.entries(values).map(([k, v]) => [k, nan(v)])),
    std_deviation_bounds: boundsBy(nan),
    ...(asString ? { ...textsOf(values, asString), std_deviation_bounds_as_string: boundsBy(asString) } : {}),
  }
}

class ExtendedStatsAgg extends StatsAgg {
  private readonly sigma: number
  constructor(spec: AggSpec) {
    super(spec)
    const given = spec.params.sigma
    this.sigma = given === undefined ? 2 : Number(given)
    // As OpenSearch's parser: the field fails to parse, caused by a non-number or a negative one.
    const parseFailure = (cause: { type: string; reason: string }) =>
      new StoreError('x_content_parse_exception', 400, '[extended_stats] failed to parse field [sigma]', { caused_by: cause })
    if (Number.isNaN(this.sigma) || typeof given === 'boolean' || isObject(given) || Array.isArray(given))
      throw parseFailure({ type: 'number_format_exception', reason: `For input string: "${String(given)}"` })
    if (this.sigma < 0)
      throw parseFailure({
        type: 'illegal_argument_exception',
        reason: `[sigma] must be greater than or equal to 0. Found [${javaDouble(this.sigma)}] in [${spec.name}]`,
      })
  }
  override result(): Record<string, unknown> {
    return { ...this.base(), ...extendedStatsResult(this.moments, this.sigma) }
  }
}

const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99]

/** What percentiles and percentile_ranks answer from. */
interface Answers {
  /** The value below which `percent` (0..100) of the values fall. */
  percentile(percent: number): number
  /** The percentage of values at or below `value`. */
  rank(value: number): number
}

/** A shard's sketch: a t-digest or an HDR histogram. */
interface Sketch {
  add(v: number): void
}

/**
 * A percentiles method (`tdigest` or `hdr`): a shard's sketch, the form in which the coordinating
 * node receives it, and the answers of the received sketches together (none without values).
 */
interface Method {
  sketch(): Sketch
  send(sketch: Sketch): Sketch
  answers(received: Sketch[], reduced: boolean): Answers | undefined
}

/**
 * One sketch per index read, each standing for an OpenSearch shard (an index has one here).
 * OpenSearch answers a one-shard search from the sketch its shard sends, and reduces those of a
 * search over several shards into one, in shard order (by index name). Documents come index by
 * index, so an index left behind is done: its sketch is sent at once, which keeps only the small
 * received form of each index in memory.
 */
class Shards<S, R> {
  private readonly sent = new Map<string, R | undefined>()
  private live?: { t: TargetCtx; sketch: S }
  private count = 1
  constructor(
    private readonly make: () => S,
    private readonly send: (sketch: S) => R,
  ) {}
  /** An index the search reads: its shard answers even without documents. */
  note(t: TargetCtx): void {
    this.count = Math.max(this.count, t.shards ?? 0)
    if (!this.sent.has(t.name)) this.sent.set(t.name, undefined)
  }
  /** The sketch of `t`'s index, whose documents come now. */
  of(t: TargetCtx): S {
    if (this.live?.t === t) return this.live.sketch
    if (this.live) this.sent.set(this.live.t.name, this.send(this.live.sketch))
    if (this.sent.get(t.name) !== undefined) throw new Error(`documents of index [${t.name}] came after another index's`)
    this.sent.set(t.name, undefined)
    this.count = Math.max(this.count, t.shards ?? 0, this.sent.size)
    this.live = { t, sketch: this.make() }
    return this.live.sketch
  }
  /** What each shard sends, in shard order; it sends once. */
  received(): R[] {
    if (this.live) this.sent.set(this.live.t.name, this.send(this.live.sketch))
    this.live = undefined
    const names = [...this.sent.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
    return names.map((name) => this.sent.get(name) ?? this.send(this.make()))
  }
  get reduced(): boolean {
    return this.count > 1
  }
}

/**
 * t-digests: each shard sends its digest (see MergingDigest.shipped). Several are reduced into a
 * new digest, which is then compressed once before it answers (unlike a single shard's).
 */
function tdigestMethod(compression: number): Method {
  return {
    sketch: () => new MergingDigest(compression),
    send: (sketch) => (sketch as MergingDigest).shipped(),
    answers(received, reduced) {
      const sent = received as MergingDigest[]
      const digest = reduced ? mergedDigest(sent) : sent[0]
      if (digest === undefined || digest.count === 0) return undefined
      return {
        percentile: (percent) => digest.quantile(percent / 100),
        rank: (value) => Math.min(Math.max(digest.cdf(value), 0), 1) * 100,
      }
    },
  }
}

/** Digests merged as OpenSearch's reduce merges them: each one's centroids added to a new digest. */
function mergedDigest(digests: MergingDigest[], compress = true): MergingDigest {
  const merged = new MergingDigest(digests[0].compression)
  for (const d of digests) for (const [mean, weight] of d.centroids()) merged.add(mean, weight)
  if (compress) merged.compress()
  return merged
}

/**
 * HDR histograms of `digits` significant digits; they refuse negative values. Several are
 * reduced into an empty copy of the first, then each added to it.
 */
function hdrMethod(digits: number): Method {
  return {
    sketch: () => new DoubleHdrHistogram(digits),
    send: (sketch) => sketch,
    answers(received, reduced) {
      const all = received as DoubleHdrHistogram[]
      let histogram = all[0]
      if (reduced && histogram !== undefined) {
        histogram = histogram.emptyCopy()
        for (const h of all) histogram.addAll(h)
      }
      if (histogram === undefined || histogram.count === 0) return undefined
      return {
        percentile: (percent) => histogram.valueAtPercentile(percent),
        rank: (value) => Math.min(Math.max(histogram.percentileAtOrBelow(value), 0), 100),
      }
    },
  }
}

/** percentiles and percentile_ranks: the values into the sketches their `tdigest` or `hdr` asks for. */
abstract class SketchAgg extends NumericAgg {
  private readonly method: Method
  private readonly shards: Shards<Sketch, Sketch>
  private current?: Sketch
  private answered?: Answers | null
  constructor(spec: AggSpec) {
    super(spec)
    this.inDocValueOrder = true
    const method = methodOf(spec)
    this.method = method
    this.shards = new Shards(
      () => method.sketch(),
      (sketch) => method.send(sketch),
    )
  }
  see(t: TargetCtx): void {
    this.shards.note(t)
  }
  protected add(v: number): void {
    this.current!.add(v)
  }
  override collect(d: DocView, t: TargetCtx): void {
    this.current = this.shards.of(t)
    try {
      super.collect(d, t)
    } catch (e) {
      // A value the histogram refuses fails OpenSearch's shard: the search fails as a one-shard one does (partial results are not kept).
      if (e instanceof HistogramOutOfBounds) throw new ShardsFailed(e.type, e.reason, t.name, e.status)
      throw e
    }
  }
  /** The answers, worked out once: the shards send their sketches once. */
  protected answers(): Answers | undefined {
    if (this.answered === undefined) this.answered = this.method.answers(this.shards.received(), this.shards.reduced) ?? null
    return this.answered ?? undefined
  }
}

/** The method a percentiles-like aggregation asks for, its `tdigest` and `hdr` objects checked as OpenSearch's parser checks them. */
function methodOf(spec: AggSpec): Method {
  const { tdigest, hdr } = spec.params
  for (const [method, given] of Object.entries({ tdigest, hdr }))
    if (given !== undefined && !isObject(given))
      throw new StoreError('x_content_parse_exception', 400, `[${spec.type}] ${method} doesn't support values of type: ${jsonToken(given)}`)
  if (tdigest !== undefined && hdr !== undefined)
    throw new StoreError('x_content_parse_exception', 400, `Failed to build [${spec.type}] after last required field arrived`, {
      caused_by: { type: 'illegal_argument_exception', reason: 'Only one percentiles method should be declared.' },
    })
  if (isObject(hdr)) {
    const digits = Math.trunc(methodNumber(spec, 'hdr', hdr, 'number_of_significant_value_digits') ?? 3)
    if (digits < 0 || digits > 5)
      throw methodError(spec, 'hdr', {
        type: 'x_content_parse_exception',
        reason: '[hdr] failed to parse field [number_of_significant_value_digits]',
        caused_by: { type: 'illegal_argument_exception', reason: '[numberOfSignificantValueDigits] must be between 0 and 5' },
      })
    return hdrMethod(digits)
  }
  const compression = compressionOf(spec, isObject(tdigest) ? methodNumber(spec, 'tdigest', tdigest, 'compression') : undefined, 100)
  return tdigestMethod(compression)
}

/** The one number a method object holds (numbers in text too), or the parser's words for anything else in it. */
function methodNumber(spec: AggSpec, method: string, given: Record<string, unknown>, field: string): number | undefined {
  for (const key of Object.keys(given))
    if (key !== field) throw methodError(spec, method, { type: 'x_content_parse_exception', reason: `[${method}] unknown field [${key}]` })
  const v = given[field]
  if (v === undefined || typeof v === 'number') return v
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v)
  throw methodError(
    spec,
    method,
    typeof v === 'string'
      ? {
          type: 'x_content_parse_exception',
          reason: `[${method}] failed to parse field [${field}]`,
          caused_by: { type: 'number_format_exception', reason: v.trim() === '' ? 'empty String' : `For input string: "${v}"` },
        }
      : { type: 'x_content_parse_exception', reason: `[${method}] ${field} doesn't support values of type: ${jsonToken(v)}` },
  )
}

const methodError = (spec: AggSpec, method: string, cause: Record<string, unknown>) =>
  new StoreError('x_content_parse_exception', 400, `[${spec.type}] failed to parse field [${method}]`, { caused_by: cause })

class PercentilesAgg extends SketchAgg {
  private readonly percents: number[]
  private readonly keyed: boolean
  constructor(spec: AggSpec) {
    super(spec)
    const p = spec.params
    if (p.percents !== undefined && (!Array.isArray(p.percents) || p.percents.length === 0))
      throw new IllegalArgument(`[percents] must not be empty: [${spec.name}]`)
    // OpenSearch answers them in ascending order, whatever the request's.
    this.percents = (p.percents as number[] | undefined)?.map(Number).sort((a, b) => a - b) ?? DEFAULT_PERCENTS
    for (const x of this.percents)
      if (!(x >= 0 && x <= 100)) throw new IllegalArgument(`percent must be in [0,100], got [${x}]: [${spec.name}]`)
    this.keyed = p.keyed !== false
  }
  result(): Record<string, unknown> {
    return keyedValues(
      this.percents.map((pct) => ({ key: pct, value: this.answers()?.percentile(pct) ?? null })),
      this.keyed,
      this.dateText(),
    )
  }
}

/** A percentiles-like result: `values` as a map by key ("99.0", with `_as_string` for dates), or a list when not keyed. */
function keyedValues(
  entries: Array<{ key: number; value: number | null }>,
  keyed: boolean,
  asString?: (v: number) => string,
): Record<string, unknown> {
  const dated = entries.map((e) => ({ ...e, ...(e.value !== null && asString ? { value_as_string: asString(e.value) } : {}) }))
  if (!keyed) return { values: dated }
  const values: Record<string, unknown> = {}
  for (const e of dated) {
    const k = javaDouble(e.key)
    values[k] = e.value
    if (e.value_as_string !== undefined) values[`${k}_as_string`] = e.value_as_string
  }
  return { values }
}

/** `percentile_ranks`: the percentage of values at or below each of `values`. */
class PercentileRanksAgg extends SketchAgg {
  private readonly values: number[]
  constructor(spec: AggSpec) {
    super(spec)
    const p = spec.params
    if (!Array.isArray(p.values) || p.values.length === 0)
      throw new StoreError('x_content_parse_exception', 400, 'Failed to build [percentile_ranks] after last required field arrived')
    this.values = p.values.map(Number).sort((a, b) => a - b)
  }
  result(): Record<string, unknown> {
    const entries = this.values.map((x) => ({ key: x, value: this.answers()?.rank(x) ?? null }))
    return keyedValues(entries, this.spec.params.keyed !== false, this.dateText())
  }
}

/** `weighted_avg`: sum(value * weight) / sum(weight); each field's `missing` stands in for a document without it. */
class WeightedAvgAgg implements Agg {
  private readonly value: FieldAgg & { values(d: DocView, t: TargetCtx): AggValue[] }
  private readonly weight: FieldAgg & { values(d: DocView, t: TargetCtx): AggValue[] }
  private sum = new CompensatedSum()
  private weights = new CompensatedSum()
  constructor(private readonly spec: AggSpec) {
    this.value = source(spec, 'value')
    this.weight = source(spec, 'weight')
  }
  collect(d: DocView, t: TargetCtx): void {
    const values = this.value.values(d, t)
    const weights = this.weight.values(d, t)
    if (values.length === 0 || weights.length === 0) return
    if (weights.length > 1)
      // OpenSearch answers this 500; the request is what is wrong, so 400 with its type and words.
      throw new StoreError(
        'aggregation_execution_exception',
        400,
        'Encountered more than one weight for a single document. Use a script to combine multiple weights-per-doc into a single value.',
      )
    const w = Number(weights[0].key)
    for (const v of values) {
      this.sum.add(Number(v.key) * w)
      this.weights.add(w)
    }
  }
  result(): Record<string, unknown> {
    return { value: this.weights.value === 0 ? null : this.sum.value / this.weights.value }
  }
}

/** One of weighted_avg's two value sources: a field read as numbers, `missing` when the document has none. */
function source(spec: AggSpec, which: 'value' | 'weight') {
  const p = spec.params[which]
  if (!isObject(p) || typeof p.field !== 'string') throw new IllegalArgument(`Could not find field name [${which}] in multiValuesSource`)
  const missing = p.missing === undefined ? undefined : Number(p.missing)
  return new (class extends FieldAgg {
    values(d: DocView, t: TargetCtx): AggValue[] {
      const read = this.read(d, t)
      for (const v of read)
        if (typeof v.key !== 'number') throw new IllegalArgument(`Expected numeric type on field [${this.field}], but got [keyword]`)
      return read.length === 0 && missing !== undefined ? [{ key: missing }] : read
    }
  })(p.field, 'weighted_avg')
}

/**
 * `median_absolute_deviation`: the median of the distances to the median, both read off
 * digests. An OpenSearch shard answers it from its digest (and with one shard, that answer is
 * kept); with several, the coordinating node merges the digests it receives and answers again.
 */
class MedianAbsoluteDeviationAgg extends NumericAgg {
  private readonly shards: Shards<MergingDigest, Sent>
  private current?: MergingDigest
  private seen?: TargetCtx
  constructor(spec: AggSpec) {
    super(spec)
    this.inDocValueOrder = true
    const compression = compressionOf(spec, spec.params.compression, 1000, true)
    // A shard answers from its digest, which compresses it, then sends it.
    this.shards = new Shards(
      () => new MergingDigest(compression),
      (digest) => ({ answer: digest.count > 0 ? medianAbsoluteDeviation(digest) : null, digest: digest.shipped() }),
    )
  }
  /** Unlike percentiles, it takes numbers only: a date field is refused, with or without values. */
  see(t: TargetCtx): void {
    const type = t.specs?.get(this.field)?.type
    if (type !== undefined && kindOf(type) === 'date')
      throw new IllegalArgument(`Field [${this.field}] of type [${type}] is not supported for aggregation [${this.spec.type}]`)
    this.shards.note(t)
  }
  override collect(d: DocView, t: TargetCtx): void {
    if (this.seen !== t) this.see((this.seen = t))
    this.current = this.shards.of(t)
    super.collect(d, t)
  }
  protected add(v: number): void {
    this.current!.add(v)
  }
  result(): Record<string, unknown> {
    const received = this.shards.received()
    if (!this.shards.reduced) return { value: received[0]?.answer ?? null }
    const merged = mergedDigest(
      received.map((r) => r.digest),
      false,
    )
    return { value: merged.count > 0 ? medianAbsoluteDeviation(merged) : null }
  }
}

/** What a median_absolute_deviation shard sends: its answer and its digest. */
interface Sent {
  answer: number | null
  digest: MergingDigest
}

/** OpenSearch's: the digest's median, then the median of a digest of each centroid's distance to it, added once per value it holds. */
function medianAbsoluteDeviation(digest: MergingDigest): number {
  const median = digest.quantile(0.5)
  const deviations = new MergingDigest(digest.compression)
  for (const [mean, weight] of digest.centroids()) for (let i = 0; i < weight; i++) deviations.add(Math.abs(median - mean))
  return deviations.quantile(0.5)
}

/** A digest's `compression` parameter, checked as OpenSearch checks it (`positive`: 0 is refused too). */
function compressionOf(spec: AggSpec, given: unknown, fallback: number, positive = false): number {
  const c = given === undefined ? fallback : Number(given)
  const why = `[compression] must be greater than ${positive ? '' : 'or equal to '}0. Found [${c.toFixed(1)}] in [${spec.name}]`
  // median_absolute_deviation's parser refuses it; percentiles' builder does.
  if (positive && !(c > 0)) throw new FieldParseError(spec.type, 'compression', why)
  if (!(c >= 0)) throw new IllegalArgument(why)
  return c
}

defineAgg('stats', (spec) => () => new StatsAgg(spec))
defineCheckedAgg('extended_stats', (spec) => new ExtendedStatsAgg(spec))
defineCheckedAgg('percentiles', (spec) => new PercentilesAgg(spec))
defineCheckedAgg('percentile_ranks', (spec) => new PercentileRanksAgg(spec))
defineCheckedAgg('weighted_avg', (spec) => new WeightedAvgAgg(spec))
defineCheckedAgg('median_absolute_deviation', (spec) => new MedianAbsoluteDeviationAgg(spec))

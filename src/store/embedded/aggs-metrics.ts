/**
 * Numeric metric aggregations beyond the single-value ones: `stats`, `extended_stats` and
 * `percentiles` (a merging digest with bounded memory, as OpenSearch's TDigest).
 */
import { CompensatedSum } from './compensated-sum'
import { FieldParseError, IllegalArgument, ParsingError, StoreError } from '../errors'
import { type DocView, isObject } from '../query/doc'
import { type Agg, type AggSpec, type AggValue, defineAgg, FieldAgg, fieldParam, type TargetCtx } from './aggs'

/** Numbers of a field in a document (dates as millis); `asDate` is set when the field holds dates. */
abstract class NumericAgg extends FieldAgg implements Agg {
  protected asDate = false
  constructor(protected readonly spec: AggSpec) {
    super(fieldParam(spec.type, spec.params), spec.type)
  }
  protected abstract add(v: number): void
  abstract result(): Record<string, unknown>
  collect(d: DocView, t: TargetCtx): void {
    let values = this.read(d, t)
    if (values.length === 0 && this.spec.params.missing !== undefined) values = [{ key: Number(this.spec.params.missing) }]
    for (const v of values) {
      if (typeof v.key !== 'number')
        throw new IllegalArgument(`Field [${this.field}] of type [keyword] is not supported for aggregation [${this.spec.type}]`)
      if (v.date) this.asDate = true
      this.add(v.key)
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
    return statsResult(this.moments, this.asDate ? (v) => new Date(v).toISOString() : undefined)
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
    this.sigma = spec.params.sigma === undefined ? 2 : Number(spec.params.sigma)
    if (!(this.sigma >= 0))
      throw new IllegalArgument(`[sigma] must be greater than or equal to 0. Found [${spec.params.sigma}] in [${spec.name}]`)
  }
  override result(): Record<string, unknown> {
    return { ...this.base(), ...extendedStatsResult(this.moments, this.sigma) }
  }
}

/**
 * A merging t-digest: values are buffered, then merged into at most about `compression`
 * centroids whose size is bounded by q(1-q), so memory stays bounded and the tails stay exact.
 */
export class Digest {
  private means: number[] = []
  private weights: number[] = []
  private buffer: number[] = []
  private bufferWeights: number[] = []
  private total = 0
  min = Infinity
  max = -Infinity

  constructor(private readonly compression = 100) {}

  /** `v` seen `w` times (a centroid of another digest: median_absolute_deviation's deviations). */
  add(v: number, w = 1): void {
    this.buffer.push(v)
    this.bufferWeights.push(w)
    this.total += w
    if (v < this.min) this.min = v
    if (v > this.max) this.max = v
    if (this.buffer.length >= 20 * this.compression) this.merge()
  }

  /** The centroids, merged: [mean, weight] pairs in ascending order. */
  centroids(): Array<[number, number]> {
    this.merge()
    return this.means.map((m, i) => [m, this.weights[i]])
  }

  get count(): number {
    return this.total
  }

  private merge(): void {
    if (this.buffer.length === 0) return
    const items: Array<[number, number]> = this.means.map((m, i) => [m, this.weights[i]])
    this.buffer.forEach((v, i) => items.push([v, this.bufferWeights[i]]))
    this.buffer = []
    this.bufferWeights = []
    items.sort((a, b) => a[0] - b[0])
    const means: number[] = []
    const weights: number[] = []
    let seen = 0
    for (const [m, w] of items) {
      const last = means.length - 1
      if (last >= 0) {
        const q = (seen - weights[last] / 2 + (weights[last] + w) / 2) / this.total
        const limit = Math.max(1, (4 * this.total * q * (1 - q)) / this.compression)
        if (weights[last] + w <= limit) {
          means[last] = (means[last] * weights[last] + m * w) / (weights[last] + w)
          weights[last] += w
          seen += w
          continue
        }
      }
      means.push(m)
      weights.push(w)
      seen += w
    }
    this.means = means
    this.weights = weights
  }

  /** The value at quantile q (0..1), as t-digest's MergingDigest answers it (singletons exactly). */
  quantile(q: number): number | null {
    this.merge()
    const total = this.total
    const n = this.means.length
    if (total === 0) return null
    if (n === 1) return this.means[0]
    const mean = this.means
    const weight = this.weights
    const index = q * total
    if (index < 1) return this.min
    if (weight[0] > 1 && index < weight[0] / 2) return this.min + ((index - 1) / (weight[0] / 2 - 1)) * (mean[0] - this.min)
    if (index > total - 1) return this.max
    if (weight[n - 1] > 1 && total - index <= weight[n - 1] / 2)
      return this.max - ((total - index - 1) / (weight[n - 1] / 2 - 1)) * (this.max - mean[n - 1])
    let so = weight[0] / 2
    for (let i = 0; i < n - 1; i++) {
      const dw = (weight[i] + weight[i + 1]) / 2
      if (so + dw > index) {
        let leftUnit = 0
        if (weight[i] === 1) {
          if (index - so < 0.5) return mean[i]
          leftUnit = 0.5
        }
        let rightUnit = 0
        if (weight[i + 1] === 1) {
          if (so + dw - index <= 0.5) return mean[i + 1]
          rightUnit = 0.5
        }
        const z1 = index - so - leftUnit
        const z2 = so + dw - index - rightUnit
        return (mean[i] * z2 + mean[i + 1] * z1) / (z1 + z2)
      }
      so += dw
    }
    const z1 = index - total - weight[n - 1] / 2
    const z2 = weight[n - 1] / 2 - z1
    return (mean[n - 1] * z1 + this.max * z2) / (z1 + z2)
  }
  /**
   * The share of values at or below x (0..1), as t-digest's MergingDigest answers it: half of
   * the weight of centroids exactly at x counts, singletons are never interpolated.
   */
  cdf(x: number): number | null {
    this.merge()
    const { means: mean, weights: weight, total, min, max } = this
    const n = mean.length
    if (n === 0) return null
    if (x < min) return 0
    if (x > max) return 1
    if (n === 1) return max - min < Number.MIN_VALUE ? 0.5 : (x - min) / (max - min)
    if (x < mean[0]) return x === min ? 0.5 / total : (1 + ((x - min) / (mean[0] - min)) * (weight[0] / 2 - 1)) / total
    if (x > mean[n - 1]) return x === max ? 1 - 0.5 / total : 1 - (1 + ((max - x) / (max - mean[n - 1])) * (weight[n - 1] / 2 - 1)) / total
    let so = 0
    for (let i = 0; i < n - 1; i++) {
      if (mean[i] === x) {
        let dw = 0
        for (; i < n && mean[i] === x; i++) dw += weight[i]
        return (so + dw / 2) / total
      }
      if (x < mean[i + 1]) return (so + between(mean, weight, i, x)) / total
      so += weight[i]
    }
    return 1 - 0.5 / total
  }
}

/** The weight below x from the middle of centroid i, x between centroids i and i + 1 (singletons are not spread). */
function between(mean: number[], weight: number[], i: number, x: number): number {
  if (!(mean[i + 1] - mean[i] > 0)) return (weight[i] + weight[i + 1]) / 2
  if (weight[i] === 1 && weight[i + 1] === 1) return 1
  const left = weight[i] === 1 ? 0.5 : 0
  const right = weight[i] !== 1 && weight[i + 1] === 1 ? 0.5 : 0
  const dw = (weight[i] + weight[i + 1]) / 2 - left - right
  return weight[i] / 2 + left + (dw * (x - mean[i])) / (mean[i + 1] - mean[i])
}

const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99]

class PercentilesAgg extends NumericAgg {
  private readonly digest: Digest
  private readonly percents: number[]
  private readonly keyed: boolean
  constructor(spec: AggSpec) {
    super(spec)
    const p = spec.params
    if (p.percents !== undefined && (!Array.isArray(p.percents) || p.percents.length === 0))
      throw new IllegalArgument(`[percents] must not be empty: [${spec.name}]`)
    this.percents = (p.percents as number[] | undefined)?.map(Number) ?? DEFAULT_PERCENTS
    for (const x of this.percents)
      if (!(x >= 0 && x <= 100)) throw new IllegalArgument(`percent must be in [0,100], got [${x}]: [${spec.name}]`)
    this.keyed = p.keyed !== false
    if (p.hdr !== undefined) throw new ParsingError('[hdr] percentiles are not supported by this server')
    this.digest = new Digest(compressionOf(spec, (p.tdigest as { compression?: unknown } | undefined)?.compression, 100))
  }
  protected add(v: number): void {
    this.digest.add(v)
  }
  result(): Record<string, unknown> {
    return keyedValues(
      this.percents.map((pct) => ({ key: pct, value: this.digest.quantile(pct / 100) })),
      this.keyed,
      this.asDate,
    )
  }
}

/** A percentiles-like result: `values` as a map by key ("99.0", with `_as_string` for dates), or a list when not keyed. */
function keyedValues(entries: Array<{ key: number; value: number | null }>, keyed: boolean, asDate: boolean): Record<string, unknown> {
  const dated = entries.map((e) => ({ ...e, ...(e.value !== null && asDate ? { value_as_string: new Date(e.value).toISOString() } : {}) }))
  if (!keyed) return { values: dated }
  const values: Record<string, unknown> = {}
  for (const e of dated) {
    const k = javaDouble(e.key)
    values[k] = e.value
    if (e.value_as_string !== undefined) values[`${k}_as_string`] = e.value_as_string
  }
  return { values }
}

/** A double as Java prints it (Double.toString): the keys OpenSearch gives percentiles ("99.0", "1.7040672E12"). */
function javaDouble(x: number): string {
  const a = Math.abs(x)
  if (a === 0 || (a >= 1e-3 && a < 1e7)) return Number.isInteger(x) ? `${x}.0` : String(x)
  const [mantissa, exponent] = x.toExponential().split('e')
  return `${mantissa.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`
}

/** `percentile_ranks`: the percentage of values at or below each of `values`. */
class PercentileRanksAgg extends NumericAgg {
  private readonly digest: Digest
  private readonly values: number[]
  constructor(spec: AggSpec) {
    super(spec)
    const p = spec.params
    if (!Array.isArray(p.values) || p.values.length === 0)
      throw new StoreError('x_content_parse_exception', 400, 'Failed to build [percentile_ranks] after last required field arrived')
    this.values = p.values.map(Number)
    if (p.hdr !== undefined) throw new ParsingError('[hdr] percentiles are not supported by this server')
    this.digest = new Digest(compressionOf(spec, (p.tdigest as { compression?: unknown } | undefined)?.compression, 100))
  }
  protected add(v: number): void {
    this.digest.add(v)
  }
  result(): Record<string, unknown> {
    const entries = this.values.map((x) => {
      const share = this.digest.cdf(x)
      return { key: x, value: share === null ? null : share * 100 }
    })
    return keyedValues(entries, this.spec.params.keyed !== false, this.asDate)
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
 * digests as OpenSearch does (the deviations of the values' centroids, with their weights).
 */
class MedianAbsoluteDeviationAgg extends NumericAgg {
  private readonly digest: Digest
  private readonly compression: number
  constructor(spec: AggSpec) {
    super(spec)
    this.compression = compressionOf(spec, spec.params.compression, 1000, true)
    this.digest = new Digest(this.compression)
  }
  protected add(v: number): void {
    this.digest.add(v)
  }
  result(): Record<string, unknown> {
    const median = this.digest.quantile(0.5)
    if (median === null) return { value: null }
    const deviations = new Digest(this.compression)
    for (const [mean, weight] of this.digest.centroids()) deviations.add(Math.abs(median - mean), weight)
    return { value: deviations.quantile(0.5) }
  }
}

/** A digest's `compression` parameter, checked as OpenSearch checks it (`positive`: 0 is refused too). */
function compressionOf(spec: AggSpec, given: unknown, fallback: number, positive = false): number {
  const c = given === undefined ? fallback : Number(given)
  const why = `[compression] must be greater than ${positive ? '' : 'or equal to '}0. Found [${c.toFixed(1)}] in [${spec.name}]`
  // median_absolute_deviation's parser refuses it; percentiles' builder does.
  if (positive && !(c > 0)) throw new FieldParseError(spec.type, 'compression', why)
  if (!(c >= 0)) throw new IllegalArgument(why)
  return Math.max(c, 1)
}

defineAgg('stats', (spec) => () => new StatsAgg(spec))
defineAgg('extended_stats', (spec) => {
  new ExtendedStatsAgg(spec)
  return () => new ExtendedStatsAgg(spec)
})
defineAgg('percentiles', (spec) => {
  new PercentilesAgg(spec)
  return () => new PercentilesAgg(spec)
})
defineAgg('percentile_ranks', (spec) => {
  new PercentileRanksAgg(spec)
  return () => new PercentileRanksAgg(spec)
})
defineAgg('weighted_avg', (spec) => {
  new WeightedAvgAgg(spec)
  return () => new WeightedAvgAgg(spec)
})
defineAgg('median_absolute_deviation', (spec) => {
  new MedianAbsoluteDeviationAgg(spec)
  return () => new MedianAbsoluteDeviationAgg(spec)
})

/**
 * Numeric metric aggregations beyond the single-value ones: `stats`, `extended_stats` and
 * `percentiles` (a merging digest with bounded memory, as OpenSearch's TDigest).
 */
import { CompensatedSum } from './compensated-sum'
import { IllegalArgument, ParsingError } from '../errors'
import type { DocView } from '../query/doc'
import { type Agg, type AggSpec, defineAgg, FieldAgg, fieldParam, type TargetCtx } from './aggs'

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
  protected base(): Record<string, unknown> {
    const empty = this.count === 0
    const out: Record<string, unknown> = {
      count: this.count,
      min: empty ? null : this.min,
      max: empty ? null : this.max,
      avg: empty ? null : this.sum / this.count,
      sum: this.sum,
    }
    if (this.asDate && !empty) {
      out.min_as_string = new Date(this.min).toISOString()
      out.max_as_string = new Date(this.max).toISOString()
      out.avg_as_string = new Date(this.sum / this.count).toISOString()
      out.sum_as_string = new Date(this.sum).toISOString()
    }
    return out
  }
  result(): Record<string, unknown> {
    return this.base()
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
    const n = this.count
    if (n === 0) {
      const none = null
      return {
        ...this.base(),
        sum_of_squares: none,
        variance: none,
        variance_population: none,
        variance_sampling: none,
        std_deviation: none,
        std_deviation_population: none,
        std_deviation_sampling: none,
        std_deviation_bounds: {
          upper: none,
          lower: none,
          upper_population: none,
          lower_population: none,
          upper_sampling: none,
          lower_sampling: none,
        },
      }
    }
    const avg = this.sum / n
    // OpenSearch's formulas, so the last digits agree.
    const variance = Math.max(0, (this.sumSq - (this.sum * this.sum) / n) / n)
    const sampling = n > 1 ? Math.max(0, (this.sumSq - (this.sum * this.sum) / n) / (n - 1)) : Number.NaN
    const sd = Math.sqrt(variance)
    const sds = Math.sqrt(sampling)
    const k = this.sigma
    return {
      ...this.base(),
      sum_of_squares: this.sumSq,
      variance,
      variance_population: variance,
      variance_sampling: Number.isNaN(sampling) ? 'NaN' : sampling,
      std_deviation: sd,
      std_deviation_population: sd,
      std_deviation_sampling: Number.isNaN(sds) ? 'NaN' : sds,
      std_deviation_bounds: {
        upper: avg + k * sd,
        lower: avg - k * sd,
        upper_population: avg + k * sd,
        lower_population: avg - k * sd,
        upper_sampling: Number.isNaN(sds) ? 'NaN' : avg + k * sds,
        lower_sampling: Number.isNaN(sds) ? 'NaN' : avg - k * sds,
      },
    }
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
  private total = 0
  min = Infinity
  max = -Infinity

  constructor(private readonly compression = 100) {}

  add(v: number): void {
    this.buffer.push(v)
    this.total++
    if (v < this.min) this.min = v
    if (v > this.max) this.max = v
    if (this.buffer.length >= 20 * this.compression) this.merge()
  }

  get count(): number {
    return this.total
  }

  private merge(): void {
    if (this.buffer.length === 0) return
    const items: Array<[number, number]> = this.means.map((m, i) => [m, this.weights[i]])
    for (const v of this.buffer) items.push([v, 1])
    this.buffer = []
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
    const td = p.tdigest as { compression?: unknown } | undefined
    if (p.hdr !== undefined) throw new ParsingError('[hdr] percentiles are not supported by this server')
    const compression = td?.compression === undefined ? 100 : Number(td.compression)
    if (!(compression >= 0))
      throw new IllegalArgument(
        `[compression] must be greater than or equal to 0. Found [${Number(compression).toFixed(1)}] in [${spec.name}]`,
      )
    this.digest = new Digest(Math.max(compression, 1))
  }
  protected add(v: number): void {
    this.digest.add(v)
  }
  result(): Record<string, unknown> {
    const entries = this.percents.map((pct) => {
      const v = this.digest.quantile(pct / 100)
      return { key: pct, value: v, ...(v !== null && this.asDate ? { value_as_string: new Date(v).toISOString() } : {}) }
    })
    if (!this.keyed) return { values: entries }
    const values: Record<string, unknown> = {}
    for (const e of entries) {
      const k = Number.isInteger(e.key) ? `${e.key}.0` : String(e.key)
      values[k] = e.value
      if (e.value_as_string !== undefined) values[`${k}_as_string`] = e.value_as_string
    }
    return { values }
  }
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

/**
 * `auto_date_histogram`: a date histogram that picks its own interval so that at most `buckets`
 * (10) buckets answer, as OpenSearch's one-shard search picks it: the finest of second, minute,
 * hour, day, month and year whose buckets (and span) the shard keeps, merged to coarser roundings
 * while too many remain, gaps filled with empty buckets, then consecutive buckets grouped by the
 * rounding's inner intervals (5 seconds, 3 hours, 7 days, 3 months, 10 years...) into at most
 * `buckets`; `interval` names the result (`7d`).
 *
 * The interval is known once every document is seen, so each document's dates are kept until the
 * answer: counts per date without sub-aggregations; the documents themselves with them, at most
 * MAX_DEFERRED (a clear 400 beyond), since a sub-aggregation cannot be merged afterwards here.
 */
import { FieldParseError, IllegalArgument } from '../errors'
import type { DocView } from '../query/doc'
import { type Zone, zoneOf } from '../query/zones'
import {
  type Agg,
  type AggSpec,
  type Aggs,
  type BucketBudget,
  defineCheckedAgg,
  FieldAgg,
  fieldParam,
  instantiate,
  results,
  type TargetCtx,
} from './aggs'
import { type CalendarUnit, formatInZone, nextCalendar, roundCalendar } from './aggs-time'

interface Rounding {
  unit: CalendarUnit
  /** Milliseconds of one unit, roughly (a month is 30 days). */
  rough: number
  abbrev: string
  inner: number[]
}

const DAY = 86_400_000
const ROUNDINGS: Rounding[] = [
  { unit: 'second', rough: 1000, abbrev: 's', inner: [1, 5, 10, 30] },
  { unit: 'minute', rough: 60_000, abbrev: 'm', inner: [1, 5, 10, 30] },
  { unit: 'hour', rough: 3_600_000, abbrev: 'h', inner: [1, 3, 12] },
  { unit: 'day', rough: DAY, abbrev: 'd', inner: [1, 7] },
  { unit: 'month', rough: 30 * DAY, abbrev: 'M', inner: [1, 3] },
  { unit: 'year', rough: 365 * DAY, abbrev: 'y', inner: [1, 5, 10, 20, 50, 100] },
]
const maxInner = (r: Rounding) => r.inner[r.inner.length - 1]
const LAST = ROUNDINGS.length - 1

/** Documents kept for sub-aggregations until the interval is known. */
const MAX_DEFERRED = 10_000
/** Rounding steps counted or filled at most: a huge `buckets` over a long span is refused, not walked for minutes. */
const MAX_STEPS = 1_000_000

function span(keys: Iterable<number>): number {
  let lo = Infinity
  let hi = -Infinity
  for (const k of keys) {
    if (k < lo) lo = k
    if (k > hi) hi = k
  }
  return hi - lo
}

/** One document's dates (distinct, ascending), and the document when sub-aggregations read it. */
interface Kept {
  dates: number[]
  d?: DocView
  t?: TargetCtx
}

class AutoDateHistogramAgg extends FieldAgg implements Agg {
  private readonly target: number
  private readonly first: number
  private readonly zone: Zone
  private readonly format?: string
  private fieldFormat?: string
  /** Documents with one date and no sub-aggregations: how many per date. */
  private readonly single = new Map<number, number>()
  private readonly kept: Kept[] = []
  /** The sub-aggregations' definitions, parsed once (not per document). */
  private readonly subs: Aggs

  constructor(
    private readonly spec: AggSpec,
    private readonly budget?: BucketBudget,
  ) {
    super(fieldParam(spec.type, spec.params), spec.type)
    const p = spec.params
    this.target = p.buckets === undefined ? 10 : Number(p.buckets)
    if (!Number.isInteger(this.target)) throw new IllegalArgument(`[buckets] must be an integer in [${spec.name}]`)
    if (this.target <= 0) throw new FieldParseError(spec.type, 'buckets', `buckets must be greater than 0 for [${spec.name}]`)
    const min = p.minimum_interval === undefined ? 0 : ROUNDINGS.findIndex((r) => r.unit === p.minimum_interval)
    if (min < 0)
      throw new FieldParseError(spec.type, 'minimum_interval', 'minimum_interval must be one of [[second, minute, day, hour, year, month]]')
    this.first = min
    this.zone = zoneOf(typeof p.time_zone === 'string' ? p.time_zone : undefined)
    this.format = typeof p.format === 'string' ? p.format : undefined
    this.subs = spec.subs()
  }

  see(t: TargetCtx): void {
    this.fieldFormat ??= t.specs?.get(this.field)?.format
  }

  collect(d: DocView, t: TargetCtx): void {
    this.see(t)
    const dates = [...new Set(this.read(d, t).flatMap((v) => (typeof v.key === 'number' ? [v.key] : [])))].sort((a, b) => a - b)
    if (dates.length === 0) return
    const subs = this.subs.size > 0
    if (!subs && dates.length === 1) {
      const n = this.single.get(dates[0])
      if (n === undefined) this.budget?.candidate()
      this.single.set(dates[0], (n ?? 0) + 1)
      return
    }
    if (subs && this.kept.length >= MAX_DEFERRED)
      throw new IllegalArgument(
        `[${this.spec.name}]: auto_date_histogram with sub-aggregations reads at most [${MAX_DEFERRED}] documents here; narrow the query or use date_histogram`,
      )
    this.budget?.candidate()
    this.kept.push(subs ? { dates, d, t } : { dates })
  }

  private round(v: number, idx: number): number {
    return roundCalendar(v, ROUNDINGS[idx].unit, this.zone)
  }

  private next(key: number, idx: number): number {
    return nextCalendar(key, ROUNDINGS[idx].unit, this.zone)
  }

  /** The rounding the shard ends its collection at: the finest whose buckets and span it keeps. */
  private shardRounding(dates: number[]): number {
    let idx = this.first
    for (; idx < LAST; idx++) {
      const keys = new Set(dates.map((v) => this.round(v, idx)))
      const r = ROUNDINGS[idx]
      if (keys.size <= this.target * maxInner(r) && span(keys) <= this.target * r.rough * maxInner(r)) break
    }
    return idx
  }

  /** InternalAutoDateHistogram.getAppropriateRounding: the rounding whose steps from first to last key fit. */
  private appropriate(minKey: number, maxKey: number, idx: number): number {
    if (idx === LAST) return idx
    let cur = idx
    for (let i = idx + 1; i < ROUNDINGS.length; i++) {
      if (Math.trunc((maxKey - minKey) / ROUNDINGS[i].rough) < this.target * maxInner(ROUNDINGS[i])) {
        cur = i - 1
        break
      }
    }
    let required: number
    do {
      required = 0
      for (let key = minKey; key < maxKey && required <= MAX_STEPS; key = this.next(key, cur)) required++
      cur++
    } while (required > this.target * maxInner(ROUNDINGS[cur - 1]) && cur < ROUNDINGS.length)
    return cur - 1
  }

  result(): Record<string, unknown> {
    const all: Array<{ dates: number[]; weight: number; kept?: Kept }> = [
      ...[...this.single].map(([v, n]) => ({ dates: [v], weight: n })),
      ...this.kept.map((k) => ({ dates: k.dates, weight: 1, kept: k })),
    ]
    if (all.length === 0) return { buckets: [], interval: `1${ROUNDINGS[this.first].abbrev}` }
    // The shard's buckets: a document counts once in each of its keys at the shard's rounding.
    const shard = this.shardRounding(all.flatMap((e) => e.dates))
    const shardKeys = (dates: number[]) => new Set(dates.map((v) => this.round(v, shard)))
    const counts = new Map<number, number>()
    for (const e of all) for (const k of shardKeys(e.dates)) counts.set(k, (counts.get(k) ?? 0) + e.weight)
    let idx = shard
    let keys = [...counts.keys()].sort((a, b) => a - b)
    const coarser = (to: number) => (keys = [...new Set(keys.map((k) => this.round(k, to)))])
    const mergeIfNeeded = () => {
      while (keys.length > this.target * maxInner(ROUNDINGS[idx]) && idx < LAST) coarser(++idx)
    }
    mergeIfNeeded()
    // Empty buckets between the first and last key, at the rounding that fits them.
    idx = this.appropriate(keys[0], keys[keys.length - 1], idx)
    coarser(idx)
    const filled: number[] = []
    for (let key = keys[0]; key <= keys[keys.length - 1]; key = this.next(key, idx)) {
      if (filled.length >= MAX_STEPS)
        throw new IllegalArgument(`[${this.spec.name}]: [buckets] ${this.target} over this span makes more than [${MAX_STEPS}] buckets`)
      filled.push(key)
    }
    keys = filled
    mergeIfNeeded()
    // Consecutive buckets grouped by the rounding's smallest inner interval that fits the target.
    const rounding = ROUNDINGS[idx]
    const inner = keys.length > this.target ? (rounding.inner.find((n) => Math.ceil(keys.length / n) <= this.target) ?? 1) : 1
    const starts = keys.filter((_, i) => i % inner === 0)
    this.budget?.add(starts.length)
    const buckets = starts.map((key) => ({ key, count: 0, subs: instantiate(this.subs, this.budget) }))
    // Each document to the bucket holding each of its keys at the shard's rounding (summed as the merges sum them).
    const at = (k: number) => {
      let lo = 0
      let hi = buckets.length - 1
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1
        if (buckets[mid].key <= k) lo = mid
        else hi = mid - 1
      }
      return buckets[lo]
    }
    for (const [k, n] of counts) at(this.round(k, idx)).count += n
    for (const e of all)
      if (e.kept?.d)
        for (const k of shardKeys(e.dates)) for (const sub of at(this.round(k, idx)).subs.values()) sub.collect(e.kept.d, e.kept.t!)
    return {
      buckets: buckets.map((b) => ({
        key_as_string: formatInZone(b.key, this.zone, this.format ?? this.fieldFormat),
        key: b.key,
        doc_count: b.count,
        ...results(b.subs),
      })),
      interval: `${inner}${rounding.abbrev}`,
    }
  }
}

defineCheckedAgg('auto_date_histogram', (spec, budget) => new AutoDateHistogramAgg(spec, budget))

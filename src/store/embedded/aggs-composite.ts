/**
 * `composite`: buckets over the combinations of several sources (`terms`, `histogram`,
 * `date_histogram`), in key order, paged with `after`. Memory is bounded: once more than a few
 * pages of combinations are held, only the first `size` are kept and any later combination
 * past the last kept one is ignored (it can never be on this page).
 */
import { IllegalArgument, ParsingError } from '../errors'
import { toNumber } from '../query/compile'
import { parseDate } from '../query/dates'
import type { DocView } from '../query/doc'
import { isObject } from '../query/doc'
import {
  type Agg,
  type AggSpec,
  type Aggs,
  defineAgg,
  instantiate,
  type Key,
  reader,
  results,
  type TargetCtx,
  type ValueReader,
} from './aggs'
import { compareKeys } from './aggs-order'
import { calendarUnit, dateText, fixedInterval, roundCalendar, roundFixed } from './aggs-time'
import { zoneOf } from '../query/zones'

type Value = Key | null

interface Source {
  name: string
  field: string
  order: 1 | -1
  missingBucket: boolean
  /** Turns a read value into the source's key (undefined: not a key). */
  key: (v: { key: Key }) => Value | undefined
  readers: Map<string, ValueReader | undefined>
  type: string
  /** A date_histogram source's `format`: its keys are rendered in it, and `after` read with it. */
  format?: string
}

function parseSource(def: unknown): Source {
  if (!isObject(def) || Object.keys(def).length !== 1) throw new ParsingError('[sources] must hold objects with one named source each')
  const [name] = Object.keys(def)
  const body = def[name]
  if (!isObject(body) || Object.keys(body).length !== 1) throw new ParsingError(`source [${name}] must have one type`)
  const [type] = Object.keys(body)
  const p = body[type]
  if (!isObject(p)) throw new ParsingError(`source [${name}] must be an object`)
  if (typeof p.field !== 'string') throw new IllegalArgument(`Required [field] for source [${name}]`)
  const base = {
    name,
    field: p.field,
    order: (p.order === 'desc' ? -1 : 1) as 1 | -1,
    missingBucket: p.missing_bucket === true,
    readers: new Map(),
    type,
  }
  switch (type) {
    case 'terms':
      return { ...base, key: (v) => v.key }
    case 'histogram': {
      const interval = Number(p.interval)
      if (!(interval > 0)) throw new IllegalArgument(`[interval] must be greater than 0 for histogram source [${name}]`)
      return {
        ...base,
        key: (v) => {
          const n = typeof v.key === 'number' ? v.key : toNumber(v.key)
          return n === undefined ? undefined : Math.floor(n / interval) * interval
        },
      }
    }
    case 'date_histogram': {
      const zone = zoneOf(typeof p.time_zone === 'string' ? p.time_zone : undefined)
      const given = p.calendar_interval ?? p.fixed_interval ?? p.interval
      if (given === undefined) throw new IllegalArgument('Invalid interval specified, must be non-null and non-empty')
      const unit = p.fixed_interval === undefined ? calendarUnit(String(given)) : undefined
      const fixed = unit ? undefined : fixedInterval(String(given))
      return {
        ...base,
        ...(typeof p.format === 'string' ? { format: p.format } : {}),
        key: (v) => {
          const ms = typeof v.key === 'number' ? v.key : parseDate(v.key)
          if (ms === undefined) return undefined
          return unit ? roundCalendar(ms, unit, zone) : roundFixed(ms, fixed!, 0, zone)
        },
      }
    }
    default:
      throw new ParsingError(`Unknown source type [${type}] in composite aggregation`)
  }
}

function compareTuples(a: Value[], b: Value[], sources: Source[]): number {
  for (let i = 0; i < sources.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x === y) continue
    // Missing values sort first in ascending order, as OpenSearch's default missing_order.
    if (x === null) return -sources[i].order
    if (y === null) return sources[i].order
    const c = compareKeys(x, y) * sources[i].order
    if (c !== 0) return c
  }
  return 0
}

class CompositeAgg implements Agg {
  private readonly sources: Source[]
  private readonly size: number
  private readonly after?: Value[]
  private buckets = new Map<string, { key: Value[]; count: number; subs: Map<string, Agg> }>()
  private ceiling?: Value[]

  constructor(
    spec: AggSpec,
    private readonly subs: Aggs,
  ) {
    const p = spec.params
    if (!Array.isArray(p.sources) || p.sources.length === 0) throw new IllegalArgument(`Composite [sources] cannot be null or empty`)
    this.sources = p.sources.map(parseSource)
    this.size = p.size === undefined ? 10 : Number(p.size)
    if (!Number.isInteger(this.size) || this.size < 1)
      throw new IllegalArgument(`[size] must be greater than 0. Found [${p.size}] in [${spec.name}]`)
    if (p.after !== undefined) {
      if (!isObject(p.after)) throw new ParsingError('[after] must be an object')
      const after = p.after
      this.after = this.sources.map((s) => {
        if (!(s.name in after)) throw new IllegalArgument(`[after] has no value for source [${s.name}]`)
        const v = after[s.name]
        if (v === null) return null
        // A formatted key comes back as its text.
        return s.format !== undefined && typeof v === 'string' ? (parseDate(v, s.format) ?? v) : (v as Key)
      })
    }
  }

  private keysOf(s: Source, d: DocView, t: TargetCtx): Value[] {
    let r = s.readers.get(t.name)
    if (!s.readers.has(t.name)) s.readers.set(t.name, (r = reader(s.field, t, 'composite')))
    const out = new Set<Value>()
    for (const v of r ? r(d) : []) {
      const k = s.key(v)
      if (k !== undefined) out.add(k)
    }
    if (out.size === 0 && s.missingBucket) out.add(null)
    return [...out]
  }

  collect(d: DocView, t: TargetCtx): void {
    let tuples: Value[][] = [[]]
    for (const s of this.sources) {
      const ks = this.keysOf(s, d, t)
      if (ks.length === 0) return
      tuples = tuples.flatMap((tuple) => ks.map((k) => [...tuple, k]))
    }
    for (const tuple of tuples) {
      if (this.after && compareTuples(tuple, this.after, this.sources) <= 0) continue
      if (this.ceiling && compareTuples(tuple, this.ceiling, this.sources) > 0) continue
      const id = JSON.stringify(tuple)
      let b = this.buckets.get(id)
      if (!b) this.buckets.set(id, (b = { key: tuple, count: 0, subs: instantiate(this.subs) }))
      b.count++
      for (const s of b.subs.values()) s.collect(d, t)
    }
    if (this.buckets.size > 4 * this.size + 1000) this.prune()
  }

  private sorted() {
    return [...this.buckets.values()].sort((a, b) => compareTuples(a.key, b.key, this.sources))
  }

  private prune(): void {
    const keep = this.sorted().slice(0, this.size)
    this.buckets = new Map(keep.map((b) => [JSON.stringify(b.key), b]))
    this.ceiling = keep[keep.length - 1].key
  }

  result(): Record<string, unknown> {
    const page = this.sorted().slice(0, this.size)
    const keyObject = (tuple: Value[]) =>
      Object.fromEntries(
        this.sources.map((s, i) => [
          s.name,
          s.format !== undefined && typeof tuple[i] === 'number' ? dateText(tuple[i], s.format) : tuple[i],
        ]),
      )
    return {
      ...(page.length > 0 ? { after_key: keyObject(page[page.length - 1].key) } : {}),
      buckets: page.map((b) => ({ key: keyObject(b.key), doc_count: b.count, ...results(b.subs) })),
    }
  }
}

defineAgg('composite', (spec) => {
  new CompositeAgg(spec, new Map())
  return () => new CompositeAgg(spec, spec.subs())
})

/**
 * `multi_terms`: a terms aggregation over combinations of several fields' values (one bucket per
 * combination a document holds), keyed by the list of values and `key_as_string` joined with
 * `|`, as OpenSearch answers it: count descending then key ascending, size, shard_size,
 * min_doc_count, order by a sub-aggregation, and `missing` per field.
 */
import { FieldParseError, IllegalArgument, ParsingError } from '../errors'
import type { DocView } from '../query/doc'
import { isObject } from '../query/doc'
import {
  type Agg,
  type Aggs,
  type AggSpec,
  type AggValue,
  type BucketBudget,
  defineCheckedAgg,
  FieldAgg,
  instantiate,
  results,
  type TargetCtx,
} from './aggs'
import { compareIps, compareKeys, type Key, type Order, parseOrder, topBuckets } from './aggs-order'

/** One of the `terms` of the request: a field read as terms reads it, `missing` for a document without it. */
class TermSource extends FieldAgg {
  ip = false
  constructor(
    private readonly missing: unknown,
    field: string,
  ) {
    super(field, 'multi_terms')
  }
  values(d: DocView, t: TargetCtx): AggValue[] {
    if (t.specs?.get(this.field)?.type === 'ip') this.ip = true
    const read = this.read(d, t)
    return read.length === 0 && this.missing !== undefined ? [{ key: this.missing as Key }] : read
  }
}

interface Combination {
  /** The combination's identity (its parts as JSON), the bucket key `topBuckets` orders by. */
  key: string
  parts: AggValue[]
  count: number
  aggs: Map<string, Agg>
  subs: Record<string, unknown>
}

class MultiTermsAgg implements Agg {
  private readonly sources: TermSource[]
  private readonly combos = new Map<string, Combination>()
  private readonly size: number
  private readonly shardSize: number
  private readonly minDocCount: number
  private readonly order: Order
  private readonly subs: Aggs

  constructor(
    spec: AggSpec,
    private readonly budget?: BucketBudget,
  ) {
    const p = spec.params
    if (!Array.isArray(p.terms) || p.terms.length < 2) throw new FieldParseError('multi_terms', 'terms')
    this.sources = p.terms.map((term) => {
      if (!isObject(term) || typeof term.field !== 'string')
        throw new ParsingError(`[multi_terms] [terms] entries need a [field] in [${spec.name}]`)
      return new TermSource(term.missing, term.field)
    })
    this.size = p.size === undefined ? 10 : Number(p.size)
    if (!Number.isInteger(this.size) || this.size < 1)
      throw new IllegalArgument(`[size] must be greater than 0. Found [${p.size}] in [${spec.name}]`)
    const shard = Number(p.shard_size)
    this.shardSize = Math.max(this.size, Number.isInteger(shard) && shard > 0 ? shard : Math.floor(this.size * 1.5 + 10))
    this.minDocCount = p.min_doc_count === undefined ? 1 : Number(p.min_doc_count)
    this.order = parseOrder(p.order, [['_count', -1]])
    this.subs = spec.subs()
  }

  collect(d: DocView, t: TargetCtx): void {
    let tuples: AggValue[][] = [[]]
    for (const source of this.sources) {
      const values = dedupe(source.values(d, t))
      if (values.length === 0) return // a document without a value of one field is in no combination
      tuples = tuples.flatMap((tuple) => values.map((v) => [...tuple, v]))
    }
    for (const parts of tuples) {
      const key = JSON.stringify(parts.map((v) => v.key))
      let c = this.combos.get(key)
      if (!c) this.combos.set(key, (c = this.combination(key, parts)))
      c.count++
      for (const sub of c.aggs.values()) sub.collect(d, t)
    }
  }

  private combination(key: string, parts: AggValue[]): Combination {
    if (this.subs.size === 0) this.budget?.candidate()
    else this.budget?.add()
    return { key, parts, count: 0, aggs: this.subs.size === 0 ? NO_SUBS : instantiate(this.subs, this.budget), subs: {} }
  }

  /** Combinations compare part by part, each as its field's terms keys compare. */
  private readonly compare = (a: Key, b: Key): number => {
    const x = this.combos.get(String(a))!.parts
    const y = this.combos.get(String(b))!.parts
    for (let i = 0; i < x.length; i++) {
      const c = (this.sources[i].ip ? compareIps : compareKeys)(x[i].key, y[i].key)
      if (c !== 0) return c
    }
    return 0
  }

  result(): Record<string, unknown> {
    const bySub = this.order.some(([by]) => by !== '_count' && by !== '_key')
    let all = [...this.combos.values()]
    if (bySub) for (const c of all) c.subs = results(c.aggs)
    // As terms: a shard's candidates, the documents of the others counted as other.
    const candidates = topBuckets(all, this.shardSize, this.order, this.compare)
    let other = sumOfCounts(all) - sumOfCounts(candidates)
    all = candidates.filter((c) => c.count >= this.minDocCount)
    if (this.subs.size === 0) this.budget?.add(all.length)
    const shown = all.slice(0, this.size)
    other += sumOfCounts(all) - sumOfCounts(shown)
    return {
      doc_count_error_upper_bound: 0,
      sum_other_doc_count: other,
      buckets: shown.map((c) => ({
        key: c.parts.map(rendered),
        key_as_string: c.parts.map((v) => String(rendered(v))).join('|'),
        doc_count: c.count,
        ...(bySub ? c.subs : results(c.aggs)),
      })),
    }
  }
}

const NO_SUBS: Map<string, Agg> = new Map()

/** A part of a key as OpenSearch shows it: booleans as true/false, dates as their text, the rest as read. */
function rendered(v: AggValue): Key | boolean {
  if (v.asString === 'true' || v.asString === 'false') return v.asString === 'true'
  if (v.date) return new Date(v.key as number).toISOString()
  return v.key
}

function dedupe(values: AggValue[]): AggValue[] {
  if (values.length < 2) return values
  const seen = new Set<Key>()
  return values.filter((v) => !seen.has(v.key) && seen.add(v.key))
}

const sumOfCounts = (list: ReadonlyArray<{ count: number }>) => list.reduce((n, c) => n + c.count, 0)

defineCheckedAgg('multi_terms', (spec, budget) => new MultiTermsAgg(spec, budget))

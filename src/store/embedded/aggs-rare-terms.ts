/**
 * `rare_terms`: the terms of at most `max_doc_count` documents (the long tail a terms
 * aggregation ordered by ascending count misses when it keeps shard_size candidates),
 * ascending by count then key, as OpenSearch answers them. Every term is counted exactly here,
 * so the answer is what OpenSearch's approximate (cuckoo filter) one is when it does not err.
 */
import { FieldParseError, IllegalArgument } from '../errors'
import { kindOf } from '../query/compile'
import type { DocView } from '../query/doc'
import {
  type Agg,
  type Aggs,
  type AggSpec,
  type AggValue,
  type BucketBudget,
  defineCheckedAgg,
  FieldAgg,
  fieldParam,
  instantiate,
  results,
  type TargetCtx,
} from './aggs'
import { termsKeyFilter, type KeyFilter } from './aggs-include'
import { compareIps, compareKeys, type Key } from './aggs-order'

/** OpenSearch's bound on `max_doc_count`: beyond it a terms aggregation is the tool. */
const MAX_MAX_DOC_COUNT = 100
const FLOATING = new Set(['double', 'float', 'half_float', 'scaled_float'])
const NONE: Map<string, Agg> = new Map()

interface RareBucket {
  value: AggValue
  count: number
  subs: Map<string, Agg>
}

class RareTermsAgg extends FieldAgg implements Agg {
  private readonly buckets = new Map<Key, RareBucket>()
  private readonly subs: Aggs
  private readonly maxDocCount: number
  private accepts?: { t: TargetCtx; filter: KeyFilter | undefined }
  private ip = false

  constructor(
    private readonly spec: AggSpec,
    private readonly budget?: BucketBudget,
  ) {
    super(fieldParam('rare_terms', spec.params), 'rare_terms')
    this.subs = spec.subs()
    const given = spec.params.max_doc_count
    this.maxDocCount = given === undefined ? 1 : Number(given)
    // OpenSearch refuses these while parsing the request, in its parser's words.
    if (!Number.isInteger(this.maxDocCount) || this.maxDocCount < 1 || this.maxDocCount > MAX_MAX_DOC_COUNT)
      throw new FieldParseError('rare_terms', 'max_doc_count')
  }

  collect(d: DocView, t: TargetCtx): void {
    if (this.accepts?.t !== t) {
      const spec = t.specs?.get(this.field)
      if (spec?.type === 'ip') this.ip = true
      if (spec && FLOATING.has(spec.type)) throw new IllegalArgument('RareTerms aggregation does not support floating point fields.')
      this.accepts = {
        t,
        filter: termsKeyFilter(this.spec.name, this.spec.params, {
          kind: spec ? kindOf(spec.type) : 'keyword',
          type: spec?.type,
          index: t.name,
        }),
      }
    }
    let values = this.read(d, t)
    if (values.length === 0 && this.spec.params.missing !== undefined) values = [{ key: this.spec.params.missing as Key }]
    const seen = new Set<Key>()
    for (const v of values) {
      if (seen.has(v.key) || (this.accepts.filter && !this.accepts.filter(v.key))) continue
      seen.add(v.key)
      let b = this.buckets.get(v.key)
      if (!b) this.buckets.set(v.key, (b = this.bucket(v)))
      b.count++
      for (const sub of b.subs.values()) sub.collect(d, t)
    }
  }

  /** A key without sub-aggregations is a count, not a bucket, until it shows rare (as TermsAgg counts its candidates). */
  private bucket(value: AggValue): RareBucket {
    if (this.subs.size === 0) {
      this.budget?.candidate()
      return { value, count: 0, subs: NONE }
    }
    this.budget?.add()
    return { value, count: 0, subs: instantiate(this.subs, this.budget) }
  }

  result(): Record<string, unknown> {
    const compare = this.ip ? compareIps : compareKeys
    const rare = [...this.buckets.values()]
      .filter((b) => b.count <= this.maxDocCount)
      .sort((a, b) => a.count - b.count || compare(a.value.key, b.value.key))
    if (this.subs.size === 0) this.budget?.add(rare.length)
    return {
      buckets: rare.map(({ value, count, subs }) => {
        const asString = value.asString ?? (value.date ? new Date(value.key as number).toISOString() : undefined)
        return { key: value.key, ...(asString !== undefined ? { key_as_string: asString } : {}), doc_count: count, ...results(subs) }
      }),
    }
  }
}

defineCheckedAgg('rare_terms', (spec, budget) => new RareTermsAgg(spec, budget))

/**
 * `significant_terms` and `significant_text`: the terms of the aggregated documents (the subset)
 * that are unusually frequent there compared with the index (the superset, or the documents of
 * `background_filter`), scored by a significance heuristic (significance.ts), as OpenSearch
 * answers: `doc_count` and `bg_count` of the aggregation, then per bucket its key, `doc_count`,
 * `score` and `bg_count`. A term must clear `shard_min_doc_count` to be a shard's candidate (the
 * best `shard_size` of them by score), then score above 0 and clear `min_doc_count` (3 by
 * default) to be shown. Every index's background is counted exactly here, where OpenSearch's
 * keyword frequencies still count deleted documents until their segment merges.
 */
import { FieldParseError, IllegalArgument, ShardsFailed, StoreError } from '../errors'
import { compile, kindOf, type FieldSpec } from '../query/compile'
import { type DocView, fieldPath, isObject, keywordOf } from '../query/doc'
import { analyze } from '../query/analysis'
import { editDistanceWithin } from '../query/fuzzy'
import {
  type Agg,
  aggDefs,
  type Aggs,
  type AggSpec,
  type AggValue,
  type BucketBudget,
  defineCheckedAgg,
  instantiate,
  OneValue,
  reader,
  results,
  type TargetCtx,
} from './aggs'
import { termsKeyFilter, type KeyFilter } from './aggs-include'
import { compareKeys, type Key } from './aggs-order'
import { DuplicateSpotter } from './duplicate-text'
import { HEURISTICS, heuristic, type Heuristic } from './significance'
import { bestOf, reduceOrder } from './significant-order'
import type { Pacer } from './pacer'

const COMMON = ['field', 'size', 'shard_size', 'min_doc_count', 'shard_min_doc_count', 'include', 'exclude', 'background_filter']
const FIELDS: Record<string, string[]> = {
  significant_terms: [...COMMON, 'execution_hint', 'missing', 'script', 'value_type', 'format', 'script_heuristic', ...HEURISTICS],
  significant_text: [...COMMON, 'filter_duplicate_text', 'source_fields', 'script_heuristic', ...HEURISTICS],
}
const FLOATING = new Set(['double', 'float', 'half_float', 'scaled_float'])

interface Params {
  size: number
  shardSize: number
  minDocCount: number
  shardMinDocCount: number
  heuristic: Heuristic
  background: unknown
}

/** The request's parameters, refused as OpenSearch's parser refuses them. */
function parseParams(spec: AggSpec): Params {
  const p = spec.params
  const type = spec.type
  for (const k of Object.keys(p)) if (!FIELDS[type].includes(k)) throw unknownField(type, k)
  const int = (k: string, dflt: number, ok: (n: number) => boolean, why: string): number => {
    if (p[k] === undefined) return dflt
    const n = Number(p[k])
    if (!Number.isInteger(n) || !ok(n)) throw new FieldParseError(type, k, `${why}. Found [${String(p[k])}] in [${spec.name}]`)
    return n
  }
  const size = int('size', 10, (n) => n > 0, '[size] must be greater than 0')
  // The significance of a term is uncertain on one shard: each answers twice the usual candidates.
  const shardSize = int('shard_size', 2 * Math.floor(size * 1.5 + 10), (n) => n > 0, '[shardSize] must be greater than  0')
  const minDocCount = int('min_doc_count', 3, (n) => n >= 0, '[minDocCount] must be greater than or equal to 0')
  const shardMinDocCount = int('shard_min_doc_count', 0, (n) => n >= 0, '[shardMinDocCount] must be greater than or equal to 0')
  // The last heuristic named wins, as the parser keeps the last one it reads.
  const named = Object.keys(p).filter((k) => HEURISTICS.includes(k))
  const chosen = named.length === 0 ? heuristic('jlh', {}) : heuristic(named[named.length - 1], p[named[named.length - 1]])
  if (p.background_filter !== undefined) checkFilter(type, p.background_filter)
  return { size, shardSize: Math.max(size, shardSize), minDocCount, shardMinDocCount, heuristic: chosen, background: p.background_filter }
}

function checkFilter(type: string, filter: unknown): void {
  try {
    compile(filter, undefined, {})
  } catch (e) {
    if (!(e instanceof StoreError)) throw e
    throw new StoreError('x_content_parse_exception', 400, `[${type}] failed to parse field [background_filter]`, {
      caused_by: { type: e.type, reason: e.reason },
    })
  }
}

/** OpenSearch's "did you mean": the known fields most like the unknown one (Lucene's Levenshtein similarity above 0.5). */
function unknownField(type: string, k: string): StoreError {
  const similarity = (c: string) => {
    let d = 0
    while (!editDistanceWithin(k, c, d, false)) d++
    return 1 - d / Math.max(k.length, c.length)
  }
  const near = FIELDS[type]
    .map((c) => ({ c, s: similarity(c) }))
    .filter((x) => x.s > 0.5)
    .sort((a, b) => b.s - a.s || a.c.localeCompare(b.c))
    .map((x) => x.c)
  const hint = near.length === 0 ? '' : near.length === 1 ? ` did you mean [${near[0]}]?` : ` did you mean any of [${near.join(', ')}]?`
  return new StoreError('x_content_parse_exception', 400, `[${type}] unknown field [${k}]${hint}`, {
    caused_by: { type: 'named_object_not_found_exception', reason: `unknown field [${k}]` },
  })
}

/** How one index's documents read as terms (subset and background alike); undefined: the field is unmapped there. */
type Terms = (d: DocView) => AggValue[]

/** The superset of one index: its documents (or the background filter's) and how many hold each term. */
interface Background {
  size: number
  df: Map<Key, number>
}

/** Backgrounds are counted once per index, field and filter for the whole request, whatever the buckets asking. */
const BACKGROUNDS = new WeakMap<TargetCtx, Map<string, Background>>()

function backgroundOf(t: TargetCtx, field: string, filter: unknown, terms: Terms, budget: Budget): Background {
  const { byField, id, bg } = cachedBackground(t, field, filter)
  if (bg) return bg
  const counted: Background = { size: 0, df: new Map() }
  for (const d of t.documents?.(filter ?? { match_all: {} }) ?? []) if (d) countInto(counted, terms(d), budget)
  byField.set(id, counted)
  return counted
}

function cachedBackground(t: TargetCtx, field: string, filter: unknown) {
  let byField = BACKGROUNDS.get(t)
  if (!byField) BACKGROUNDS.set(t, (byField = new Map()))
  const id = JSON.stringify([field, filter ?? null])
  return { byField, id, bg: byField.get(id) }
}

function countInto(bg: Background, values: AggValue[], budget: Budget): void {
  bg.size++
  for (const v of unique(values)) {
    const n = bg.df.get(v.key)
    if (n === undefined) budget.candidate()
    bg.df.set(v.key, (n ?? 0) + 1)
  }
}

/** The yield of a long read: false once the search is out of time. */
type Pace = Pick<Pacer, 'due' | 'pause'>
type Budget = Pick<BucketBudget, 'candidate'>
const NO_BUDGET: Budget = { candidate: () => {} }

/**
 * The backgrounds of a request's significant aggregations, at any depth, counted before its
 * documents are collected, giving the event loop back as a scan does: counted when the
 * aggregation answers, an index's whole background was read in one go, holding the node for as
 * long. Out of time, what was counted stands (the search answers `timed_out`); false then.
 */
export async function countBackgrounds(aggs: unknown, targets: TargetCtx[], now: number, pace: Pace, budget: Budget): Promise<boolean> {
  for (const agg of significantAggs(aggs, now))
    for (const t of targets) {
      const spec = agg.field === undefined ? undefined : t.specs?.get(agg.field)
      if (!spec) continue
      const { byField, id, bg } = cachedBackground(t, agg.field!, agg.background)
      if (bg) continue
      const counted: Background = { size: 0, df: new Map() }
      byField.set(id, counted)
      const terms = agg.termsOf(t, spec)
      for (const d of t.documents?.(agg.background ?? { match_all: {} }) ?? []) {
        if (pace.due() && !(await pace.pause())) return false
        if (d) countInto(counted, terms(d), budget)
      }
    }
  return true
}

/** The significant aggregations a request's `aggs` holds, at any depth (a malformed one is left to the aggregation's own errors). */
function* significantAggs(aggs: unknown, now: number): Generator<SignificantAgg> {
  for (const { name, type, params } of aggDefs(aggs)) {
    if (type !== 'significant_terms' && type !== 'significant_text') continue
    const spec: AggSpec = { name, type, params, subs: () => new Map(), now }
    let agg: SignificantAgg
    try {
      agg = type === 'significant_terms' ? new SignificantTermsAgg(spec) : new SignificantTextAgg(spec)
    } catch {
      continue // its own parse reports it
    }
    yield agg
  }
}

function unique(values: AggValue[]): AggValue[] {
  if (values.length < 2) return values
  const seen = new Set<Key>()
  return values.filter((v) => !seen.has(v.key) && seen.add(v.key))
}

/** A text field's terms: its analysed tokens. */
function tokensOf(spec: FieldSpec | undefined, field: string): Terms {
  const fp = fieldPath(spec?.path ?? field)
  return (d) => d.tokens(fp).map((key) => ({ key }))
}

interface Bucket {
  value: AggValue
  count: number
  subs: Map<string, Agg>
  score: number
  bg: number
  text: string
}

const NO_SUBS: Map<string, Agg> = new Map()

abstract class SignificantAgg implements Agg {
  private readonly buckets = new Map<Key, Bucket>()
  private readonly subs: Aggs
  protected readonly params: Params
  protected readonly targets = new Set<TargetCtx>()
  private last?: { t: TargetCtx; terms: Terms | undefined; accepts: KeyFilter | undefined }
  private subsetSize = 0
  readonly field: string | undefined

  constructor(
    protected readonly spec: AggSpec,
    private readonly budget?: BucketBudget,
  ) {
    this.params = parseParams(spec)
    const p = spec.params
    if (p.field === undefined && p.script === undefined)
      throw new IllegalArgument('Required one of fields [field, script], but none were specified. ')
    this.field = typeof p.field === 'string' ? p.field : undefined
    this.subs = spec.subs()
  }

  /** What OpenSearch's shard answers where no field is named (a script alone). */
  protected abstract noField(t: TargetCtx): StoreError
  /** The terms of the field in one index where it is mapped (its background's too). */
  protected abstract terms(t: TargetCtx, spec: FieldSpec): Terms
  /** The background filter, as its background is cached (countBackgrounds counts it ahead). */
  get background(): unknown {
    return this.params.background
  }
  termsOf(t: TargetCtx, spec: FieldSpec): Terms {
    return this.terms(t, spec)
  }
  /** Whether the shard meets its terms in sorted order (global ordinals), else in the order they were first collected. */
  protected sortedOrdinals(_t: TargetCtx): boolean {
    return false
  }
  /** The terms of one aggregated document (significant_text reads its source fields). */
  protected abstract collected(d: DocView, t: TargetCtx, terms: Terms): AggValue[]

  see(t: TargetCtx): void {
    this.targets.add(t)
  }

  collect(d: DocView, t: TargetCtx): void {
    if (this.last?.t !== t) this.prepare(t)
    this.subsetSize++
    const { terms, accepts } = this.last!
    if (!terms) return
    const seen = new Set<Key>()
    for (const v of this.collected(d, t, terms)) {
      if (seen.has(v.key) || (accepts && !accepts(v.key))) continue
      seen.add(v.key)
      let b = this.buckets.get(v.key)
      if (!b) this.buckets.set(v.key, (b = this.bucket(v)))
      b.count++
      for (const sub of b.subs.values()) sub.collect(d, t)
    }
  }

  private prepare(t: TargetCtx): void {
    this.targets.add(t)
    if (this.field === undefined) throw this.noField(t)
    const spec = t.specs?.get(this.field)
    const terms = spec ? this.terms(t, spec) : undefined
    // A text field's tokens are strings: a regular expression include applies to them.
    const kind = spec && kindOf(spec.type) !== 'text' ? kindOf(spec.type) : 'keyword'
    this.last = { t, terms, accepts: termsKeyFilter(this.spec.name, this.spec.params, { kind, type: spec?.type, index: t.name }) }
  }

  /** A term without sub-aggregations is a count, not a bucket, until it is shown (as terms counts its candidates). */
  private bucket(value: AggValue): Bucket {
    if (this.subs.size === 0) this.budget?.candidate()
    else this.budget?.add()
    const subs = this.subs.size === 0 ? NO_SUBS : instantiate(this.subs, this.budget)
    return { value, count: 0, subs, score: 0, bg: 0, text: keyText(value) }
  }

  result(): Record<string, unknown> {
    const field = this.field
    if (field === undefined) {
      const t = [...this.targets][0]
      if (t) throw this.noField(t)
      return { buckets: [] }
    }
    const mapped = [...this.targets].filter((t) => t.specs?.get(field) !== undefined)
    if (mapped.length === 0) return { buckets: [] }
    const backgrounds = mapped.map((t) =>
      backgroundOf(t, field, this.params.background, this.terms(t, t.specs!.get(field)!), this.budget ?? NO_BUDGET),
    )
    const supersetSize = backgrounds.reduce((n, bg) => n + bg.size, 0)
    const { heuristic: score, shardMinDocCount, shardSize, minDocCount, size } = this.params
    // In the order of the shard's term ordinals: the first term to break a heuristic's rule names the error.
    const all = [...this.buckets.values()]
    if (this.sortedOrdinals(mapped[0])) all.sort((a, b) => compareKeys(a.value.key, b.value.key))
    const candidates = all.filter((b) => b.count >= shardMinDocCount)
    try {
      for (const b of candidates) {
        b.bg = backgrounds.reduce((n, bg) => n + (bg.df.get(b.value.key) ?? 0), 0)
        b.score = score(b.count, this.subsetSize, b.bg, supersetSize)
      }
    } catch (e) {
      if (e instanceof IllegalArgument) throw new ShardsFailed(e.type, e.reason, mapped[0].name)
      throw e
    }
    const shard = reduceOrder(bestOf(candidates, Math.min(all.length, shardSize)), Infinity, () => true)
    const shown = reduceOrder(shard, size, (b) => b.score > 0 && b.count >= minDocCount)
    if (this.subs.size === 0) this.budget?.add(shown.length)
    return {
      doc_count: this.subsetSize,
      bg_count: supersetSize,
      buckets: shown.map((b) => ({ ...rendered(b.value), doc_count: b.count, score: b.score, bg_count: b.bg, ...results(b.subs) })),
    }
  }
}

/** A key as its bucket shows it: booleans as 1/0 with true/false, dates with their text. */
function rendered(v: AggValue): Record<string, unknown> {
  if (v.asString === 'true' || v.asString === 'false') return { key: v.key, key_as_string: v.asString === 'true' }
  if (v.date) return { key: v.key, key_as_string: new Date(v.key as number).toISOString() }
  return { key: v.key }
}

/** The key as OpenSearch's reduce names it (see significant-order.ts). */
function keyText(v: AggValue): string {
  return v.asString ?? (v.date ? new Date(v.key as number).toISOString() : String(v.key))
}

class SignificantTermsAgg extends SignificantAgg {
  protected noField(t: TargetCtx): StoreError {
    // A NullPointerException on OpenSearch's shard (a 500), for what the request asks: a 400 in its words.
    return new ShardsFailed(
      'null_pointer_exception',
      'Cannot invoke "org.opensearch.search.aggregations.support.FieldContext.fieldType()" because the return value of "org.opensearch.search.aggregations.support.ValuesSourceConfig.fieldContext()" is null',
      t.name,
    )
  }

  /** Strings (keywords, a text field's tokens) are collected by global ordinal. */
  protected override sortedOrdinals(t: TargetCtx): boolean {
    const kind = kindOf(t.specs?.get(this.field!)?.type ?? 'keyword')
    return kind === 'keyword' || kind === 'text'
  }

  protected terms(t: TargetCtx, spec: FieldSpec): Terms {
    if (FLOATING.has(spec.type))
      throw new ShardsFailed('unsupported_operation_exception', 'No support for examining floating point numerics', t.name)
    const kind = kindOf(spec.type)
    // OpenSearch's shard fails on `missing` for a string field (a ClassCastException, a 500): a 400 in its words.
    if (this.spec.params.missing !== undefined && (kind === 'keyword' || kind === 'text'))
      throw new ShardsFailed(
        'class_cast_exception',
        "class org.opensearch.search.aggregations.support.MissingValues$6 cannot be cast to class org.opensearch.search.aggregations.support.ValuesSource$Bytes$WithOrdinals$FieldData (org.opensearch.search.aggregations.support.MissingValues$6 and org.opensearch.search.aggregations.support.ValuesSource$Bytes$WithOrdinals$FieldData are in unnamed module of loader 'app')",
        t.name,
      )
    if (kind === 'text' && spec.fielddata) return tokensOf(spec, this.field!)
    try {
      return reader(this.field!, t, 'significant_terms')!
    } catch (e) {
      if (e instanceof StoreError && !(e instanceof ShardsFailed)) throw new ShardsFailed(e.type, e.reason, t.name)
      throw e
    }
  }

  /** `missing` stands for the values of a document without any, read as the field reads its values. */
  protected collected(d: DocView, _t: TargetCtx, terms: Terms): AggValue[] {
    const values = terms(d)
    const missing = this.spec.params.missing
    return values.length > 0 || missing === undefined ? values : terms(new OneValue(missing))
  }
}

class SignificantTextAgg extends SignificantAgg {
  private readonly sources: string[]
  private readonly spotter?: DuplicateSpotter

  constructor(spec: AggSpec, budget?: BucketBudget) {
    super(spec, budget)
    const p = spec.params
    this.sources = Array.isArray(p.source_fields) ? p.source_fields.map(String) : [this.field ?? '']
    if (p.filter_duplicate_text === true || p.filter_duplicate_text === 'true')
      this.spotter = new DuplicateSpotter(() => budget?.candidate())
  }

  protected noField(): StoreError {
    return new IllegalArgument('[significant_text] requires a [field]')
  }

  /** Any field's values analysed: a text field's tokens, another's values as one term each. */
  protected terms(_t: TargetCtx, spec: FieldSpec): Terms {
    if (kindOf(spec.type) === 'text') return tokensOf(spec, this.field!)
    const fp = fieldPath(spec.path ?? this.field!)
    return (d) => d.keywords(fp).map((key) => ({ key }))
  }

  /** The source fields' values analysed one by one, their duplicate passages dropped when asked. */
  protected collected(d: DocView, t: TargetCtx, terms: Terms): AggValue[] {
    if (!this.spotter && this.sources.length === 1 && this.sources[0] === this.field) return terms(d)
    const text = kindOf(t.specs?.get(this.field!)?.type ?? 'text') === 'text'
    const out: AggValue[] = []
    for (const source of this.sources)
      for (const raw of d.values(fieldPath(source))) {
        const k = keywordOf(raw)
        if (k === undefined) continue
        const tokens = text ? analyze(k) : [k]
        for (const key of this.spotter ? this.spotter.filter(tokens) : tokens) out.push({ key })
      }
    this.spotter?.startDocument()
    return out
  }

  override result(): Record<string, unknown> {
    const unmapped = [...this.targets].find((t) => t.specs && !t.specs.get(this.field!))
    // A NullPointerException on OpenSearch's shard (a 500) for an unmapped field: a 400 in its words.
    if (unmapped)
      throw new ShardsFailed(
        'null_pointer_exception',
        'Cannot invoke "org.opensearch.index.mapper.MappedFieldType.indexAnalyzer()" because "this.this$0.fieldType" is null',
        unmapped.name,
      )
    return super.result()
  }
}

defineCheckedAgg('significant_terms', (spec, budget) => new SignificantTermsAgg(spec, budget))
defineCheckedAgg('significant_text', (spec, budget) => new SignificantTextAgg(spec, budget))

/**
 * Search execution over candidate rows: the evaluator decides matches, then sorting,
 * search_after, from/size, track_total_hits, _source filtering, named queries and
 * aggregations shape an OpenSearch response. Memory stays bounded by from+size (plus
 * aggregation buckets), whatever the number of matches.
 */
import { ignoredFields } from '../query/malformed'
import { rewriteRefusal } from '../query/query-guards'
import { IllegalArgument, ParsingError, QueryCreationFailed, QueryShardError, ReduceFailed } from '../errors'
import type { SearchBody, SearchHit, SearchResponse, SourceFilter } from '../port'
import { compile, kindOf, matchedNames, toNumber, type CompiledQuery, type FieldSpec } from '../query/compile'
import { parseDate } from '../query/dates'
import { DocView, fieldPath, isObject, keywordOf } from '../query/doc'
import { compareCodePoints } from '../query/fold'
import { constantScore, countStats, relevance, scoresNested, type Needs, type Stats } from '../query/score'
import { allSpecs, nestedDocs, nestedPathKind, scopedSpecs } from '../query/nested'
import type { QueryLimits } from '../query/limits'
import { filterSource, filtersSource, noSourceToFilter, sourceSpec } from '../source-filter'
import { BucketBudget, instantiate, parseAggs, results, type TargetCtx } from './aggs'
import { readWholeIndices } from './aggs-whole-index'
import './aggs-types'
import { collectColumnar, columnarPlan, type ColumnSource } from './aggs-columnar'
import { Pacer } from './pacer'
import { hitFetch, type HitFetch } from './stored-fields'
import { type GeoSort, geoSortReader, isGeoSort, parseGeoSort } from './geo-sort'

export interface Row {
  rid: number
  id: string
  seq: number
  ver: number
  src: string
  /** A large source, parsed once and shared by concurrent searches (read-only). */
  parsed?: () => Record<string, unknown>
}

const sourceOf = (row: Row): Record<string, unknown> => (row.parsed ? row.parsed() : (JSON.parse(row.src) as Record<string, unknown>))

export interface SearchTarget extends TargetCtx {
  /** The index's uuid (a failed shard's query_shard_exception names it). */
  uuid?: string
  /** Alias filters that apply (null: none). */
  filters: Array<Record<string, unknown>> | null
  /** OpenSearch's query limits for this index (none: trusted internal reads). */
  limits?: QueryLimits
  /** Candidate rows for the (filtered) query, in `rid` order, at most `limit` of them. */
  rows(query: unknown, limit?: number): Iterable<Row>
  /**
   * The number of matches when the store can answer it without the evaluator (else undefined);
   * at most `cap` when given.
   */
  exactCount?(query: unknown, cap?: number): number | undefined
  /** A hit's fields mapped `store: true` among `names` (`stored_fields`). */
  storedValues?(source: Record<string, unknown>, names: string[]): Record<string, unknown[]>
  /**
   * Candidate rows in `_seq_no` order (1 ascending, -1 descending), strictly after `after` in
   * that order when given, read lazily so that a page stops reading once it is full.
   */
  rowsBySeq?(query: unknown, order: 1 | -1, after: number | undefined): Iterable<Row>
  /** Single-valued field columns over every document (see aggs-columnar.ts). */
  columns?: ColumnSource['columns']
  /** BM25 statistics from the text index (text-index.ts); absent: counted by a pass over the rows. */
  termStats?(needs: Needs): Stats
  /**
   * The best `window` matches of a single-field match and their number, scored from the text
   * index (text-index.ts's topByPostings); undefined when it cannot.
   */
  topByScore?(query: unknown, stats: Stats, window: number): { total: number; top: Array<{ row: Row; score: number }> } | undefined
  /** How many of the query's matches hold a value of the field (undefined: the index cannot say). */
  valuedCount?(query: unknown, field: string): number | undefined
  /**
   * Candidate rows in the order of a field's values, beyond `after` (see search-rows.ts's
   * sortedRows); undefined when the field or query cannot be read in that order.
   */
  sortedRows?(
    query: unknown,
    field: string,
    order: 1 | -1,
    after: string | number | undefined,
    /** Hits wanted: how many rows the walk may pass before it has them decides how it reads. */
    window: number,
  ): Iterable<{ row: Row; value: string | number }> | undefined
}

export interface SearchOptions {
  now: number
  maxResultWindow: number
  restTotalHitsAsInt?: boolean
  pitId?: string
  /** Milliseconds the search may run (the request's `timeout`, else the node default); < 0: none. */
  timeoutMs?: number
  /** `search.max_buckets` */
  maxBuckets?: number
  /** The request breaker's distinct keys (SearchLimits.maxRequestKeys) */
  maxRequestKeys?: number
  /** SearchParams.read_disabled_source */
  readDisabledSource?: boolean
}

type SortValue = string | number | undefined
interface SortField {
  field: string
  order: 1 | -1
  missing: '_last' | '_first' | SortValue
  unmappedType?: string
  mode?: string
  /** A `_geo_distance` sort's points, unit and mode. */
  geo?: GeoSort
  /** A field of nested documents: their path, and the query those whose values count match (`now` for its date math). */
  nested?: { path: string; filter?: unknown; now: number }
}

/**
 * A candidate hit, kept until the page is known: its `_source` already filtered and its named
 * queries already matched, so that neither the stored text nor the whole parsed document stays
 * alive (a 4 MiB transcript is held once per search only while it is being evaluated).
 */
interface Entry {
  key: SortValue[]
  rid: number
  target: SearchTarget
  row: Omit<Row, 'src'>
  source: Record<string, unknown> | undefined
  names?: string[]
  /** Its score, in a sorted search that reports scores (see Plan.sortScores). */
  score?: number
  /** Its `stored_fields` values. */
  fields?: Record<string, unknown[]>
  /** Its fields whose malformed values were skipped (`_ignored`). */
  ignored?: string[]
}

const SHARDS = { total: 1, successful: 1, skipped: 0, failed: 0 }

/** What a search request asks, checked once and derived for every index it reads. */
interface Plan {
  body: SearchBody
  opts: SearchOptions
  pace: Pacer
  from: number
  window: number
  sort: SortField[]
  sorted: boolean
  after: unknown[] | undefined
  track: boolean | number
  trackLimit: number
  countCap: number | undefined
  aggs: ReturnType<typeof instantiate>
  /** The request's bucket and distinct-key budget, which whole-index reads draw on too. */
  budget: BucketBudget
  hasAggs: boolean
  spec: ReturnType<typeof sourceSpec>
  /** `_id` and stored fields of each hit (stored-fields.ts). */
  fetch: HitFetch
  seqPaging: boolean
  seqAfter: number | undefined
  rels: Array<ReturnType<typeof relevance>> | undefined
  scoring: boolean
  /** A sorted search that sorts on `_score` among other keys or asks `track_scores`: each hit is scored. */
  sortScores: boolean
  /** `indices_boost`: the factor of each index's scores. */
  boosts?: Map<string, number>
  /** What a match scores where the query's score does not vary (constantScore: 0 for a filter-only bool). */
  unscored: number
  /** `min_score`: matches scoring less are no hits (nor counted, nor aggregated). */
  minScore: number | undefined
  /** `terminate_after`: each index stops after this many matches, as each shard does. */
  terminateAfter: number | undefined
  /** min_score or terminate_after: every match is read, in order (no index walk, SQL count or columns). */
  cutoff: boolean
  bySeq: boolean
  topK: boolean
}

/** What the scan has gathered so far, across the indices read. */
interface Gathered {
  entries: Entry[]
  total: number
  maxScore: number
  seqCeiling: number | undefined
  /** An index stopped at terminate_after. */
  terminatedEarly?: boolean
}

/** One index being read: its query compiled, its scoring and sort keys ready. */
interface TargetScan {
  target: SearchTarget
  query: unknown
  compiled: CompiledQuery
  rel: ReturnType<typeof relevance>
  stats: Stats
  keyOf: ReturnType<typeof sortKeys>
  afterKey: SortValue[] | undefined
}

/** How a reading step ends: 'next' index, 'stop' the whole scan, or undefined when the step did not apply. */
type Step = 'next' | 'stop' | undefined

export async function runSearch(given: SearchTarget[], body: SearchBody, opts: SearchOptions): Promise<SearchResponse> {
  const started = performance.now()
  const targets = given.map((t) => ({ ...t, documents: (query: unknown) => documentsOf(t, query, opts.now) }))
  // The query each shard rewrites first, whichever way it is answered after (see rewriteRefusal).
  for (const t of targets) if (t.limits && body.query !== undefined) compileOn(t, body.query, opts.now)
  const plan = namingShard(targets, () => planSearch(targets, body, opts))
  const got: Gathered = { entries: [], total: 0, maxScore: 0, seqCeiling: undefined }
  if (plan.hasAggs) for (const t of targets) for (const a of plan.aggs.values()) a.see?.(t)
  if (plan.hasAggs && !(await readWholeIndices(body.aggs ?? body.aggregations, targets, opts.now, plan.pace, plan.budget)))
    return respond(plan, got, targets, started)
  // Aggregations over columns from the field-value index, no source parsed; the page of hits, if
  // one is wanted, is then read as a search without aggregations reads it (an event browser's
  // newest 500 beside its histogram), and the columns count the matches.
  const columnar = plan.hasAggs && !plan.cutoff ? columnarPlan(body.query, body.aggs ?? body.aggregations, targets) : undefined
  if (columnar) got.total = await collectColumnar(columnar, plan.aggs, plan.pace)
  if (columnar && plan.window === 0) return respond(plan, got, targets, started)
  // The columns gave the total: the page is read without counting.
  const reading: Plan = columnar
    ? { ...plan, hasAggs: false, track: false, trackLimit: 0, countCap: 1, ...hitPaths(plan.sort, false, plan.after, false, targets) }
    : plan
  const read: Gathered = columnar ? { ...got, total: 0 } : got
  for (const [ti, target] of targets.entries()) if ((await scanTarget(reading, read, target, plan.rels?.[ti])) === 'stop') break
  if (plan.sorted) compact(reading, read)
  else if (plan.scoring) compactByScore(reading, read)
  if (columnar) {
    got.entries = read.entries
    got.maxScore = read.maxScore
  }
  return respond(plan, got, targets, started)
}

/**
 * An index's documents that a query matches, its alias filters aside (as OpenSearch reads a shard's
 * whole reader); null for each document read that does not match, where a paced reader may pause.
 */
function* documentsOf(target: SearchTarget, query: unknown, now: number): Iterable<DocView | null> {
  const { test } = compileOn(target, query, now)
  for (const row of target.rows(query)) {
    const d = new DocView(sourceOf(row), row.id, target.name)
    yield test(d) ? d : null
  }
}

/** A caller's query compiled for one index: a query its shard cannot build names the index, as OpenSearch's failed shards do. */
function compileOn(target: SearchTarget, query: unknown, now: number): CompiledQuery {
  try {
    const refused = target.limits === undefined ? undefined : rewriteRefusal(query, target.specs)
    if (refused) throw refused
    return compile(query, target.specs, { now, limits: target.limits })
  } catch (e) {
    if (e instanceof QueryCreationFailed && e.index === undefined) [e.index, e.indexUuid] = [target.name, target.uuid]
    throw e
  }
}

/** `plan()`, a query or aggregation its shards cannot build named by the (first) index, as OpenSearch's failed shards are. */
function namingShard<T>(targets: SearchTarget[], plan: () => T): T {
  try {
    return plan()
  } catch (e) {
    if (e instanceof QueryCreationFailed && e.index === undefined && targets.length > 0)
      [e.index, e.indexUuid] = [targets[0].name, targets[0].uuid]
    throw e
  }
}

/** `min_score` and `terminate_after` (0: no limit), as OpenSearch reads them. */
function cutoffs(body: SearchBody): { minScore: number | undefined; terminateAfter: number | undefined } {
  const raw = body as { min_score?: unknown; terminate_after?: unknown }
  const minScore = raw.min_score === undefined || raw.min_score === null ? undefined : toNumber(raw.min_score)
  if (raw.min_score !== undefined && raw.min_score !== null && minScore === undefined)
    throw new ParsingError(`[min_score] must be a number, found [${String(raw.min_score)}]`)
  const after = raw.terminate_after === undefined ? 0 : Number(raw.terminate_after)
  if (!Number.isInteger(after) || after < 0) throw new IllegalArgument('terminateAfter must be > 0')
  return { minScore, terminateAfter: after > 0 ? after : undefined }
}

/**
 * How a search's hits may be read from an index's own order, stopping early: not when every
 * match must also feed aggregations.
 */
function hitPaths(
  sort: SortField[],
  track: boolean | number,
  after: unknown[] | undefined,
  hasAggs: boolean,
  targets: SearchTarget[],
): Pick<Plan, 'seqPaging' | 'seqAfter' | 'bySeq' | 'topK'> {
  // Paging by `_seq_no` without totals (how detectors read what is new): rows at or before the
  // search_after key, and rows after the last seq_no of an already full window, cannot be hits,
  // so they are not parsed at all.
  const seqPaging = track === false && !hasAggs && sort.length === 1 && sort[0].field === '_seq_no' && sort[0].order === 1
  return {
    seqPaging,
    seqAfter: seqPaging && after ? Number(after[0]) : undefined,
    // Sorted by `_seq_no` alone: read each index in that order from its seq_no index and stop at a
    // full window; totals come from the exact SQL count, or are not wanted.
    bySeq: sort.length === 1 && sort[0].field === '_seq_no' && !hasAggs,
    // Sorted on one field's values, default mode, missing last: the top of that field's index.
    topK:
      sort.length === 1 &&
      !hasAggs &&
      !sort[0].field.startsWith('_') &&
      sort[0].missing === '_last' &&
      sort[0].mode === undefined &&
      sort[0].nested === undefined &&
      targets.every((t) => t.sortedRows !== undefined),
  }
}

function planSearch(targets: SearchTarget[], body: SearchBody, opts: SearchOptions): Plan {
  const pace = new Pacer(opts.timeoutMs)
  const size = body.size ?? 10
  const from = body.from ?? 0
  if (!Number.isInteger(size) || size < 0) throw new IllegalArgument(`[size] parameter cannot be negative, found [${size}]`)
  if (!Number.isInteger(from) || from < 0) throw new IllegalArgument(`[from] parameter cannot be negative, found [${from}]`)
  if (from + size > opts.maxResultWindow)
    throw new IllegalArgument(
      `Result window is too large, from + size must be less than or equal to: [${opts.maxResultWindow}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
    )
  const sort = parseSort(body.sort, opts.now)
  checkSortKinds(sort, targets)
  // `_score` descending alone is relevance order (no sort values); ascending is a sort like any other.
  const sorted = sort.length > 0 && !(sort.length === 1 && byRelevance(sort[0]))
  const after = body.search_after
  if (after !== undefined) {
    if (sort.length === 0) throw new IllegalArgument('Sort must contain at least one field.')
    if (from > 0) throw new IllegalArgument('[from] parameter must be set to 0 when [search_after] is used.')
    if (after.length !== sort.length) throw new IllegalArgument(`search_after has ${after.length} value(s) but sort has ${sort.length}.`)
  }
  const track = body.track_total_hits ?? 10_000
  const trackLimit = track === true ? Infinity : track === false ? 0 : Number(track)
  const aggDefs = parseAggs(body.aggs ?? body.aggregations, opts.now)
  const budget = new BucketBudget(opts.maxBuckets ?? 65_535, opts.maxRequestKeys)
  const aggs = instantiate(aggDefs, budget)
  const hasAggs = aggs.size > 0
  const window = from + size
  const fetch = hitFetch(body, targets[0]?.name ?? '')
  const spec = fetch.spec
  const bare = opts.readDisabledSource ? undefined : targets.find((t) => t.sourceDisabled)
  if (bare && filtersSource(body._source as SourceFilter | undefined)) throw noSourceToFilter(bare.name)
  // Relevance (BM25) when matches are ranked by score: no sort (or `_score` alone), a page
  // wanted, and a query that searches text in some index. Other queries score 1 everywhere. A
  // sort on fields scores too when `_score` is one of its keys or track_scores asks for scores.
  const sortScores = (sorted || after !== undefined) && (body.track_scores === true || sort.some((s) => s.field === '_score'))
  const { minScore, terminateAfter } = cutoffs(body)
  const cutoff = minScore !== undefined || terminateAfter !== undefined
  const ranked = !sorted && !after && window > 0
  const boosts =
    body.indices_boost && body.indices_boost.length > 0 ? new Map(body.indices_boost.flatMap((e) => Object.entries(e))) : undefined
  const rels =
    (sortScores && window > 0) || ranked || minScore !== undefined
      ? targets.map((t) => relevance(body.query, t.specs, opts.now, t.limits?.analysis))
      : undefined
  return {
    body,
    opts,
    pace,
    from,
    window,
    sort,
    sorted,
    after,
    track,
    trackLimit,
    // Past track_total_hits only "more than that" is reported, as OpenSearch does: counting stops there.
    countCap: Number.isFinite(trackLimit) ? trackLimit + 1 : undefined,
    aggs,
    budget,
    hasAggs,
    spec,
    fetch,
    rels,
    // A boosted index ranks its matches above another's even where every match scores 1.
    scoring: ranked && (rels?.some((r) => r !== undefined) === true || boosts !== undefined),
    boosts,
    unscored: constantScore(body.query ?? { match_all: {} }),
    sortScores,
    minScore,
    terminateAfter,
    cutoff,
    // Scores, min_score and terminate_after need every match read, in order: no index walk or count.
    ...hitPaths(sort, track, after, hasAggs || sortScores || cutoff, targets),
  }
}

function keep(
  plan: Plan,
  key: SortValue[],
  row: Row,
  target: SearchTarget,
  compiled: CompiledQuery,
  source: Record<string, unknown>,
): Entry {
  const e: Entry = {
    key,
    rid: row.rid,
    target,
    row: { rid: row.rid, id: row.id, seq: row.seq, ver: row.ver },
    source: target.sourceDisabled && !plan.opts.readDisabledSource ? undefined : filterSource(source, plan.spec),
  }
  if (plan.fetch.stored.length > 0) e.fields = target.storedValues?.(source, plan.fetch.stored)
  const ignored = target.specs ? ignoredFields(source, target.specs) : []
  if (ignored.length > 0) e.ignored = ignored
  if (compiled.named.length > 0) e.names = matchedNames(compiled.named, new DocView(source, row.id, target.name))
  return e
}

function compactByScore(plan: Plan, got: Gathered): void {
  got.entries.sort((a, b) => (b.key[0] as number) - (a.key[0] as number) || a.rid - b.rid)
  got.entries.length = Math.min(got.entries.length, plan.window)
}

function compact(plan: Plan, got: Gathered): void {
  got.entries.sort((a, b) => compareEntries(a, b, plan.sort))
  got.entries.length = Math.min(got.entries.length, plan.window)
  if (plan.seqPaging && plan.window > 0 && got.entries.length >= plan.window) got.seqCeiling = got.entries[got.entries.length - 1].row.seq
}

async function scanTarget(plan: Plan, got: Gathered, target: SearchTarget, rel: ReturnType<typeof relevance>): Promise<Step> {
  const { body, opts } = plan
  const stats = await termStats(plan, target, rel)
  if (stats === undefined) return 'stop'
  const query = target.filters
    ? { bool: { must: [body.query ?? { match_all: {} }], filter: target.filters } }
    : (body.query ?? { match_all: {} })
  const compiled = compileOn(target, query, opts.now)
  // Ranked by a match on one text field: scored from the postings, only the page read.
  const ranked =
    rel && plan.scoring && !plan.hasAggs && !plan.cutoff && target.topByScore ? target.topByScore(query, stats, plan.window) : undefined
  if (ranked) {
    const boost = plan.boosts?.get(target.name) ?? 1
    for (const { row, score: unboosted } of ranked.top) {
      const score = unboosted * boost
      got.maxScore = Math.max(got.maxScore, score)
      got.entries.push(keep(plan, [score], row, target, compiled, sourceOf(row)))
    }
    compactByScore(plan, got)
    got.total += ranked.total
    return 'next'
  }
  const keyOf = sortKeys(plan.sort, target)
  const afterKey = plan.after ? searchAfterKey(plan.after, plan.sort, target) : undefined
  const scan: TargetScan = { target, query, compiled, rel, stats, keyOf, afterKey }
  const step = (await bySeqPage(plan, got, scan)) ?? (await topKPage(plan, got, scan)) ?? exactPage(plan, got, scan)
  if (step) return step
  if ((await fullScan(plan, got, scan)) === 'stop') return 'stop'
  if (!plan.sorted && !plan.hasAggs && plan.window === 0 && got.total > plan.trackLimit) return 'stop'
  return 'next'
}

/** The index's term statistics for the scored fields: from its text index, else one pass over its documents (undefined: timed out). */
async function termStats(plan: Plan, target: SearchTarget, rel: ReturnType<typeof relevance>): Promise<Stats | undefined> {
  const stats: Stats = new Map()
  if (rel && target.termStats && !scoresNested(rel.needs, target.specs!)) return target.termStats(rel.needs)
  if (rel)
    for (const row of target.rows({ match_all: {} })) {
      if (plan.pace.due() && !(await plan.pace.pause())) return undefined
      countStats(rel.needs, target.specs!, new DocView(sourceOf(row), row.id, target.name), stats)
    }
  return stats
}

/** Sorted by `_seq_no` alone with an exact count: the index's seq_no order, stopping at a full window. */
async function bySeqPage(plan: Plan, got: Gathered, { target, query, compiled, afterKey }: TargetScan): Promise<Step> {
  const { sort, window, pace } = plan
  if (!plan.bySeq || !target.rowsBySeq) return undefined
  const exact = plan.track === false ? 0 : target.exactCount?.(query, plan.countCap)
  if (exact === undefined) return undefined
  const afterSeq = afterKey?.[0] === undefined ? undefined : Number(afterKey[0])
  let taken = 0
  if (window > 0)
    for (const row of target.rowsBySeq(query, sort[0].order, afterSeq)) {
      if (pace.due() && !(await pace.pause())) return 'stop'
      const source = sourceOf(row)
      if (!compiled.test(new DocView(source, row.id, target.name))) continue
      got.entries.push(keep(plan, [row.seq], row, target, compiled, source))
      if (++taken >= window) break
    }
  got.total += exact
  return 'next'
}

/** Sorted on one field with an exact count: the field's values in order, stopping at a full window. */
async function topKPage(plan: Plan, got: Gathered, { target, query, compiled, afterKey }: TargetScan): Promise<Step> {
  const { sort, window, pace, after } = plan
  if (!plan.topK || window <= 0) return undefined
  const exact = plan.track === false ? 0 : target.exactCount?.(query, plan.countCap)
  const afterValue = afterKey?.[0]
  const walk =
    exact !== undefined && (after === undefined || afterValue !== undefined)
      ? target.sortedRows!(query, sort[0].field, sort[0].order, afterValue, window)
      : undefined
  if (!walk) return undefined
  const taken: Entry[] = []
  let last: SortValue
  let exhausted = true
  for (const { row, value } of walk) {
    if (pace.due() && !(await pace.pause())) return 'stop'
    // Past a full window only the ties of its last value can still enter it (they sort by rid).
    if (taken.length >= window && value !== last) {
      exhausted = false
      break
    }
    const source = sourceOf(row)
    if (!compiled.test(new DocView(source, row.id, target.name))) continue
    taken.push(keep(plan, [value], row, target, compiled, source))
    last = value
  }
  // Documents without a value sort last and were not read: enough when the window is full, or
  // when the walk read every match that has a value and no match lacks one.
  const valued = exhausted && taken.length < window ? target.valuedCount?.(query, sort[0].field) : undefined
  const complete = taken.length >= window || (valued !== undefined && valued === target.exactCount!(query))
  if (!complete) return undefined
  for (const e of taken) got.entries.push(e)
  compact(plan, got)
  got.total += exact!
  return 'next'
}

/** Unsorted, no aggregations and an exact index answer: count in SQL, read only the page. */
function exactPage(plan: Plan, got: Gathered, { target, query, compiled }: TargetScan): Step {
  const { window } = plan
  const exact =
    !plan.sorted && !plan.after && !plan.hasAggs && !plan.scoring && !plan.cutoff ? target.exactCount?.(query, plan.countCap) : undefined
  if (exact === undefined) return undefined
  const need = window - got.entries.length
  if (need > 0)
    for (const row of target.rows(query, need)) {
      const source = sourceOf(row)
      got.entries.push(keep(plan, [], row, target, compiled, source))
    }
  got.total += exact
  return got.entries.length >= window && got.total > plan.trackLimit ? 'stop' : 'next'
}

/** Every candidate row evaluated: counted, aggregated, and kept while it may reach the page. */
async function fullScan(plan: Plan, got: Gathered, { target, query, compiled, rel, stats, keyOf, afterKey }: TargetScan): Promise<Step> {
  const { sort, sorted, after, scoring, hasAggs, aggs, window, pace, seqAfter, trackLimit, minScore, terminateAfter } = plan
  const boost = plan.boosts?.get(target.name) ?? 1
  let matched = 0
  for (const row of target.rows(query)) {
    if (pace.due() && !(await pace.pause())) return 'stop'
    if (seqAfter !== undefined && row.seq <= seqAfter) continue
    if (got.seqCeiling !== undefined && row.seq > got.seqCeiling) continue
    const source = sourceOf(row)
    const d = new DocView(source, row.id, target.name, row.seq, row.ver)
    if (!compiled.test(d)) continue
    const score = (rel && (scoring || plan.sortScores || minScore !== undefined) ? rel.score(d, stats) : plan.unscored) * boost
    // As Lucene compares them: a 32-bit score against the float min_score (a score a client read back passes).
    if (minScore !== undefined && Math.fround(score) < Math.fround(minScore)) continue
    if (terminateAfter !== undefined && ++matched > terminateAfter) {
      got.terminatedEarly = true
      break
    }
    got.total++
    if (hasAggs) for (const a of aggs.values()) a.collect(d, target)
    if (window === 0) continue
    const key = sorted || after ? keyOf(d, row, score) : scoring ? [score] : []
    // Documents before the search_after key still count as hits, as in OpenSearch.
    if (afterKey && compareKeys(key, afterKey, sort) <= 0) continue
    if (scoring) {
      got.maxScore = Math.max(got.maxScore, key[0] as number)
      got.entries.push(keep(plan, key, row, target, compiled, source))
      if (got.entries.length >= Math.max(2 * window, 1024)) compactByScore(plan, got)
      continue
    }
    if (!sorted) {
      if (got.entries.length < window) got.entries.push(keep(plan, key, row, target, compiled, source))
      else if (!hasAggs && got.total > trackLimit) return 'stop'
      continue
    }
    const e = keep(plan, key, row, target, compiled, source)
    if (plan.sortScores) {
      e.score = score
      got.maxScore = Math.max(got.maxScore, score)
    }
    got.entries.push(e)
    if (got.entries.length >= Math.max(2 * window, 1024)) compact(plan, got)
  }
  return undefined
}

/**
 * A score as OpenSearch prints it: Lucene scores are 32-bit floats, written with the fewest
 * digits that read back as the same float (0.21363801, where the double computed here prints
 * 0.21363801329351617).
 */
function asFloat(score: number): number {
  const f = Math.fround(score)
  if (!Number.isFinite(f)) return f
  for (let digits = 1; digits < 9; digits++) {
    const shortest = Number(f.toPrecision(digits))
    if (Math.fround(shortest) === f) return shortest
  }
  return Number(f.toPrecision(9))
}

/** The page of hits and the totals, shaped as OpenSearch answers. */
function respond(plan: Plan, got: Gathered, targets: SearchTarget[], started: number): SearchResponse {
  const { body, opts, sort, sorted, after, scoring, track, trackLimit, pace } = plan
  const page = got.entries.slice(plan.from, plan.window)
  const hits: SearchHit[] = page.map((e) => {
    // Keys in OpenSearch's order: version and sequence number come before the score.
    const hit = { _index: e.target.name, _id: e.row.id } as SearchHit
    if (body.version) hit._version = e.row.ver
    if (body.seq_no_primary_term) {
      hit._seq_no = e.row.seq
      hit._primary_term = 1
    }
    hit._score = plan.sortScores
      ? asFloat(e.score ?? plan.unscored)
      : sorted && !body.track_scores
        ? null
        : scoring
          ? asFloat(e.key[0] as number)
          : plan.unscored
    if (!plan.fetch.withId) delete (hit as { _id?: string })._id
    if (e.ignored) hit._ignored = e.ignored
    if (e.source !== undefined) hit._source = e.source
    if (e.fields && Object.keys(e.fields).length > 0) hit.fields = e.fields
    if (sort.length > 0 && (sorted || after))
      hit.sort = e.key.map((v, i) => (v === undefined ? null : sort[i].field === '_score' && typeof v === 'number' ? asFloat(v) : v))
    if (e.names && e.names.length > 0) hit.matched_queries = e.names
    return hit
  })

  const counted = Math.min(got.total, trackLimit)
  const response: SearchResponse = {
    took: Math.round(performance.now() - started),
    timed_out: pace.timedOut,
    _shards: { ...SHARDS, total: Math.max(1, targets.length), successful: Math.max(1, targets.length) },
    hits: {
      ...(track === false
        ? opts.restTotalHitsAsInt
          ? { total: -1 }
          : {}
        : opts.restTotalHitsAsInt
          ? { total: counted }
          : { total: { value: counted, relation: got.total > trackLimit ? 'gte' : 'eq' } }),
      // As OpenSearch 3.2+: a sorted search reports a max score only when relevance leads its sort (or track_scores asks).
      max_score:
        sorted && !body.track_scores && !byRelevance(sort[0])
          ? null
          : hits.length > 0
            ? scoring || plan.sortScores
              ? asFloat(got.maxScore)
              : plan.unscored
            : null,
      hits,
    },
  }
  if (plan.terminateAfter !== undefined) (response as { terminated_early?: boolean }).terminated_early = got.terminatedEarly === true
  if (plan.hasAggs) response.aggregations = results(plan.aggs) as SearchResponse['aggregations']
  if (opts.pitId) response.pit_id = opts.pitId
  return response
}

export async function runCount(targets: SearchTarget[], query: unknown, now: number, timeoutMs?: number): Promise<number> {
  let n = 0
  const pace = new Pacer(timeoutMs)
  scan: for (const target of targets) {
    const q = target.filters ? { bool: { must: [query ?? { match_all: {} }], filter: target.filters } } : (query ?? { match_all: {} })
    // Compiled first: it validates the query and enforces the limits, whichever way it is answered.
    const { test } = compileOn(target, q, now)
    // An index that answers the query exactly (e.g. a term on a keyword) is counted in SQL, no document parsed.
    const exact = target.exactCount?.(query ?? { match_all: {} })
    if (exact !== undefined) {
      n += exact
      continue
    }
    for (const row of target.rows(q)) {
      if (pace.due() && !(await pace.pause())) break scan
      if (test(new DocView(sourceOf(row), row.id, target.name))) n++
    }
  }
  return n
}

function parseSort(sort: SearchBody['sort'], now: number): SortField[] {
  if (sort === undefined) return []
  const list = Array.isArray(sort) ? sort : [sort]
  const out: SortField[] = []
  for (const s of list) {
    if (typeof s === 'string') {
      const [field, order] = s.split(':')
      out.push(sortField(field, order))
      continue
    }
    if (!isObject(s)) throw new ParsingError('[sort] malformed')
    for (const [field, v] of Object.entries(s)) {
      if (typeof v === 'string') out.push(sortField(field, v))
      else if (isGeoSort(field, v)) {
        const body = v as Record<string, unknown>
        out.push({ ...sortField(field, body.order as string | undefined), geo: parseGeoSort(body) })
      } else if (isObject(v)) {
        const f = sortField(field, v.order as string | undefined)
        if (v.missing !== undefined) f.missing = v.missing as SortField['missing']
        if (typeof v.unmapped_type === 'string') f.unmappedType = v.unmapped_type
        if (typeof v.mode === 'string') f.mode = v.mode
        if (v.nested?.path !== undefined) f.nested = { path: v.nested.path, filter: v.nested.filter, now }
        out.push(f)
      } else throw new ParsingError(`[sort] malformed for field [${field}]`)
    }
  }
  return out
}

/** `_score` descending: relevance order. */
const byRelevance = (s: SortField): boolean => s.field === '_score' && s.order === -1

function sortField(field: string, order: string | undefined): SortField {
  if (order !== undefined && order !== 'asc' && order !== 'desc') throw new IllegalArgument(`Unknown SortOrder [${order}]`)
  const dir = order === undefined ? (field === '_score' ? -1 : 1) : order === 'asc' ? 1 : -1
  return { field, order: dir, missing: '_last' }
}

type KeyReader = (d: DocView, row: Row, score: number) => SortValue

/** A hit's sort values; `score` is its relevance where the search computes it (1 elsewhere, as unscored hits score). */
function sortKeys(sort: SortField[], target: SearchTarget): (d: DocView, row: Row, score?: number) => SortValue[] {
  const readers: KeyReader[] = sort.map((s) => sortReader(s, target))
  return (d, row, score = 1) => readers.map((r) => r(d, row, score))
}

/**
 * Sort values from several indices are merged as one kind: OpenSearch refuses to merge an
 * `unsigned_long` field's with another type's (longs and doubles merge as numbers).
 */
function checkSortKinds(sort: SortField[], targets: SearchTarget[]): void {
  if (targets.length < 2) return
  for (const { field } of sort) {
    const types = new Set(targets.map((t) => t.specs && allSpecs(t.specs).get(field)?.type).filter((x) => x !== undefined))
    if (types.has('unsigned_long') && types.size > 1)
      throw new ReduceFailed({
        type: 'illegal_argument_exception',
        reason: "Can't do sort across indices, as a field has [unsigned_long] type in one index, and different type in another index!",
      })
  }
}

function sortReader(s: SortField, target: SearchTarget): KeyReader {
  switch (s.field) {
    case '_score':
      return (_d, _row, score) => score
    case '_doc':
    case '_shard_doc':
      return (_, row) => row.rid
    case '_id':
      return (d) => d.id
    case '_seq_no':
      return (_, row) => row.seq
    case '_index':
      return () => target.name
    case '_geo_distance':
      if (s.geo) return geoSortReader(s.geo, s.order, target.specs)
  }
  const values = s.nested ? nestedValueReader(s.field, s.nested, target, s.unmappedType) : valueReader(s.field, target, s.unmappedType)
  const missing = s.missing === '_last' || s.missing === '_first' ? undefined : s.missing
  const mode = s.mode ?? (s.order === 1 ? 'min' : 'max')
  return (d) => {
    const vs = values(d)
    if (vs.length === 0) return missing
    if (vs.length === 1) return vs[0]
    if (typeof vs[0] === 'number' && (mode === 'sum' || mode === 'avg' || mode === 'median')) {
      const nums = (vs as number[]).slice().sort((a, b) => a - b)
      const sum = nums.reduce((a, b) => a + b, 0)
      return mode === 'sum' ? sum : mode === 'avg' ? sum / nums.length : nums[Math.floor(nums.length / 2)]
    }
    let best = vs[0]
    for (const v of vs) if (compareValues(v, best) * (mode === 'max' ? -1 : 1) < 0) best = v
    return best
  }
}

/**
 * The values of a nested documents' field, from those under the sort's path that its filter
 * matches (OpenSearch's `nested` sort option); a path that is not nested is refused as there.
 */
function nestedValueReader(
  field: string,
  nested: NonNullable<SortField['nested']>,
  target: SearchTarget,
  unmappedType?: string,
): (d: DocView) => Array<string | number> {
  const { path } = nested
  if (target.specs && nestedPathKind(target.specs, path) !== 'nested')
    throw new QueryShardError(`[nested] failed to find nested object under path [${path}]`)
  const values = valueReader(field, { ...target, specs: target.specs && scopedSpecs(target.specs, path) }, unmappedType)
  const test =
    nested.filter === undefined
      ? undefined
      : compile(nested.filter, target.specs, { now: nested.now, limits: target.limits, scope: path }).test
  return (d) => {
    const out: Array<string | number> = []
    for (const n of nestedDocs(d, path)) if (!test || test(n)) out.push(...values(n))
    return out
  }
}

function valueReader(field: string, target: SearchTarget, unmappedType?: string): (d: DocView) => Array<string | number> {
  const spec: FieldSpec | undefined = target.specs && allSpecs(target.specs).get(field)
  if (target.specs && !spec) {
    if (unmappedType !== undefined) return () => []
    throw new QueryShardError(`No mapping found for [${field}] in order to sort on`)
  }
  // A nested document's field is mapped, but root documents hold no value of it.
  if (target.specs && !target.specs.has(field)) return () => []
  const kind = spec ? kindOf(spec.type) : 'auto'
  if (kind === 'text')
    throw new IllegalArgument(
      `Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${field}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
    )
  const fp = fieldPath(spec?.path ?? field)
  const limit = spec?.ignore_above
  return (d) => {
    const out: Array<string | number> = []
    for (const v of d.values(fp)) {
      const c = comparable(v, kind, spec?.format)
      if (c !== undefined && (limit === undefined || typeof c !== 'string' || c.length <= limit)) out.push(c)
    }
    return out
  }
}

function comparable(v: unknown, kind: string, format?: string): string | number | undefined {
  switch (kind) {
    case 'number':
      return toNumber(v)
    case 'date':
      return parseDate(v, format)
    case 'boolean':
      return v === true || v === 'true' ? 1 : v === false || v === 'false' ? 0 : undefined
    case 'auto':
      if (typeof v === 'number') return v
      if (typeof v === 'boolean') return v ? 1 : 0
      return typeof v === 'string' ? v : undefined
    default:
      return isObject(v) ? undefined : keywordOf(v)
  }
}

function searchAfterKey(after: unknown[], sort: SortField[], target: SearchTarget): SortValue[] {
  return after.map((v, i) => {
    if (v === null || v === undefined) return undefined
    const spec = target.specs?.get(sort[i].field)
    if (spec && kindOf(spec.type) === 'date' && typeof v === 'string') return parseDate(v, spec.format) ?? parseDate(v) ?? v
    if (spec && kindOf(spec.type) === 'number' && typeof v === 'string') return toNumber(v) ?? v
    return typeof v === 'number' || typeof v === 'string' ? v : keywordOf(v)
  })
}

function compareValues(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b
  if (typeof a === 'string' && typeof b === 'string') return compareCodePoints(a, b)
  return typeof a === 'number' ? -1 : 1
}

function compareKeys(a: SortValue[], b: SortValue[], sort: SortField[]): number {
  for (let i = 0; i < sort.length; i++) {
    const x = a[i]
    const y = b[i]
    if (x === y) continue
    const first = sort[i].missing === '_first'
    if (x === undefined) return first ? -1 : 1
    if (y === undefined) return first ? 1 : -1
    const c = compareValues(x, y) * sort[i].order
    if (c !== 0) return c
  }
  return 0
}

function compareEntries(a: Entry, b: Entry, sort: SortField[]): number {
  return compareKeys(a.key, b.key, sort) || a.rid - b.rid
}

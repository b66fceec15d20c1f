/**
 * `_search`, `_count` and point in time. Every read is authorized on the concrete indices it
 * touches and runs the query the read gate makes of it (terms lookups resolved as the caller,
 * the caller's DLS filter ANDed in; aggregations run over the filtered hits).
 */
import { mergeGlobalResults, splitGlobalAggs } from './global-aggs'
import { jsonToken } from '../json'
import type {
  Mappings,
  Query,
  ResolveOptions,
  SearchBody,
  SearchHit,
  SearchParams,
  SearchResponse,
  SortClause,
  SourceFilter,
} from '../store/port'
import { filterSource, filtersSource, noSourceToFilter, sourceDisabled, sourceSpec } from '../store/source-filter'
import { checkJsonDepth } from '../store/query/limits'
import { addDocValueFields, checkScriptFields, parseDocValueFields } from './docvalue-fields'
import { addFetchFields, parseFetchFields } from './fetch-fields'
import { collapseHits, collapseKind, fieldsOf, parseCollapse, queryFields, type CollapseSpec } from './collapse'
import { highlightHits, parseHighlight } from './highlight'
import { explainHits } from './explanation'
import { indexLimit } from './index-limits'
import { fieldTypesOf, typedKeys } from './typed-keys'
import { ShardsFailed } from '../store/errors'
import { badRequest, type RequestContext } from './context'
import { searchQuery } from './read-gate'
import type { IndexRouter } from './router'
import { openScroll } from './scroll'
import { gateSearch, pitIndices, SEARCH_ACTION, type SearchRequest } from './search-gate'

// The gate lives in ./search-gate so scroll and cursors use it without importing this module back.
export { gateSearch, SEARCH_ACTION, type SearchRequest } from './search-gate'

export const PIT_ACTIONS = {
  create: 'indices:data/read/point_in_time/create',
  delete: 'indices:data/read/point_in_time/delete',
  readAll: 'indices:data/read/point_in_time/readall',
} as const

/** The search-source keys we evaluate. */
const SUPPORTED_KEYS = new Set([
  'query',
  'from',
  'size',
  'sort',
  'search_after',
  'track_total_hits',
  '_source',
  'seq_no_primary_term',
  'version',
  'aggs',
  'aggregations',
  'pit',
  'track_scores',
  'timeout',
  'terminate_after',
  'stored_fields',
  'explain',
  'min_score',
  'profile',
  'stats',
])
/** `_search` and `_msearch` also answer `highlight`, `collapse`, `docvalue_fields`, `fields` and `post_filter` (see searchAs). */
export const SEARCH_KEYS = new Set([
  ...SUPPORTED_KEYS,
  'highlight',
  'collapse',
  'docvalue_fields',
  'script_fields',
  'fields',
  'post_filter',
  'indices_boost',
])
/** Keys OpenSearch knows that this store does not implement: a clear 400 instead of a silently different answer. */
const KNOWN_UNSUPPORTED = new Set([
  'highlight',
  'collapse',
  'rescore',
  'suggest',
  'script_fields',
  'docvalue_fields',
  'fields',
  'post_filter',
  'indices_boost',
  'slice',
  'ext',
  'search_pipeline',
  'derived',
  'verbose_pipeline',
  'include_named_queries_score',
])

function negative(name: string, v: number): never {
  throw badRequest(`[${name}] parameter cannot be negative, found [${v}]`)
}

/** Checks a search source's keys and query as OpenSearch's parser does. */
export function checkSearchBody(body: Record<string, unknown>, allowed: Set<string> = SUPPORTED_KEYS): Record<string, unknown> {
  // Before the read gate walks the query (terms lookups) or anything else recurses over it.
  checkJsonDepth(body)
  if (body.collapse !== undefined && body.rescore !== undefined && allowed === SEARCH_KEYS)
    throw badRequest('cannot use `collapse` in conjunction with `rescore`', 'search_phase_execution_exception')
  for (const key of Object.keys(body)) {
    if (allowed.has(key)) continue
    if (KNOWN_UNSUPPORTED.has(key) && (allowed === SUPPORTED_KEYS || allowed === SEARCH_KEYS))
      throw badRequest(`[${key}] is not supported by this server`)
    throw badRequest(`Unknown key for a ${jsonToken(body[key])} in [${key}].`, 'parsing_exception')
  }
  if (body.query !== undefined && (body.query === null || typeof body.query !== 'object' || Array.isArray(body.query))) {
    throw badRequest('[query] must be an object', 'parsing_exception')
  }
  return body
}

/** The `q` parameter (with `df`, `default_operator`, `analyze_wildcard`, `lenient`) as a query_string query. */
export function uriQuery(ctx: RequestContext): Query | undefined {
  const q = ctx.str('q')
  if (q === undefined) return undefined
  const qs: Record<string, unknown> = { query: q }
  const df = ctx.str('df')
  if (df !== undefined) qs.default_field = df
  const op = ctx.str('default_operator')
  if (op !== undefined) qs.default_operator = op
  const aw = ctx.flag('analyze_wildcard')
  if (aw !== undefined) qs.analyze_wildcard = aw
  const lenient = ctx.flag('lenient')
  if (lenient !== undefined) qs.lenient = lenient
  return { query_string: qs }
}

/** Merges URL parameters into the body and validates what OpenSearch validates before searching. */
async function searchBody(ctx: RequestContext, allowed: Set<string>): Promise<Record<string, unknown>> {
  const body = checkSearchBody((await ctx.json()) ?? {}, allowed)
  const q = uriQuery(ctx)
  if (q !== undefined) body.query = q
  return body
}

function applyUrlParams(ctx: RequestContext, body: Record<string, unknown>): void {
  const from = ctx.int('from')
  if (from !== undefined) body.from = from
  const size = ctx.int('size')
  if (size !== undefined) body.size = size
  for (const key of ['from', 'size'] as const) {
    const v = body[key]
    if (v === undefined) continue
    if (typeof v !== 'number' || !Number.isInteger(v)) throw badRequest(`[${key}] must be an integer`, 'parsing_exception')
    if (v > 2147483647 || v < -2147483648) throw badRequest(`Numeric value (${v}) out of range of int`, 'input_coercion_exception')
    if (v < 0) negative(key, v)
  }
  const sort = ctx.list('sort')
  if (sort) {
    body.sort = sort.map((s): SortClause => {
      const [field, order] = s.split(':')
      if (order === undefined) return field
      if (order !== 'asc' && order !== 'desc') throw badRequest(`Unknown sort order [${order}]`)
      return { [field]: order }
    })
  }
  const source = ctx.str('_source')
  if (source !== undefined) body._source = source === '' || source === 'true' ? true : source === 'false' ? false : source.split(',')
  const includes = ctx.list('_source_includes')
  const excludes = ctx.list('_source_excludes')
  if (includes || excludes) {
    const cur =
      typeof body._source === 'object' && body._source !== null && !Array.isArray(body._source)
        ? (body._source as Record<string, unknown>)
        : {}
    body._source = { ...cur, ...(includes ? { includes } : {}), ...(excludes ? { excludes } : {}) }
  }
  // The flags and numbers OpenSearch's search action reads from the URL into the search source.
  for (const key of ['seq_no_primary_term', 'version', 'explain', 'track_scores'] as const) {
    const v = ctx.flag(key)
    if (v !== undefined) body[key] = v
  }
  const terminateAfter = ctx.int('terminate_after')
  if (terminateAfter !== undefined) body.terminate_after = terminateAfter
  const stored = ctx.list('stored_fields')
  if (stored) body.stored_fields = stored
  const tth = ctx.str('track_total_hits')
  if (tth !== undefined) {
    if (tth === 'true' || tth === '') body.track_total_hits = true
    else if (tth === 'false') body.track_total_hits = false
    else if (/^-?\d+$/.test(tth)) body.track_total_hits = Number(tth)
    else throw badRequest(`Failed to parse value [${tth}] for [track_total_hits]`)
  }
  const t = body.track_total_hits
  if (typeof t === 'number') {
    if (t === -1) body.track_total_hits = true
    else if (t < -1) throw badRequest(`[track_total_hits] parameter must be positive or equals to -1, got ${t}`)
  }
  if (ctx.flag('rest_total_hits_as_int', false) && typeof body.track_total_hits === 'number') {
    throw badRequest(
      `[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got ${body.track_total_hits}`,
      'action_request_validation_exception',
    )
  }
}

/** Runs a search through the gate. */
async function gatedSearch(ctx: RequestContext, req: SearchRequest): Promise<{ res: SearchResponse; indices: string[] }> {
  const { body, indices } = await gateSearch(ctx, req)
  const params: SearchParams = { body: body as SearchBody, ...req.options }
  if (body.pit === undefined) params.index = req.expression
  if (req.restTotalHitsAsInt) params.rest_total_hits_as_int = true
  if (req.readDisabledSource) params.read_disabled_source = true
  return { res: await ctx.store.search(params), indices }
}

/** `stored_fields: _none_` (alone or in a list): no stored field, no metadata, no source. */
const storedNone = (stored: unknown): boolean => [stored].flat().includes('_none_')

/**
 * Runs a search through the gate; `highlight` and `collapse` are worked out here on the hits the
 * store returns (full sources are read for them, and the caller's `_source` filter applied after).
 */
export async function searchAs(ctx: RequestContext, req: SearchRequest): Promise<SearchResponse> {
  if (req.body.fields !== undefined && storedNone(req.body.stored_fields))
    throw new ShardsFailed(
      'search_exception',
      '[stored_fields] cannot be disabled when using the [fields] option',
      req.expression ?? '_all',
    )
  const globals = splitGlobalAggs(req.body)
  const res = await searchWithExtras(ctx, globals ? { ...req, body: globals.body } : req)
  if (globals)
    res.aggregations = mergeGlobalResults(
      globals,
      res.aggregations,
      (await gatedSearch(ctx, { ...req, body: globals.search })).res.aggregations,
    ) as SearchResponse['aggregations']
  if (req.body.explain === true) explainHits(ctx, res.hits.hits)
  const defs = req.body.aggs ?? req.body.aggregations
  if (res.aggregations && defs && ctx.flag('typed_keys', false)) {
    const mappings = await ctx.store.getMapping({ index: req.expression ?? '_all', expand_wildcards: 'all', ignore_unavailable: true })
    const types = fieldTypesOf(Object.values(mappings).map((m) => m.mappings))
    res.aggregations = typedKeys(res.aggregations, defs as Parameters<typeof typedKeys>[1], types) as SearchResponse['aggregations']
  }
  return res
}

async function searchWithExtras(ctx: RequestContext, req: SearchRequest): Promise<SearchResponse> {
  const extras = ['highlight', 'collapse', 'docvalue_fields', 'script_fields', 'fields', 'post_filter'] as const
  if (extras.every((k) => req.body[k] === undefined)) return (await gatedSearch(ctx, req)).res
  const highlight = req.body.highlight === undefined ? undefined : parseHighlight(req.body.highlight)
  const collapse = req.body.collapse === undefined ? undefined : parseCollapse(req.body.collapse)
  const docValues = parseDocValueFields(req.body.docvalue_fields)
  const fetch = parseFetchFields(req.body.fields)
  checkScriptFields(req.body.script_fields)
  const body: Record<string, unknown> = { ...req.body }
  for (const k of extras) delete body[k]
  const filter = body._source
  // Full sources for the extras, filtered after. `stored_fields` keeps its own say over `_source` in
  // the answer, but the extras that read the source (fields, doc values, highlights) still get it.
  const stored = body.stored_fields !== undefined
  // `_none_` reads nothing at all (the store refuses a source beside it), but OpenSearch still
  // highlights such hits: their sources are read here and dropped again with their ids.
  const none = stored && storedNone(body.stored_fields)
  const highlightBare = none && highlight !== undefined && filter === undefined
  if (highlightBare) delete body.stored_fields
  const readSource = highlightBare || (stored && !none && (fetch.length > 0 || docValues.length > 0 || highlight !== undefined))
  if ((filter !== undefined && !stored) || readSource) body._source = true
  const postFiltered = req.body.post_filter === undefined ? undefined : withPostFilter(req.body.post_filter, body)
  // What OpenSearch reads from doc values is read from the source of an index that shows none
  // (`_source: {enabled: false}`): asked of the store, hidden again below.
  const readDisabledSource = docValues.length > 0 || collapse !== undefined
  const inner = { ...req, body: postFiltered?.hits ?? body, ...(readDisabledSource ? { readDisabledSource } : {}) }
  // Collapsing runs its own pages: only the indices (authorized as the search) are needed first.
  const plain = collapse ? undefined : await gatedSearch(ctx, inner)
  if (plain && postFiltered?.aggregations)
    plain.res.aggregations = (await gatedSearch(ctx, { ...req, body: postFiltered.aggregations })).res.aggregations
  const indices = plain ? plain.indices : (await gateSearch(ctx, inner)).indices
  if (docValues.length > 0) {
    const max = await indexLimit(ctx, indices, 'index.max_docvalue_fields_search')
    if (docValues.length > max)
      throw new ShardsFailed(
        'illegal_argument_exception',
        `Trying to retrieve too many docvalue_fields. Must be less than or equal to: [${max}] but was [${docValues.length}]. This limit can be set by changing the [index.max_docvalue_fields_search] index level setting.`,
        indices[0],
      )
  }
  const mappings = new Map<string, Mappings>()
  if (indices.length > 0) {
    const got = await ctx.store.getMapping({ index: indices, expand_wildcards: 'all', ignore_unavailable: true })
    for (const [name, m] of Object.entries(got)) mappings.set(name, m.mappings)
  }
  const res = plain ? plain.res : await collapsed(ctx, inner, collapse!, [...mappings.values()], (i) => mappings.get(i), indices)
  const bare = (h: SearchHit) => sourceDisabled(mappings.get(h._index))
  // The store refuses a source filter on such an index; the filter is applied here after the extras.
  const bareIndex = filtersSource(filter as SourceFilter | undefined) ? indices.find((i) => sourceDisabled(mappings.get(i))) : undefined
  if (bareIndex !== undefined) throw noSourceToFilter(bareIndex)
  if (highlight)
    await highlightHits(
      ctx,
      readDisabledSource ? res.hits.hits.filter((h) => !bare(h)) : res.hits.hits,
      highlight,
      req.body.query,
      mappings,
    )
  if (docValues.length > 0) addDocValueFields(res.hits.hits, docValues, (i) => mappings.get(i))
  if (fetch.length > 0) addFetchFields(res.hits.hits, fetch, (i) => mappings.get(i))
  if (readDisabledSource) for (const h of res.hits.hits) if (bare(h)) delete h._source
  // Read for the extras only: stored_fields alone answers no source, as OpenSearch.
  if (readSource && filter === undefined) for (const h of res.hits.hits) delete h._source
  if (highlightBare) for (const h of res.hits.hits) delete (h as Partial<SearchHit>)._id
  if (filter !== undefined) {
    const spec = sourceSpec(filter as never)
    // The top-level hits only: inner hits have their own `_source` option.
    for (const h of res.hits.hits) {
      if (h._source === undefined) continue
      const kept = filterSource(h._source, spec)
      if (kept === undefined) delete h._source
      else h._source = kept
    }
  }
  return res
}

/**
 * `post_filter`: the hits (and their total) are the query's matches it keeps, the aggregations
 * count the query's own: two searches, the hits' with the filter added in filter context (scores
 * unchanged) and no aggregations, the aggregations' without hits.
 */
function withPostFilter(
  postFilter: unknown,
  body: Record<string, unknown>,
): { hits: Record<string, unknown>; aggregations?: Record<string, unknown> } {
  const { aggs, aggregations, ...rest } = body
  const query = body.query ?? { match_all: {} }
  const hits = { ...rest, query: { bool: { must: [query], filter: [postFilter] } } }
  if (aggs === undefined && aggregations === undefined) return { hits }
  const { sort: _s, search_after: _a, from: _f, track_total_hits: _t, ...forAggs } = body
  return { hits, aggregations: { ...forAggs, size: 0, track_total_hits: false } }
}

const COLLAPSE_WINDOW = 10000

async function collapsed(
  ctx: RequestContext,
  req: SearchRequest,
  spec: CollapseSpec,
  mappings: Mappings[],
  mappingOf: (index: string) => Mappings | undefined,
  indices: string[],
): Promise<SearchResponse> {
  const kind = collapseKind(spec.field, mappings)
  if (req.body.search_after !== undefined) {
    const sort = [req.body.sort ?? []].flat()
    const only = sort.length === 1 ? sort[0] : undefined
    const field = typeof only === 'string' ? only : only !== null && typeof only === 'object' ? Object.keys(only)[0] : undefined
    if (field !== spec.field)
      throw badRequest('collapse field and sort field must be the same when use `collapse` in conjunction with `search_after`')
  }
  const from = typeof req.body.from === 'number' ? req.body.from : 0
  const size = typeof req.body.size === 'number' ? req.body.size : 10
  const want = from + size
  // Pages grow up to the result window (index.max_result_window, learnt from the store's refusal when smaller).
  // from + size counts groups, within the indices' result window as any search's (the store's 400 otherwise).
  let cap = Math.min(COLLAPSE_WINDOW, await indexLimit(ctx, indices, 'index.max_result_window'))
  if (want > cap)
    throw badRequest(
      `Result window is too large, from + size must be less than or equal to: [${cap}] but was [${want}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
    )
  let chunk = Math.min(cap, Math.max(want * 4, 100))
  let res: SearchResponse
  let groups: ReturnType<typeof collapseHits>
  for (;;) {
    const page = { ...req, body: { ...req.body, from: 0, size: size === 0 ? 0 : chunk } }
    try {
      res = (await gatedSearch(ctx, page)).res
    } catch (e) {
      const window = e instanceof Error ? /less than or equal to: \[(\d+)\]/.exec(e.message) : null
      if (window && chunk > want && Number(window[1]) >= want && Number(window[1]) < cap) {
        cap = Number(window[1])
        chunk = cap
        continue
      }
      throw e
    }
    groups = size === 0 ? [] : collapseHits(res.hits.hits, spec.field, kind, mappingOf, want)
    if (groups.length >= want || res.hits.hits.length < chunk || chunk >= cap) break
    chunk = Math.min(cap, chunk * 4)
  }
  const hits: SearchHit[] = []
  for (const g of groups.slice(from, from + size)) {
    const hit = { ...g.hit, fields: { [spec.field]: [g.value] } } as SearchHit & Record<string, unknown>
    if (spec.innerHits.length > 0) {
      const inner: Record<string, unknown> = {}
      const fields = queryFields(spec.field, mappings)
      const group =
        g.value === null
          ? { bool: { must_not: fields.map((f) => ({ exists: { field: f } })) } }
          : { bool: { should: fields.map((f) => ({ term: { [f]: g.value } })), minimum_should_match: 1 } }
      const query = req.body.query === undefined ? group : { bool: { must: [req.body.query], filter: [group] } }
      for (const ih of spec.innerHits) {
        const body: Record<string, unknown> = { query, from: ih.from, size: ih.size, track_total_hits: true }
        if (req.body.pit !== undefined) body.pit = req.body.pit
        if (ih.sort !== undefined) body.sort = ih.sort
        if (ih.version) body.version = true
        if (ih.seq_no_primary_term) body.seq_no_primary_term = true
        if (ih.track_scores) body.track_scores = true
        const sub = ih.collapse
          ? await collapsed(ctx, { ...req, body }, { field: ih.collapse, innerHits: [] }, mappings, mappingOf, indices)
          : (await gatedSearch(ctx, { ...req, body })).res
        if (ih._source !== undefined) {
          const s = sourceSpec(ih._source as never)
          for (const h of sub.hits.hits) {
            const kept = h._source === undefined ? undefined : filterSource(h._source, s)
            if (kept === undefined) delete h._source
            else h._source = kept
          }
        }
        if (ih.fields)
          for (const h of sub.hits.hits) {
            const f = fieldsOf(h, ih.fields, mappingOf(h._index))
            if (f) (h as SearchHit & { fields?: unknown }).fields = f
          }
        inner[ih.name] = { hits: sub.hits }
      }
      hit.inner_hits = inner
    }
    hits.push(hit)
  }
  return { ...res!, hits: { ...res!.hits, hits } }
}

/** The URL's execution options OpenSearch's REST layer refuses (they change nothing on one shard). */
function checkExecutionParams(ctx: RequestContext): void {
  const type = ctx.str('search_type')
  if (type !== undefined && type !== 'query_then_fetch' && type !== 'dfs_query_then_fetch')
    throw badRequest(
      type === 'query_and_fetch' || type === 'dfs_query_and_fetch' ? `Unsupported search type [${type}]` : `No search type for [${type}]`,
    )
  const batched = ctx.int('batched_reduce_size')
  if (batched !== undefined && batched < 2) throw badRequest('batchedReduceSize must be >= 2')
}

async function search(ctx: RequestContext) {
  checkExecutionParams(ctx)
  const body = await searchBody(ctx, SEARCH_KEYS)
  applyUrlParams(ctx, body)
  const dv = ctx.list('docvalue_fields')
  if (dv) body.docvalue_fields = dv
  const req: SearchRequest = {
    expression: ctx.indexExpression(),
    namedIndices: ctx.part('index') !== undefined,
    body,
    options: ctx.resolveOptions(),
    restTotalHitsAsInt: ctx.flag('rest_total_hits_as_int', false),
  }
  const scroll = ctx.str('scroll')
  if (scroll !== undefined) {
    if (body.collapse !== undefined) throw badRequest('cannot use `collapse` in a scroll context', 'search_phase_execution_exception')
    if (body.docvalue_fields !== undefined) throw badRequest('[docvalue_fields] is not supported in a scroll context by this server')
    checkScriptFields(body.script_fields)
    delete body.script_fields
    return openScroll(ctx, req, scroll)
  }
  return searchAs(ctx, req)
}

/**
 * `_count`. With `min_score` the matches are scored: a search of no hits through the same gate
 * counts them. `terminate_after` leaves the count exact (OpenSearch counts most queries from its
 * index statistics without collecting) and says whether collecting would have stopped early.
 */
async function count(ctx: RequestContext) {
  const body = await searchBody(ctx, new Set(['query']))
  const minScore = ctx.float('min_score')
  const terminateAfter = ctx.int('terminate_after')
  if (terminateAfter !== undefined && terminateAfter < 0) throw badRequest('terminateAfter must be > 0')
  const expression = ctx.indexExpression()
  const options = ctx.resolveOptions()
  const query = body.query as Query | undefined
  const counted =
    minScore === undefined
      ? await countAs(ctx, expression, options, query)
      : await searchAs(ctx, {
          expression,
          namedIndices: ctx.part('index') !== undefined,
          body: { ...(query === undefined ? {} : { query }), min_score: minScore, size: 0, track_total_hits: true },
          options,
        }).then((r) => ({ count: (r.hits.total as { value: number }).value, _shards: r._shards }))
  if (!terminateAfter) return counted
  return { terminated_early: counted.count > terminateAfter, ...counted }
}

/** A count through the search gate (authorization, the caller's read filter): `_count` and `_cat/count`. */
export async function countAs(ctx: RequestContext, expression: string | undefined, options: ResolveOptions, query: Query | undefined) {
  const indices = await ctx.authorized(SEARCH_ACTION, expression, options)
  const gated = await searchQuery(ctx, query, indices)
  return ctx.store.count({
    ...(expression !== undefined ? { index: expression } : {}),
    ...options,
    body: gated === undefined ? {} : { query: gated },
  })
}

async function createPit(ctx: RequestContext) {
  const expression = ctx.indexExpression()!
  const keepAlive = ctx.str('keep_alive')
  if (keepAlive === undefined) throw badRequest('Validation Failed: 1: keep alive not set;', 'action_request_validation_exception')
  const options = ctx.resolveOptions()
  await ctx.authorized(PIT_ACTIONS.create, expression, options)
  return ctx.store.createPit({ index: expression, keep_alive: keepAlive, ...options })
}

async function deletePits(ctx: RequestContext) {
  const body = (await ctx.json()) ?? {}
  const ids = body.pit_id
  const list =
    typeof ids === 'string' ? [ids] : Array.isArray(ids) && ids.every((i) => typeof i === 'string') ? (ids as string[]) : undefined
  if (!list || list.length === 0) throw badRequest('Validation Failed: 1: no pit ids specified;', 'action_request_validation_exception')
  for (const id of list) ctx.deps.security.authorizeIndices(ctx.caller, PIT_ACTIONS.delete, await pitIndices(ctx, id))
  return ctx.store.deletePit({ body: { pit_id: list } })
}

async function deleteAllPits(ctx: RequestContext) {
  ctx.deps.security.authorizeIndices(ctx.caller, PIT_ACTIONS.delete, ['*'])
  return ctx.store.deleteAllPits()
}

async function listPits(ctx: RequestContext) {
  ctx.deps.security.authorizeIndices(ctx.caller, PIT_ACTIONS.readAll, ['*'])
  return ctx.store.getAllPits()
}

export function searchRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_search', '/:index/_search'], search, 'search')
  r.on(['GET', 'POST'], ['/_count', '/:index/_count'], count)
  r.on('POST', '/:index/_search/point_in_time', createPit)
  r.on('DELETE', '/_search/point_in_time', deletePits)
  r.on('DELETE', '/_search/point_in_time/_all', deleteAllPits)
  r.on('GET', '/_search/point_in_time/_all', listPits)
}

/**
 * `_search`, `_count` and point in time. Every read is authorized on the concrete indices it
 * touches and runs the query the read gate makes of it (terms lookups resolved as the caller,
 * the caller's DLS filter ANDed in; aggregations run over the filtered hits).
 */
import type { Query, ResolveOptions, SearchBody, SearchParams, SearchResponse, SortClause } from '../store/port'
import { checkJsonDepth } from '../store/query/limits'
import { badRequest, type RequestContext } from './context'
import { searchQuery } from './read-gate'
import type { IndexRouter } from './router'
import { openScroll } from './scroll'

export const SEARCH_ACTION = 'indices:data/read/search'
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
  'stats',
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
  for (const key of Object.keys(body)) {
    if (allowed.has(key)) continue
    if (KNOWN_UNSUPPORTED.has(key) && allowed === SUPPORTED_KEYS) throw badRequest(`[${key}] is not supported by this server`)
    const v = body[key]
    const token = v !== null && typeof v === 'object' ? (Array.isArray(v) ? 'START_ARRAY' : 'START_OBJECT') : 'VALUE_STRING'
    throw badRequest(`Unknown key for a ${token} in [${key}].`, 'parsing_exception')
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
  const seq = ctx.flag('seq_no_primary_term')
  if (seq !== undefined) body.seq_no_primary_term = seq
  const version = ctx.flag('version')
  if (version !== undefined) body.version = version
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

function sortsOnShardDoc(sort: unknown): boolean {
  return [sort].flat().some((c) => c === '_shard_doc' || (c !== null && typeof c === 'object' && '_shard_doc' in c))
}

/**
 * The indices a PIT was opened on, as the Store keeps them with the PIT (so a PIT opened through
 * another node is scoped too). An unknown PIT needs rights on every index: the Store then
 * answers that it is missing, which such a caller may learn.
 */
async function pitIndices(ctx: RequestContext, id: string): Promise<string[]> {
  const { pits } = await ctx.store.getAllPits()
  return pits.find((p) => p.pit_id === id)?.indices ?? ['*']
}

/** One search request as the caller may run it: what `_search`, `_msearch` and scroll share. */
export interface SearchRequest {
  /** The index expression, system indices cut from wildcards (see RequestContext.indexExpression). */
  expression: string | undefined
  /** True when the request named indices (a PIT search must not). */
  namedIndices: boolean
  body: Record<string, unknown>
  options: ResolveOptions
  restTotalHitsAsInt?: boolean
}

/**
 * Authorizes the search on the concrete indices it reads and ANDs the caller's read filter
 * (DLS, feature filters) into the query: the one gate every search-shaped read goes through.
 * Returns the concrete indices with the gated body.
 */
export async function gateSearch(ctx: RequestContext, req: SearchRequest): Promise<{ indices: string[]; body: Record<string, unknown> }> {
  const body = { ...req.body }
  let indices: string[]
  if (body.pit !== undefined) {
    const pit = body.pit as { id?: unknown }
    if (req.namedIndices) throw badRequest('[indices] cannot be used with point in time', 'action_request_validation_exception')
    if (!pit || typeof pit.id !== 'string') throw badRequest('[pit] requires an [id]', 'parsing_exception')
    indices = await pitIndices(ctx, pit.id)
    ctx.deps.security.authorizeIndices(ctx.caller, SEARCH_ACTION, indices)
  } else {
    indices = await ctx.authorized(SEARCH_ACTION, req.expression, req.options)
  }
  if (body.pit === undefined && sortsOnShardDoc(body.sort)) {
    throw badRequest(
      'Validation Failed: 1: _shard_doc is only supported with point-in-time (PIT) searches;',
      'action_request_validation_exception',
    )
  }
  body.query = await searchQuery(ctx, body.query as Query | undefined, indices)
  return { indices, body }
}

/** Runs a search through the gate. */
export async function searchAs(ctx: RequestContext, req: SearchRequest): Promise<SearchResponse> {
  const { body } = await gateSearch(ctx, req)
  const params: SearchParams = { body: body as SearchBody, ...req.options }
  if (body.pit === undefined) params.index = req.expression
  if (req.restTotalHitsAsInt) params.rest_total_hits_as_int = true
  return ctx.store.search(params)
}

async function search(ctx: RequestContext) {
  const body = await searchBody(ctx, SUPPORTED_KEYS)
  applyUrlParams(ctx, body)
  const req: SearchRequest = {
    expression: ctx.indexExpression(),
    namedIndices: ctx.part('index') !== undefined,
    body,
    options: ctx.resolveOptions(),
    restTotalHitsAsInt: ctx.flag('rest_total_hits_as_int', false),
  }
  const scroll = ctx.str('scroll')
  if (scroll !== undefined) return openScroll(ctx, req, scroll)
  return searchAs(ctx, req)
}

async function count(ctx: RequestContext) {
  const body = await searchBody(ctx, new Set(['query']))
  if (ctx.int('terminate_after') !== undefined || ctx.str('min_score') !== undefined) {
    throw badRequest('[terminate_after] and [min_score] are not supported by this server')
  }
  return countAs(ctx, ctx.indexExpression(), ctx.resolveOptions(), body.query as Query | undefined)
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
  r.on(['GET', 'POST'], ['/_search', '/:index/_search'], search)
  r.on(['GET', 'POST'], ['/_count', '/:index/_count'], count)
  r.on('POST', '/:index/_search/point_in_time', createPit)
  r.on('DELETE', '/_search/point_in_time', deletePits)
  r.on('DELETE', '/_search/point_in_time/_all', deleteAllPits)
  r.on('GET', '/_search/point_in_time/_all', listPits)
}

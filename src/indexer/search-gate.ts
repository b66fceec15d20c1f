/**
 * The gate every search-shaped read goes through (`_search`, `_msearch`, scroll, cursors): its own
 * module so that ./scroll and ./doc-cursor use it without importing ./search back.
 */
import type { Query, ResolveOptions } from '../store/port'
import { resolveIndicesBoost } from './indices-boost'
import { badRequest, type RequestContext } from './context'
import { aggregationLookups, filteredQuery } from './read-gate'
import { readFilter } from './dls'
import { confineToReadFilter } from './whole-index-aggs'

export const SEARCH_ACTION = 'indices:data/read/search'

function sortsOnShardDoc(sort: unknown): boolean {
  return [sort].flat().some((c) => c === '_shard_doc' || (c !== null && typeof c === 'object' && '_shard_doc' in c))
}

/**
 * The indices a PIT was opened on, as the Store keeps them with the PIT (so a PIT opened through
 * another node is scoped too). An unknown PIT needs rights on every index: the Store then
 * answers that it is missing, which such a caller may learn.
 */
export async function pitIndices(ctx: RequestContext, id: string): Promise<string[]> {
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
  /** SearchParams.read_disabled_source: set here, for what OpenSearch reads from doc values. */
  readDisabledSource?: boolean
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
  // The caller's read filter, computed once: ANDed into the query, and confining what aggregations read of whole indices.
  const filter = await readFilter(ctx, indices)
  body.query = await filteredQuery(ctx, body.query as Query | undefined, indices, filter)
  for (const key of ['aggs', 'aggregations'])
    if (body[key] !== undefined) {
      body[key] = await aggregationLookups(ctx, body[key])
      if (filter !== undefined) body[key] = confineToReadFilter(body[key], filter)
    }
  if (body.indices_boost !== undefined) body.indices_boost = await resolveIndicesBoost(ctx, body.indices_boost, indices, req.options)
  return { indices, body }
}

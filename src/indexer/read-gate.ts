/**
 * The one gate for reading documents on a caller's behalf. Every path that hands a caller
 * something read from a document goes through here, so each applies what a direct
 * `GET <index>/_doc/<id>` by that caller applies: the index permission, the system-index rule
 * (both in `Security.authorizeIndices`) and document-level security plus the features' read
 * filters (`readFilter`):
 *
 * - single documents (`_doc`, `_source`): `readDocument`; several in one request (`_mget`):
 *   `authorizeRead` per index, then `filteredGet`;
 * - documents fetched from inside a query (terms lookups): `resolveLookups`, before the store
 *   sees the query, so the store's own (service) reads never serve a caller; the same for the
 *   queries a search's aggregations hold (`filter`, `filters`...): `aggregationLookups`;
 * - searches, counts, PIT searches and their aggregations: `authorizeSearch` + `searchQuery`;
 * - `_source` echoed by writes (`_update`, bulk `update`): `guardUpdate`, which also refuses an
 *   update where the caller's reads are filtered, as the platform's security plugin does.
 *
 * Refusals are the platform's 403 `security_exception`; a document DLS hides is "not found".
 * Nothing here ever puts a value of a document the caller may not read into an answer.
 */
import { OpenSearchHttpError } from '../http/errors'
import type { GetParams, GetResponse, Query, Source } from '../store/port'
import { resolveAggregationLookups, resolveTermsLookups } from '../store/query/terms'
import { badRequest, type RequestContext } from './context'
import { matchesFilter, readFilter, withFilter } from './dls'
import { hasMoreLikeThis, rewriteMoreLikeThis } from './more-like-this'

/** The platform's action for reading one document; what every single-document read needs. */
export const GET_ACTION = 'indices:data/read/get'

/** The platform's refusal of a partial update under DLS: the merge would reveal (or change) hidden content. */
export const FILTERED_UPDATE_REASON = 'Update is not supported when FLS or DLS or Fieldmasking is activated'

/** The one concrete index a single-document read of `name` targets, authorized for `action`. */
export async function authorizeRead(ctx: RequestContext, name: string, action = GET_ACTION): Promise<string> {
  const [index] = await ctx.authorized(action, name, { expand_wildcards: 'all' })
  if (index === undefined) throw badRequest(`no concrete index for [${name}]`)
  return index
}

/**
 * A document as `GET <index>/_doc/<id>` by the caller sees it: 403 without read rights on the
 * index (system indices included), `found: false` when the caller's filter hides it.
 */
export async function readDocument(ctx: RequestContext, params: GetParams, action = GET_ACTION): Promise<GetResponse> {
  return filteredGet(ctx, await authorizeRead(ctx, params.index, action), params)
}

/**
 * The second half of `readDocument`, for routes that authorized the concrete `index` already
 * (several documents in one request): the get, answered as not found when the caller's filter
 * hides the document.
 */
export async function filteredGet(ctx: RequestContext, index: string, params: GetParams): Promise<GetResponse> {
  const res = await ctx.store.get(params)
  if (!res.found) return res
  const filter = await readFilter(ctx, [index])
  if (filter === undefined) return res
  // The filter is tested on the whole document, whatever part of it the caller asked to see.
  const projected = params._source !== undefined || params._source_includes || params._source_excludes || params.stored_fields
  const full = projected ? await ctx.store.get({ index: params.index, id: params.id, realtime: params.realtime }) : res
  if (full.found && (await matchesFilter(ctx.store, filter, index, params.id, full._source))) return res
  return { _index: res._index, _id: params.id, found: false }
}

/** The source of a document the caller may read, or undefined when it is missing or hidden. */
export async function readSource(ctx: RequestContext, index: string, id: string): Promise<Source | undefined> {
  const res = await readDocument(ctx, { index, id })
  return res.found ? (res._source ?? {}) : undefined
}

/**
 * The query with its terms lookups resolved through `readDocument` as the caller: a lookup on
 * an index the caller may not read is that read's 403; a hidden document contributes no terms.
 */
export async function resolveLookups(ctx: RequestContext, query: Query | undefined): Promise<Query | undefined> {
  if (query === undefined) return undefined
  return (await resolveTermsLookups(query, (index, id) => readSource(ctx, index, id))) as Query
}

/** A search's aggregations with the terms lookups of their queries resolved as resolveLookups resolves the query's. */
export async function aggregationLookups(ctx: RequestContext, aggs: unknown): Promise<unknown> {
  return resolveAggregationLookups(aggs, (index, id) => readSource(ctx, index, id))
}

/**
 * What a search, count or PIT search by the caller over `indices` runs: the caller's query with
 * its lookups resolved by the gate, then the DLS and feature filters ANDed in (aggregations run
 * over the filtered hits). The filters themselves may hold lookups: those are the roles', read
 * by the store with the service's rights, as the platform resolves DLS.
 */
export async function searchQuery(ctx: RequestContext, query: Query | undefined, indices: string[]): Promise<Query | undefined> {
  return filteredQuery(ctx, query, indices, await readFilter(ctx, indices))
}

/** `searchQuery` for a caller whose read filter over the indices is already at hand. */
export async function filteredQuery(
  ctx: RequestContext,
  query: Query | undefined,
  indices: string[],
  filter: Query | undefined,
): Promise<Query | undefined> {
  let q = await resolveLookups(ctx, query)
  // more_like_this becomes the terms it selects, weighed over what the caller may read.
  if (q !== undefined && hasMoreLikeThis(q))
    q = await rewriteMoreLikeThis(ctx, q, indices, filter, (index, id) => readSource(ctx, index, id))
  return withFilter(q, filter)
}

/** True when the caller's reads of any of the indices are filtered (DLS or a feature's filter). */
export async function readsFiltered(ctx: RequestContext, indices: string[]): Promise<boolean> {
  for (const index of indices) if ((await readFilter(ctx, [index])) !== undefined) return true
  return false
}

/** True when the caller may read documents of every one of the indices (system-index rule included). */
export function mayRead(ctx: RequestContext, indices: string[]): boolean {
  try {
    ctx.deps.security.authorizeIndices(ctx.caller, GET_ACTION, indices)
    return true
  } catch {
    return false
  }
}

/** Whether an update's `_source` option makes the answer carry the document (`get`). */
export function echoesSource(option: unknown): boolean {
  return option !== undefined && option !== false && option !== 'false'
}

/**
 * Checks an update on `indices` before anything is applied: refused (403) when the caller's
 * reads of any of them are filtered, and, when the answer is to carry the document (`echoes`),
 * the caller must also be allowed to read it.
 */
export async function guardUpdate(ctx: RequestContext, indices: string[], echoes: boolean): Promise<void> {
  if (await readsFiltered(ctx, indices)) throw filteredUpdate()
  if (echoes) ctx.deps.security.authorizeIndices(ctx.caller, GET_ACTION, indices)
}

export function filteredUpdate(): OpenSearchHttpError {
  return new OpenSearchHttpError(403, 'security_exception', FILTERED_UPDATE_REASON)
}

export { readFilter }

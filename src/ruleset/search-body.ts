/**
 * The body of the Ruleset Management `_search` routes, checked against the store port's own
 * search schema before it is passed on, so that a mistyped `size` or `sort` is a 400 naming the
 * field rather than a failure inside the store.
 */
import { readJson, SMALL_BODY } from '../http/body'
import { ApiError } from '../http/errors'
import type { RouteBody } from '../http/route'
import { checkBody } from '../http/validate'
import { SearchBody } from '../store/port'
import { documentFetchingClause } from '../store/query/terms'

export const SEARCH_BODY: RouteBody = { limit: SMALL_BODY, schema: SearchBody }

/** An empty body searches everything; anything else must be a search request object. */
export async function readSearchBody(request: Request): Promise<SearchBody> {
  const read = await readJson(request, SMALL_BODY)
  if (read.empty) return {}
  if ('invalid' in read || typeof read.value !== 'object' || read.value === null || Array.isArray(read.value))
    throw new ApiError(400, 'Invalid search request body.')
  // These searches run with the service's rights: nothing in them may read another document.
  const fetching = documentFetchingClause(read.value)
  if (fetching !== undefined) throw new ApiError(400, `Invalid search request body: [${fetching}] is not supported in this search.`)
  return checkBody(SearchBody, read.value, 'search request body')
}

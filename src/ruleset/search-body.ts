/**
 * The body of the Ruleset Management `_search` routes, checked against the store port's own
 * search schema before it is passed on, so that a mistyped `size` or `sort` is a 400 naming the
 * field rather than a failure inside the store.
 */
import { SMALL_BODY } from '../http/body'
import { ApiError } from '../http/errors'
import { objectBody } from '../http/route'
import { SearchBody } from '../store/port'
import { documentFetchingClause } from '../store/query/terms'

/** An empty body searches everything; anything else must be a search request object. */
export const SEARCH_BODY = objectBody(SMALL_BODY, SearchBody, { name: 'search request body', optional: true })

/** The checked body, refused when it would fetch documents: these searches run with the service's rights. */
export function searchOf(body: SearchBody): SearchBody {
  const fetching = documentFetchingClause(body)
  if (fetching !== undefined) throw new ApiError(400, `Invalid search request body: [${fetching}] is not supported in this search.`)
  return body
}

/**
 * `indices_boost`: a score factor per index, named by index, alias or wildcard. OpenSearch takes
 * the first entry that names an index (array order; the deprecated object form in its key order)
 * and answers a name that resolves to nothing with `no such index` unless ignore_unavailable.
 * Resolved here, before the store sees it, into concrete indices the search reads.
 */
import { isObject, jsonToken } from '../json'
import type { ResolveOptions } from '../store/port'
import { badRequest, type RequestContext } from './context'

/** The (name, boost) entries in order, refused as OpenSearch's parser refuses them. */
function entriesOf(given: unknown): Array<[string, number]> {
  const expected = (what: string, found: string) =>
    badRequest(`Expected [${what}] in [indices_boost] but found [${found}]`, 'parsing_exception')
  let pairs: Array<[string, unknown]>
  if (Array.isArray(given))
    pairs = given.map((e) => {
      if (!isObject(e)) throw badRequest(`Expected [START_OBJECT] in [null] but found [${jsonToken(e)}]`, 'parsing_exception')
      const keys = Object.entries(e)
      if (keys.length === 0) throw expected('FIELD_NAME', 'END_OBJECT')
      if (keys.length > 1) throw expected('END_OBJECT', 'FIELD_NAME')
      return keys[0]
    })
  else if (isObject(given)) pairs = Object.entries(given)
  else throw badRequest(`Unknown key for a ${jsonToken(given)} in [indices_boost].`, 'parsing_exception')
  return pairs.map(([name, boost]) => {
    if (typeof boost !== 'number') throw expected('VALUE_NUMBER', jsonToken(boost))
    return [name, boost]
  })
}

/** The boost of each concrete index `indices` holds, as `[{index: boost}]`. */
export async function resolveIndicesBoost(
  ctx: RequestContext,
  given: unknown,
  indices: readonly string[],
  options: ResolveOptions,
): Promise<Array<Record<string, number>>> {
  const searched = new Set(indices)
  const boosts = new Map<string, number>()
  for (const [name, boost] of entriesOf(given)) {
    const named = await ctx.store.resolve(name, {
      ignore_unavailable: options.ignore_unavailable,
      allow_no_indices: true,
      expand_wildcards: 'open',
    })
    for (const index of named) if (searched.has(index) && !boosts.has(index)) boosts.set(index, boost)
  }
  return [...boosts].map(([index, boost]) => ({ [index]: boost }))
}

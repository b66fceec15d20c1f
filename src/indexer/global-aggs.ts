/**
 * `global` aggregations: their documents are every document of the searched indices, whatever
 * the query. They are split from the search and answered by a second search through the same
 * gate (so DLS and alias filters still apply) with a match_all filter in their place, as the
 * same `{doc_count, ...}` result; only top-level ones are allowed, as in OpenSearch.
 */
import { OpenSearchHttpError } from '../http/errors'
import { isObject } from '../store/query/doc'

const META = new Set(['aggs', 'aggregations', 'meta'])

export interface GlobalSplit {
  /** The search without its global aggregations. */
  body: Record<string, unknown>
  /** The search that answers them (no hits). */
  search: Record<string, unknown>
  /** Every top-level aggregation name, in the request's order. */
  names: string[]
}

/** The search's global aggregations split out, or undefined when it has none. */
export function splitGlobalAggs(body: Record<string, unknown>): GlobalSplit | undefined {
  const defs = body.aggs ?? body.aggregations
  if (!isObject(defs)) return undefined
  const globals: Record<string, unknown> = {}
  const rest: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(defs)) {
    if (isObject(def)) for (const sub of [def.aggs, def.aggregations]) refuseNested(name, sub)
    if (!isObject(def) || typeOf(def) !== 'global') {
      rest[name] = def
      continue
    }
    if (!isObject(def.global) || Object.keys(def.global).length > 0)
      throw new OpenSearchHttpError(
        400,
        'parsing_exception',
        `Expected [FIELD_NAME] under a [START_OBJECT], but got a [VALUE_NUMBER] in [${name}]`,
      )
    const { global: _, ...others } = def
    globals[name] = { ...others, filter: { match_all: {} } }
  }
  if (Object.keys(globals).length === 0) return undefined
  const { aggs: _a, aggregations: _b, ...plain } = body
  const names = Object.keys(defs)
  return {
    body: Object.keys(rest).length > 0 ? { ...plain, aggs: rest } : plain,
    search: {
      query: { match_all: {} },
      size: 0,
      track_total_hits: false,
      aggs: globals,
      ...(body.pit !== undefined ? { pit: body.pit } : {}),
      ...(body.timeout !== undefined ? { timeout: body.timeout } : {}),
    },
    names,
  }
}

/** The aggregations of both searches, in the request's order. */
export function mergeGlobalResults(split: GlobalSplit, main: unknown, globals: unknown): Record<string, unknown> {
  const all = { ...(isObject(main) ? main : {}), ...(isObject(globals) ? globals : {}) }
  return Object.fromEntries(split.names.filter((n) => n in all).map((n) => [n, all[n]]))
}

const typeOf = (def: Record<string, unknown>) => Object.keys(def).find((k) => !META.has(k))

/** A global aggregation below another is refused, in OpenSearch's words. */
function refuseNested(parent: string, subs: unknown): void {
  if (!isObject(subs)) return
  for (const [name, def] of Object.entries(subs)) {
    if (!isObject(def)) continue
    if (typeOf(def) === 'global')
      throw new OpenSearchHttpError(
        400,
        'aggregation_execution_exception',
        `Aggregation [${parent}] cannot have a global sub-aggregation [${name}]. Global aggregations can only be defined as top level aggregations`,
      )
    refuseNested(name, def.aggs)
    refuseNested(name, def.aggregations)
  }
}

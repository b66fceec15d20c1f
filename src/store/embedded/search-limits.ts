/** The node settings of OpenSearch's search limits, read into the embedded store's terms. */
import { DEFAULT_QUERY_LIMITS } from '../query/limits'
import { parseTimeValue } from '../settings'

/** OpenSearch's node-level bounds on searches and points in time (setting names in comments). */
export interface SearchLimits {
  /** `indices.query.bool.max_clause_count` */
  maxClauseCount: number
  /** `search.max_buckets` */
  maxBuckets: number
  /** `search.default_search_timeout` in milliseconds; -1: none */
  defaultSearchTimeoutMs: number
  /** `search.max_open_pit_context` */
  maxOpenPitContext: number
  /** `point_in_time.max_keep_alive` in milliseconds */
  maxPitKeepAliveMs: number
  /** `search.allow_expensive_queries` */
  allowExpensiveQueries: boolean
  /**
   * OpenSearch's request circuit breaker (`indices.breaker.request.limit`, 60% of the JVM heap),
   * counted in the distinct keys one search may hold (terms keys, significant backgrounds, a
   * whole field's values): about 100 bytes each. Not a setting; a store option for tests.
   */
  maxRequestKeys: number
}

export const DEFAULT_SEARCH_LIMITS: SearchLimits = {
  maxClauseCount: DEFAULT_QUERY_LIMITS.maxClauseCount,
  maxBuckets: 65_535,
  defaultSearchTimeoutMs: -1,
  maxOpenPitContext: 300,
  maxPitKeepAliveMs: 86_400_000,
  allowExpensiveQueries: true,
  maxRequestKeys: 1_000_000,
}

const time = (v: unknown, key: string): number | undefined => {
  if (v === undefined || v === null || v === '') return undefined
  if (v === -1 || v === '-1') return -1
  return parseTimeValue(String(v), key)
}

export function searchLimitsOf(values: ReadonlyMap<string, unknown>): Partial<SearchLimits> {
  const num = (key: string) => (typeof values.get(key) === 'number' ? (values.get(key) as number) : undefined)
  const out: Partial<SearchLimits> = {
    maxClauseCount: num('indices.query.bool.max_clause_count'),
    maxBuckets: num('search.max_buckets'),
    maxOpenPitContext: num('search.max_open_pit_context'),
    defaultSearchTimeoutMs: time(values.get('search.default_search_timeout'), 'search.default_search_timeout'),
    maxPitKeepAliveMs: time(values.get('point_in_time.max_keep_alive'), 'point_in_time.max_keep_alive'),
    allowExpensiveQueries:
      typeof values.get('search.allow_expensive_queries') === 'boolean'
        ? (values.get('search.allow_expensive_queries') as boolean)
        : undefined,
  }
  for (const k of Object.keys(out) as Array<keyof SearchLimits>) if (out[k] === undefined) delete out[k]
  return out
}

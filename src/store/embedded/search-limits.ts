/** The node settings of OpenSearch's search limits, read into the embedded store's terms. */
import { parseTimeValue } from '../settings'
import type { SearchLimits } from './store'

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
  }
  for (const k of Object.keys(out) as Array<keyof SearchLimits>) if (out[k] === undefined) delete out[k]
  return out
}

/**
 * The index-level sections of OpenSearch's stats (`_stats`, `_nodes/stats`' `indices`): docs,
 * store and flush from the store's figures, indexing, get, search and refresh from its counters
 * (activity), summed over the indices given; what a single node without segments, merges,
 * caches or a translog has of the rest is zero.
 */
import { type IndexActivity, type IndexStats, noActivity, type SearchCounts } from '../store/port'

/** The metrics of the indices stats API, by the section each fills (`merge` fills `merges`). */
export const sectionOf = (metric: string) => (metric === 'merge' ? 'merges' : metric)

const TRANSLOG_HEADER = 55

/** Figures of these indices (a node's, the cluster's, or one index's), the wanted sections only. */
export function indexFigures(stats: IndexStats[], wanted: Set<string>, groups?: (group: string) => boolean): Record<string, unknown> {
  const docs = stats.reduce((n, s) => n + (s.status === 'open' ? s.docs_count : 0), 0)
  const size = stats.reduce((n, s) => n + s.store_size_in_bytes, 0)
  const flushes = stats.reduce((n, s) => n + s.flush_total, 0)
  const done = sumActivity(stats)
  const all: Record<string, unknown> = {
    docs: { count: docs, deleted: 0 },
    store: { size_in_bytes: size, reserved_in_bytes: 0 },
    indexing: { ...done.indexing, index_current: 0, delete_current: 0, is_throttled: false, throttle_time_in_millis: 0 },
    get: { ...done.get, current: 0 },
    search: {
      open_contexts: 0,
      ...done.search,
      groups: undefined,
      query_current: 0,
      fetch_current: 0,
      scroll_total: 0,
      scroll_time_in_millis: 0,
      scroll_current: 0,
      point_in_time_total: 0,
      point_in_time_time_in_millis: 0,
      point_in_time_current: 0,
      suggest_total: 0,
      suggest_time_in_millis: 0,
      suggest_current: 0,
      // Asked for by name or pattern (`_stats?groups=`), each with the figures above.
      ...(groups
        ? {
            groups: Object.fromEntries(
              Object.entries(done.search.groups ?? {})
                .filter(([g]) => groups(g))
                .map(([g, c]) => [g, searchSection(c)]),
            ),
          }
        : {}),
    },
    merges: {
      current: 0,
      current_docs: 0,
      current_size_in_bytes: 0,
      total: 0,
      total_time_in_millis: 0,
      total_docs: 0,
      total_size_in_bytes: 0,
    },
    refresh: { ...done.refresh, listeners: 0 },
    flush: { total: flushes, periodic: 0, total_time_in_millis: 0 },
    warmer: { current: 0, total: 0, total_time_in_millis: 0 },
    query_cache: { memory_size_in_bytes: 0, total_count: 0, hit_count: 0, miss_count: 0, cache_size: 0, cache_count: 0, evictions: 0 },
    fielddata: { memory_size_in_bytes: 0, evictions: 0 },
    completion: { size_in_bytes: 0 },
    // One segment per index with documents: the store's documents are one table, not Lucene segments.
    segments: { count: stats.filter((s) => s.docs_count > 0).length, memory_in_bytes: 0, file_sizes: {} },
    // OpenSearch's empty translog is a 55-byte header.
    translog: {
      operations: done.translog.operations,
      size_in_bytes: TRANSLOG_HEADER * stats.length + done.translog.size_in_bytes,
      uncommitted_operations: done.translog.operations,
      uncommitted_size_in_bytes: TRANSLOG_HEADER * stats.length + done.translog.size_in_bytes,
      earliest_last_modified_age: 0,
    },
    request_cache: { memory_size_in_bytes: 0, evictions: 0, hit_count: 0, miss_count: 0 },
    recovery: { current_as_source: 0, current_as_target: 0, throttle_time_in_millis: 0 },
  }
  return Object.fromEntries(Object.entries(all).filter(([k]) => wanted.has(k)))
}

/** A search section: the counters, and what is never under way on this node. */
const searchSection = (c: SearchCounts) => ({
  ...c,
  query_current: 0,
  fetch_current: 0,
  scroll_total: 0,
  scroll_time_in_millis: 0,
  scroll_current: 0,
})

/** The counters of every index added up, section by section (search groups by name). */
function sumActivity(stats: IndexStats[]): IndexActivity {
  const zeros = noActivity()
  const total = <T extends object>(zero: T, sections: Array<T | undefined>): T => {
    const out: Record<string, number> = { ...(zero as Record<string, number>) }
    for (const section of sections)
      for (const [k, v] of Object.entries(section ?? {})) if (typeof v === 'number') out[k] = (out[k] ?? 0) + v
    return out as T
  }
  const groups: Record<string, SearchCounts> = {}
  for (const s of stats)
    for (const [g, c] of Object.entries(s.activity?.search.groups ?? {})) groups[g] = total(zeros.search as SearchCounts, [groups[g], c])
  const section = <K extends keyof IndexActivity>(k: K) =>
    total(
      zeros[k],
      stats.map((s) => s.activity?.[k]),
    )
  return {
    indexing: section('indexing'),
    get: section('get'),
    search: { ...section('search'), groups },
    refresh: section('refresh'),
    translog: section('translog'),
  }
}

/**
 * Per-index operation counters (indexing, get, search, refresh), as OpenSearch's indices stats
 * report them: counted where each operation runs, kept in memory (OpenSearch's start at zero
 * when a node starts too), times summed in fractions of a millisecond and shown whole.
 */
import { type IndexActivity, noActivity, type SearchCounts } from '../port'
import type { IndexMeta } from './catalog'

const of = (meta: IndexMeta): IndexActivity => (meta.activity ??= noActivity())

/** A document write's outcome: `created`/`updated` are indexing, `deleted`/`not_found` deletes, `noop` an update that changed nothing. */
export function noteWrite(meta: IndexMeta, result: string, ms: number): void {
  const a = of(meta).indexing
  if (result === 'noop') a.noop_update_total++
  else if (result === 'deleted' || result === 'not_found') {
    a.delete_total++
    a.delete_time_in_millis += ms
  } else {
    a.index_total++
    a.index_time_in_millis += ms
  }
}

/** A write the engine refused (a version conflict). */
export function noteFailedWrite(meta: IndexMeta): void {
  of(meta).indexing.index_failed++
}

export function noteGet(meta: IndexMeta, found: boolean, ms: number): void {
  const g = of(meta).get
  g.total++
  g.time_in_millis += ms
  if (found) {
    g.exists_total++
    g.exists_time_in_millis += ms
  } else {
    g.missing_total++
    g.missing_time_in_millis += ms
  }
}

/** A search over these indices: each counts a query and its fetch, under each of the search's stats `groups` too. */
export function noteSearch(metas: readonly IndexMeta[], ms: number, groups: readonly string[] = []): void {
  for (const meta of metas) {
    const s = of(meta).search
    count(s, ms)
    for (const g of groups)
      count(((s.groups ??= {})[g] ??= { query_total: 0, query_time_in_millis: 0, fetch_total: 0, fetch_time_in_millis: 0 }), ms)
  }
}

function count(s: SearchCounts, ms: number): void {
  s.query_total++
  s.query_time_in_millis += ms
  // OpenSearch counts a fetch phase for every search, a size-0 one too.
  s.fetch_total++
}

/** A refresh of the index; `external`: asked for (the refresh API, a write's `refresh`). */
export function noteRefresh(meta: IndexMeta, ms: number, external: boolean): void {
  const r = of(meta).refresh
  r.total++
  r.total_time_in_millis += ms
  if (external) {
    r.external_total++
    r.external_total_time_in_millis += ms
  }
}

/** A write logged (its stored bytes), until the next flush checkpoints it. */
export function noteLogged(meta: IndexMeta, bytes: number): void {
  const t = of(meta).translog
  t.operations++
  t.size_in_bytes += bytes
}

export function noteFlush(meta: IndexMeta): void {
  of(meta).translog = { operations: 0, size_in_bytes: 0 }
}

/** The index's counters as reported: whole milliseconds. */
export function activityFigures(meta: IndexMeta): IndexActivity {
  const a = meta.activity ?? noActivity()
  const whole = <T extends object>(section: T): T =>
    Object.fromEntries(
      Object.entries(section).map(([k, v]) => [k, k.endsWith('_millis') && typeof v === 'number' ? Math.floor(v) : v]),
    ) as T
  const groups = a.search.groups && Object.fromEntries(Object.entries(a.search.groups).map(([g, c]) => [g, whole(c)]))
  return {
    indexing: whole(a.indexing),
    get: whole(a.get),
    search: { ...whole(a.search), ...(groups ? { groups } : {}) },
    refresh: whole(a.refresh),
    translog: { ...a.translog },
  }
}

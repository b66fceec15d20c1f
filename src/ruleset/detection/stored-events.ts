/**
 * Stored events of some indices within a time range (`@timestamp`), read page by page in
 * `_seq_no` order per concrete index: what a rule preview and a retro-hunt look back over. A
 * position (concrete index -> last `_seq_no` read) lets a reader stop and carry on later.
 */
import { ApiError } from '../../http/errors'
import type { SearchHit, Store } from '../../store/port'
import { parseDateMath } from '../../store/query'
import { concreteIndices } from './checkpoint'

export interface TimeRange {
  /** Epoch millis, inclusive. */
  from: number
  /** Epoch millis, exclusive. */
  to: number
}

/** Events per page read. */
export const EVENTS_PAGE = 1_000

/** A caller's bound of a range (epoch millis, ISO date or date math such as `now-7d`), a 400 otherwise. */
export function rangeBound(value: unknown, name: string, now: number, roundUp = false): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value
  try {
    return parseDateMath(value, roundUp, now)
  } catch {
    throw new ApiError(400, `Invalid ${name} [${String(value)}]: epoch milliseconds, a date or date math (now-7d)`)
  }
}

/** One page of an index's events in the range (any time without one), after `after`. */
async function page(
  store: Store,
  index: string,
  range: TimeRange | undefined,
  after: number,
  size: number,
  filter?: Record<string, unknown>,
): Promise<SearchHit[]> {
  const inRange = range
    ? { range: { '@timestamp': { gte: new Date(range.from).toISOString(), lt: new Date(range.to).toISOString() } } }
    : { match_all: {} }
  const r = await store.search({
    index,
    body: {
      size,
      query: filter ? { bool: { filter: [inRange, filter] } } : inRange,
      sort: [{ _seq_no: 'asc' }],
      search_after: [after],
      seq_no_primary_term: true,
      track_total_hits: false,
    },
  })
  return r.hits.hits
}

/**
 * The pages of the events of `expressions` in `range`, each with its concrete index; `position`
 * is read for where to start and moved as pages are handed out. With `until`, an index is read
 * only up to that `_seq_no` (an index it does not name, not at all).
 */
export async function* eventsInRange(
  store: Store,
  expressions: string[],
  range: TimeRange | undefined,
  opts: {
    position?: Record<string, number>
    until?: Record<string, number>
    size?: number
    /** A caller's document-level security per concrete index: what it may not read is never read. */
    filterOf?: (index: string) => Record<string, unknown> | undefined
  } = {},
): AsyncGenerator<{ index: string; hits: SearchHit[] }> {
  const { position = {}, until, size = EVENTS_PAGE, filterOf } = opts
  for (const index of await concreteIndices(store, expressions)) {
    const last = until ? (until[index] ?? -1) : Infinity
    while ((position[index] ?? -1) < last) {
      let hits = await page(store, index, range, position[index] ?? -1, size, filterOf?.(index))
      const full = hits.length === size
      if (hits.length === 0) break
      position[index] = hits[hits.length - 1]._seq_no ?? position[index]
      if ((position[index] ?? -1) > last) hits = hits.filter((h) => (h._seq_no ?? -1) <= last)
      if (hits.length > 0) yield { index, hits }
      if (!full) break
    }
  }
}

/**
 * Stored events of some indices within a time range (`@timestamp`), read page by page in
 * `_seq_no` order per concrete index: what a rule preview and a retro-hunt look back over. A
 * position (concrete index -> last `_seq_no` read) lets a reader stop and carry on later.
 */
import { ApiError } from '../../http/errors'
import type { Query, SearchHit, Store } from '../../store/port'
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

/** The range as the store's query (any time without one). */
const rangeQuery = (range: TimeRange | undefined) =>
  range ? { range: { '@timestamp': { gte: new Date(range.from).toISOString(), lt: new Date(range.to).toISOString() } } } : { match_all: {} }

/** One page of an index's events matching `query`, after `after`. */
async function page(store: Store, index: string, query: Query, after: number, size: number, filter?: Query): Promise<SearchHit[]> {
  const r = await store.search({
    index,
    body: {
      size,
      query: filter ? { bool: { filter: [query, filter] } } : query,
      sort: [{ _seq_no: 'asc' }],
      search_after: [after],
      seq_no_primary_term: true,
      track_total_hits: false,
    },
  })
  return r.hits.hits
}

/** The `_seq_no` before an index's first event in the range; undefined when it has none. */
async function beforeFirst(store: Store, index: string, range: TimeRange, filter?: Query): Promise<number | undefined> {
  const [first] = await page(store, index, rangeQuery(range), -1, 1, filter)
  return first ? (first._seq_no ?? 0) - 1 : undefined
}

/** Whether an event's `@timestamp` (an ISO date or epoch millis) is in the range. */
function inRange(hit: SearchHit, range: TimeRange): boolean {
  const at = hit._source?.['@timestamp']
  const t = typeof at === 'number' ? at : typeof at === 'string' ? Date.parse(at) : NaN
  return t >= range.from && t < range.to
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
    /**
     * The range tested on each event read, in `_seq_no` order from the index's first event in the
     * range, rather than by the store's query: for a reader of nearly every event after that one
     * (a retro-hunt). A range query costs the embedded store tens of ms of this thread per page;
     * reading in `_seq_no` order yields as it goes.
     */
    rangeByReading?: boolean
  } = {},
): AsyncGenerator<{ index: string; hits: SearchHit[] }> {
  const { position = {}, until, size = EVENTS_PAGE, filterOf, rangeByReading = false } = opts
  const byReading = rangeByReading && range !== undefined
  for (const index of await concreteIndices(store, expressions)) {
    const last = until ? (until[index] ?? -1) : Infinity
    const filter = filterOf?.(index)
    if (byReading && position[index] === undefined) {
      const before = await beforeFirst(store, index, range, filter)
      if (before === undefined) continue
      position[index] = before
    }
    const query = byReading ? { match_all: {} } : rangeQuery(range)
    while ((position[index] ?? -1) < last) {
      let hits = await page(store, index, query, position[index] ?? -1, size, filter)
      const full = hits.length === size
      if (hits.length === 0) break
      position[index] = hits[hits.length - 1]._seq_no ?? position[index]
      if ((position[index] ?? -1) > last) hits = hits.filter((h) => (h._seq_no ?? -1) <= last)
      if (byReading) hits = hits.filter((h) => inRange(h, range))
      if (hits.length > 0) yield { index, hits }
      if (!full) break
    }
  }
}

/**
 * Bucket ordering: `_count`, `_key`, or a sub-aggregation's value (`{"avg_price": "desc"}`,
 * `{"price_stats.max": "asc"}`), in OpenSearch's `order` forms (one object or a list).
 */
import { parseIp } from '../query/ip'
import { IllegalArgument, ParsingError } from '../errors'
import { compareCodePoints } from '../query/fold'
import { isObject } from '../query/doc'

/** A bucket key (terms, histogram and date keys alike); ./aggs re-exports it. */
export type Key = string | number

export type Order = Array<[string, 1 | -1]>

export function parseOrder(order: unknown, fallback: Order): Order {
  if (order === undefined) return fallback
  const list = Array.isArray(order) ? order : [order]
  return list.flatMap((o) => {
    if (!isObject(o)) throw new ParsingError('[order] must be an object or an array of objects')
    return Object.entries(o).map(([k, v]) => {
      const dir = String(v).toLowerCase()
      if (dir !== 'asc' && dir !== 'desc') throw new ParsingError(`Unknown order direction [${String(v)}]`)
      return [k === '_term' || k === '_time' ? '_key' : k, dir === 'asc' ? 1 : -1] as [string, 1 | -1]
    })
  })
}

export function compareKeys(a: Key, b: Key): number {
  return typeof a === 'number' && typeof b === 'number' ? a - b : compareCodePoints(String(a), String(b))
}

/** `ip` keys in the order of their 128-bit values, as OpenSearch sorts them (IPv4 among IPv4-mapped IPv6). */
export function compareIps(a: Key, b: Key): number {
  const x = parseIp(String(a))
  const y = parseIp(String(b))
  return x === undefined || y === undefined ? compareKeys(a, b) : x < y ? -1 : x > y ? 1 : 0
}

/** The number a sub-aggregation path names in a bucket's results. */
function pathValue(subs: Record<string, unknown>, path: string): number {
  const [name, metric] = path.split('.')
  const r = subs[name]
  if (!isObject(r)) throw new IllegalArgument(`Invalid aggregation order path [${path}]. Unknown aggregation [${name}]`)
  const v = metric !== undefined ? r[metric] : 'value' in r ? r.value : r.doc_count
  if (v === null || v === undefined) return Number.NaN
  return Number(v)
}

export interface Ordered {
  key: Key
  count: number
  subs: Record<string, unknown>
}

/** Sorts buckets by the order, then by count desc and key asc (OpenSearch's tie-breaks). */
export function sortBuckets<T extends Ordered>(buckets: T[], order: Order, compare: (a: Key, b: Key) => number = compareKeys): T[] {
  return buckets.sort(bucketOrder(order, compare))
}

/**
 * The first `size` buckets of that order, sorted: one pass keeping the best ones (a terms
 * aggregation shows 10 of its 1,000 hosts in each of 28 hourly buckets).
 */
export function topBuckets<T extends Ordered>(
  buckets: T[],
  size: number,
  order: Order,
  compare: (a: Key, b: Key) => number = compareKeys,
): T[] {
  const cmp = bucketOrder(order, compare)
  if (buckets.length <= size * 4) return buckets.sort(cmp).slice(0, size)
  const top: T[] = []
  for (const b of buckets) {
    if (top.length === size && cmp(b, top[size - 1]) >= 0) continue
    let at = top.length === size ? size - 1 : top.length
    while (at > 0 && cmp(b, top[at - 1]) < 0) {
      top[at] = top[at - 1]
      at--
    }
    top[at] = b
    if (top.length > size) top.length = size
  }
  return top
}

function bucketOrder(order: Order, compare: (a: Key, b: Key) => number) {
  return (a: Ordered, b: Ordered): number => {
    for (const [by, dir] of order) {
      let c: number
      if (by === '_count') c = a.count - b.count
      else if (by === '_key') c = compare(a.key, b.key)
      else {
        const x = pathValue(a.subs, by)
        const y = pathValue(b.subs, by)
        // Buckets without a value sort last whatever the direction.
        if (Number.isNaN(x) || Number.isNaN(y)) {
          if (Number.isNaN(x) && Number.isNaN(y)) continue
          return Number.isNaN(x) ? 1 : -1
        }
        c = x - y
      }
      if (c !== 0) return c * dir
    }
    return a.count !== b.count ? b.count - a.count : compare(a.key, b.key)
  }
}

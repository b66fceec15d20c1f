import { ApiError } from '../../http/errors'

/** The peer's paging bound: `size` and `startIndex` above it are refused, as its search window. */
const MAX_WINDOW = 10_000

/** A non-negative integer parameter, `fallback` when absent; a 400 naming it otherwise. */
export function count(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0 || n > MAX_WINDOW) throw new ApiError(400, `Invalid ${name} [${v}]`)
  return n
}

/**
 * The list parameters of the peer's alert and finding routes (`sortString`, `sortOrder`, `size`,
 * `startIndex`), read one way with one wording of their 400s.
 */
export function listParams(
  q: Record<string, string | undefined>,
  defaultSort: string,
  sortable: (field: string) => boolean,
): { sortField: string; order: 'asc' | 'desc'; size: number; from: number } {
  const sortField = q.sortString ?? defaultSort
  if (!sortable(sortField)) throw new ApiError(400, `Invalid sortString [${sortField}]`)
  const order = (q.sortOrder ?? 'asc').toLowerCase()
  if (order !== 'asc' && order !== 'desc') throw new ApiError(400, `Invalid sortOrder [${q.sortOrder}]`)
  return { sortField, order, size: count(q.size, 20, 'size'), from: count(q.startIndex, 0, 'startIndex') }
}

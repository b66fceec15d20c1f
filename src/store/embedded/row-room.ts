/**
 * Room left at the end of a large rewritten column, so that a rewrite keeps the row's size. SQLite
 * writes a row whose size did not change over the old one page by page, and only the pages whose
 * bytes differ (btreeOverwriteCell); a row of another size is written whole. An integration listing
 * 10,000 rules (source and keys, some 750 KB) is rewritten to append one id: whole, each rewrite
 * put 750 KB in the write-ahead log and as much again in the checkpoint; kept at its size, the
 * pages from the new id on (its tail) only. The room is trailing white space, which every JSON
 * reader of a column (JSON.parse, SQLite's json_each) skips.
 */

/** Columns shorter than this are written as they are (a rewrite costs little then). */
export const ROOM_FROM = 64 * 1024
/** Room is added in steps of a page. */
const PAGE = 4096

/**
 * `text` as a column of a rewritten row whose column had `had` bytes: padded to `had` bytes when it
 * fits there without leaving more than a third unused, else to its length plus an eighth (rounded
 * up to a page), so that a growing list is written whole once per eighth it grows.
 */
export function withRoom(text: string, had: number): string {
  if (text.length < ROOM_FROM / 3) return text // at most 3 bytes a UTF-16 unit: shorter than ROOM_FROM
  const bytes = Buffer.byteLength(text)
  if (bytes < ROOM_FROM) return text
  const size = bytes <= had && had - bytes <= had / 3 ? had : Math.ceil((bytes + bytes / 8) / PAGE) * PAGE
  return text + ' '.repeat(size - bytes)
}

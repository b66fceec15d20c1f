/**
 * Field values written in batches, as OpenSearch's refresh writes segments. A new document's
 * keyword, numeric and date values (its `fv` rows) are not inserted by the write that stores it:
 * each row lands at its own place in the (f, v, rid) B-tree, and a bulk of a thousand events
 * dirtied a page per value of every field with many values (hosts, agents), each copied to the
 * log at every commit; ingest slowed as the B-tree outgrew the page cache. The document's `keys`
 * column already lists those rows, in the same transaction as its source, so an acknowledged write
 * is as durable as before; a refresh reads the keys of the documents not yet refreshed and
 * inserts their rows sorted by field and value, each page of the B-tree touched once per batch.
 *
 * Every index keeps the rid below which all documents have their rows (`indexed_rid`, moved in the
 * refresh's transaction, so a crash leaves the rows and the mark in step). Documents at or above it
 * are pending: their writes leave `fv` alone (an update or a delete of a pending document finds
 * no rows to remove; the refresh reads the keys the document has then). A refresh runs before
 * every search or count reads an index (so reads see every acknowledged write, as they did), at the
 * end of a write transaction that leaves REFRESH_DOCS documents pending, on `_refresh`, and a
 * moment after writes stop (so that a search after a quiet ingest finds little left to do).
 */
import { noteRefresh } from './activity'
import type { Database } from 'bun:sqlite'
import type { IndexMeta } from './catalog'

/** What a refresh writes through: the store's connection, in the running transaction (core.ts). */
export interface RefreshTarget {
  readonly db: Database
  onUndo(fn: () => void): void
}

/**
 * Pending documents that make a write transaction refresh its index: bigger batches touch each
 * page fewer times (a field of a thousand values dirties a page per value per batch, whatever its
 * size) but hold the node thread longer. 1M security events over HTTP, same runs: 8,192 -> 16,384
 * took ingest from 12.6-13.4k to 15.2-15.6k events/s, a health check's p99 during it from 506 to
 * 710 ms; 32,768 gave 16.5k/s for stalls of 1.3 s. The sort spills to a file past the page
 * cache (temp_store, schema.ts), so the batch does not add to the node's memory.
 */
export const REFRESH_DOCS = 16384

/**
 * Documents a deferred transaction's body refreshes at most (core.ts): a detector writes its
 * findings a slice at a time between requests, and 8,192 of them refreshed at once held the node
 * thread for some 190 ms; the oldest pending go first, a step each time REFRESH_DOCS are pending.
 */
export const REFRESH_STEP = 1024

/** Whether a document's field values wait for the next refresh (see the module comment). */
export const pendingRid = (meta: IndexMeta, rid: number): boolean => rid >= meta.indexedRid

/** Whether an index has documents whose field values wait for a refresh. */
export const hasPending = (meta: IndexMeta): boolean => meta.nextRid > meta.indexedRid

/**
 * Inserts the field values of the index's pending documents (the `limit` oldest, when given); must
 * run inside a transaction.
 * SQLite reads their keys and sorts the rows in the B-tree's order (in its sorter, bounded by the
 * page cache's size, not in JS objects), so the inserts walk the B-tree from one end to the other.
 * The keys are walked as JSONB (`jsonb_each`): each `[f, v]` comes as a blob `->>` reads without
 * parsing text again (`json_each` renders it as text: the SELECT took twice as long). A value gets
 * the type a bound value has (BOUND_VALUE).
 */
export function refreshIndex(core: RefreshTarget, meta: IndexMeta, limit = Infinity): void {
  if (!hasPending(meta)) return
  const started = performance.now()
  const from = meta.indexedRid
  const upto = Math.min(meta.nextRid, from + limit)
  // A keyword array may repeat a value: OR IGNORE, as for a single write.
  core.db
    .query(
      `INSERT OR IGNORE INTO fv (f, v, rid) SELECT k.value ->> 0, ${BOUND_VALUE}, d.rid FROM docs d, jsonb_each(d.keys) k
       WHERE d.rid >= ? AND d.rid < ? ORDER BY 1, 2, 3`,
    )
    .run(from, upto)
  core.db.query('UPDATE indices SET indexed_rid = ? WHERE ix = ?').run(upto, meta.ix)
  meta.indexedRid = upto
  core.onUndo(() => (meta.indexedRid = Math.min(meta.indexedRid, from)))
  noteRefresh(meta, performance.now() - started, false)
}

/**
 * A key's value as the write binds it: `->>` reads a JSON string as TEXT and a number as INTEGER or
 * REAL, but a JavaScript integer past 2^53 is bound as REAL (its JSON reads back as INTEGER), and
 * a lookup or aggregation of such a long would miss the row. Such an integer has 16 digits or more,
 * so its key (`[f,n]`, as JSON text or JSONB) takes 20 bytes or more: a shorter key (most are) is
 * read as it is, with no type test (a sixth of the refresh's SELECT over security events).
 */
const BOUND_VALUE = `CASE WHEN octet_length(k.value) < 20 THEN k.value ->> 1
  WHEN json_type(k.value, '$[1]') = 'integer' AND NOT (k.value ->> 1 BETWEEN -9007199254740991 AND 9007199254740991)
  THEN CAST(k.value ->> 1 AS REAL) ELSE k.value ->> 1 END`

/**
 * An index's documents in `_seq_no` order with their stored texts: how a detector reads what is
 * new. The node thread reads them through the store (readSeq); a detection worker thread opens the
 * store file itself (openSeqReader) and reads the same rows on a connection of its own, so the node
 * thread writes findings and serves requests meanwhile. Both read committed rows only (WAL).
 */
import { Database } from 'bun:sqlite'
import type { StoredBatch } from '../port'

/**
 * Visits the documents of index `ix` after `after` in `_seq_no` order, at most `size`, stopping
 * once the texts pass `maxChars` (a batch of large events stays bounded). One row at a time, so
 * a reader that keeps few of them (a detection scan keeps the matched ones) holds no whole batch
 * of texts: those die young, where a batch held across the collections it triggers would be kept
 * to the next full one. The statement does not stay open past the call.
 */
export function eachStored(
  db: Database,
  ix: number,
  after: number,
  size: number,
  maxChars: number,
  visit: (id: string, seq: number, text: string) => void,
): number {
  let chars = 0
  const rows = db.query<{ id: string; seq: number; src: string }, [number, number, number]>(
    'SELECT id, seq, src FROM docs WHERE ix = ? AND seq > ? ORDER BY seq LIMIT ?',
  )
  for (const row of rows.iterate(ix, after, size)) {
    visit(row.id, row.seq, row.src)
    chars += row.src.length
    if (chars >= maxChars) break
  }
  return chars
}

/** `eachStored`'s documents as one batch. */
export function readStored(db: Database, ix: number, after: number, size: number, maxChars: number): StoredBatch {
  const batch: StoredBatch = { ids: [], seqNos: [], sources: [] }
  eachStored(db, ix, after, size, maxChars, (id, seq, text) => {
    batch.ids.push(id)
    batch.seqNos.push(seq)
    batch.sources.push(text)
  })
  return batch
}

/** A read-only connection to a live store file, for a thread that reads by `_seq_no`. */
export interface SeqReader {
  read(ix: number, after: number, size: number, maxChars: number): StoredBatch
  /** `eachStored` on this connection: the characters visited. */
  each(ix: number, after: number, size: number, maxChars: number, visit: (id: string, seq: number, text: string) => void): number
  close(): void
}

export function openSeqReader(file: string): SeqReader {
  const db = new Database(file, { readonly: true })
  db.run('PRAGMA busy_timeout = 5000')
  return {
    read: (ix, after, size, maxChars) => readStored(db, ix, after, size, maxChars),
    each: (ix, after, size, maxChars, visit) => eachStored(db, ix, after, size, maxChars, visit),
    close: () => db.close(),
  }
}

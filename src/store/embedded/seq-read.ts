/**
 * An index's documents in `_seq_no` order with their stored texts: how a detector reads what is
 * new. The node thread reads them through the store (readSeq); a detection worker thread opens the
 * store file itself (openSeqReader) and reads the same rows on a connection of its own, so the node
 * thread writes findings and serves requests meanwhile. Both read committed rows only (WAL).
 */
import { Database } from 'bun:sqlite'
import type { StoredBatch } from '../port'

/** Rows read per statement: a large batch stops at its budget within one. */
const STORED_PAGE = 500

/**
 * Documents of index `ix` after `after`, at most `size`, stopping once the texts pass `maxChars`
 * (a batch of large events stays bounded); no statement stays open between calls.
 */
export function readStored(db: Database, ix: number, after: number, size: number, maxChars: number): StoredBatch {
  const ids: string[] = []
  const seqNos: number[] = []
  const sources: string[] = []
  let chars = 0
  const page = db.query('SELECT id, seq, src FROM docs WHERE ix = ? AND seq > ? ORDER BY seq LIMIT ?')
  while (ids.length < size && chars < maxChars) {
    const want = Math.min(STORED_PAGE, size - ids.length)
    const rows = page.values(ix, seqNos.length > 0 ? seqNos[seqNos.length - 1] : after, want) as Array<[string, number, string]>
    for (const [id, seq, text] of rows) {
      ids.push(id)
      seqNos.push(seq)
      sources.push(text)
      chars += text.length
      if (chars >= maxChars) break
    }
    if (rows.length < want) break
  }
  return { ids, seqNos, sources }
}

/** A read-only connection to a live store file, for a thread that reads by `_seq_no`. */
export interface SeqReader {
  read(ix: number, after: number, size: number, maxChars: number): StoredBatch
  close(): void
}

export function openSeqReader(file: string): SeqReader {
  const db = new Database(file, { readonly: true })
  db.run('PRAGMA busy_timeout = 5000')
  return {
    read: (ix, after, size, maxChars) => readStored(db, ix, after, size, maxChars),
    close: () => db.close(),
  }
}

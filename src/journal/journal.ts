import { Database } from 'bun:sqlite'

/**
 * The node-local journal (bun:sqlite, separate from the data store): what
 * this node did and when — sync checkpoints, job runs, lock audit. It is an
 * operator's record, never shared across nodes and never needed for
 * correctness of shared state.
 */
export interface JournalEntry {
  at: number
  kind: string
  subject: string
  detail: Record<string, unknown>
}

export class Journal {
  private readonly db: Database
  private readonly insert
  private readonly recent

  constructor(path: string) {
    this.db = new Database(path, { create: true })
    this.db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;')
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, kind TEXT NOT NULL, subject TEXT NOT NULL, detail TEXT NOT NULL)',
    )
    this.db.exec('CREATE INDEX IF NOT EXISTS journal_kind ON journal (kind, subject, seq)')
    this.insert = this.db.prepare('INSERT INTO journal (at, kind, subject, detail) VALUES (?, ?, ?, ?)')
    this.recent = this.db.prepare('SELECT at, kind, subject, detail FROM journal WHERE kind LIKE ? ORDER BY seq DESC LIMIT ?')
  }

  record(kind: string, subject: string, detail: Record<string, unknown> = {}, at = Date.now()): void {
    this.insert.run(at, kind, subject, JSON.stringify(detail))
  }

  /** Newest first; `kindPrefix` such as "lock." selects a family. */
  entries(kindPrefix = '', limit = 1000): JournalEntry[] {
    return (this.recent.all(`${kindPrefix}%`, limit) as Array<{ at: number; kind: string; subject: string; detail: string }>).map((r) => ({
      ...r,
      detail: JSON.parse(r.detail),
    }))
  }

  /** How many entries of each kind starting with `kindPrefix` were ever recorded (metrics counters). */
  counts(kindPrefix: string): Map<string, number> {
    const rows = this.db.query('SELECT kind, count(*) AS n FROM journal WHERE kind LIKE ? GROUP BY kind').all(`${kindPrefix}%`) as Array<{
      kind: string
      n: number
    }>
    return new Map(rows.map((r) => [r.kind, r.n]))
  }

  close(): void {
    this.db.close()
  }
}

/**
 * Snapshots of the embedded store: a consistent copy of the whole store file taken while writes go
 * on (SQLite's `VACUUM INTO`, run by a worker on its own read transaction), and the readers a
 * restore needs (the indices of a copy, then its documents in batches). The copy is an ordinary
 * store file of the same schema; it is only ever opened read-only.
 */
import { Database } from 'bun:sqlite'
import type { AliasDefinition, Mappings } from '../port'
import { ridRange } from './rids'

/**
 * The copy worker. In the compiled executable it is an entry point of its own (scripts/build.ts),
 * addressed from the bundle's root (src/); run from source, it is the file next to this one.
 */
const COPY_WORKER = import.meta.url.includes('$bunfs')
  ? './store/embedded/copy-worker.ts'
  : new URL('./copy-worker.ts', import.meta.url).href

/** Copies `source` (a live store file) to `target` consistently, without blocking the event loop. */
export function copyStore(source: string, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(COPY_WORKER)
    const done = (error?: Error) => {
      worker.terminate()
      if (error) reject(error)
      else resolve()
    }
    worker.onmessage = (e: MessageEvent<{ ok: boolean; error?: string }>) => done(e.data.ok ? undefined : new Error(e.data.error))
    worker.onerror = (e) => done(new Error(e.message))
    worker.postMessage({ source, target })
  })
}

export interface SnapshotIndex {
  ix: number
  name: string
  /** Flat `index.*` settings as the index was created (identity keys removed). */
  settings: Record<string, string | string[]>
  mappings: Mappings
  aliases: Record<string, AliasDefinition>
  closed: boolean
  dataStream?: string
  docs: number
}

/** Settings that identify one index instance; a restored index gets its own. */
const INSTANCE_SETTINGS = ['index.uuid', 'index.creation_date', 'index.provided_name', 'index.version.created']

export function openSnapshot(file: string): Database {
  return new Database(file, { readonly: true })
}

export function snapshotIndices(db: Database): SnapshotIndex[] {
  type Row = { ix: number; name: string; settings: string; mappings: string; closed: number; data_stream: string | null }
  const aliases = new Map<number, Record<string, AliasDefinition>>()
  for (const r of db.query('SELECT alias, ix, def FROM aliases').all() as Array<{ alias: string; ix: number; def: string }>) {
    const m = aliases.get(r.ix) ?? {}
    m[r.alias] = JSON.parse(r.def)
    aliases.set(r.ix, m)
  }
  const count = db.query('SELECT count(*) AS n FROM docs WHERE rid BETWEEN ? AND ?')
  return (db.query('SELECT ix, name, settings, mappings, closed, data_stream FROM indices ORDER BY name').all() as Row[]).map((r) => {
    const settings = JSON.parse(r.settings) as Record<string, string | string[]>
    for (const k of INSTANCE_SETTINGS) delete settings[k]
    return {
      ix: r.ix,
      name: r.name,
      settings,
      mappings: JSON.parse(r.mappings),
      aliases: aliases.get(r.ix) ?? {},
      closed: r.closed === 1,
      dataStream: r.data_stream ?? undefined,
      docs: (count.get(...ridRange(r.ix)) as { n: number }).n,
    }
  })
}

/** The documents of one index of a snapshot, `batch` at a time, in rowid order. */
export function* snapshotDocuments(
  db: Database,
  index: SnapshotIndex,
  batch = 500,
): Generator<Array<{ id: string; source: Record<string, unknown> }>> {
  const [lo, hi] = ridRange(index.ix)
  const page = db.query('SELECT rid, id, src FROM docs WHERE rid > ? AND rid <= ? ORDER BY rid LIMIT ?')
  let after = lo - 1
  for (;;) {
    const rows = page.all(after, hi, batch) as Array<{ rid: number; id: string; src: string }>
    if (rows.length === 0) return
    after = rows[rows.length - 1].rid
    yield rows.map((r) => ({ id: r.id, source: JSON.parse(r.src) }))
  }
}

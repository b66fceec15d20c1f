/**
 * Store integrity at start. The store file alone cannot tell "new" from "lost": SQLite opens a
 * missing or emptied file as a fresh empty database (even with the old WAL beside it), and a copy
 * restored from last week looks just as healthy as today's file. So the store's identity and
 * progress are kept in a second place, a small marker file beside it, written atomically; every
 * open compares the two and runs SQLite's `quick_check`, and anything that does not add up stops
 * the start with an error that names the file and what to do. Nothing starts silently empty.
 *
 * Progress is a generation counter stored in both places, raised at every open, every clean close
 * and every 30 s while writes happen: a file copied away before its last start, or while the node
 * ran (after the next tick), has a lower generation than the marker and is refused.
 */
import { Database } from 'bun:sqlite'
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs'
import { dirname } from 'node:path'
import { type Migration, type MigrationResult, SCHEMA_MIGRATIONS, StoreFileError } from './migrations'
import { prepareDatabase, type Synchronous } from './schema'

export interface StoreMarker {
  store_uuid: string
  generation: number
  schema_version: number
  updated: string
}

export interface OpenedStoreFile {
  db: Database
  migration: MigrationResult
  /** The cluster's identity (`cluster_uuid`), generated when the store was created and kept in it. */
  clusterUuid: string
  /** Records a clean close (generation + 1 in the store and the marker); call before `db.close()`. */
  seal(): void
}

export interface OpenStoreFileOptions {
  synchronous: Synchronous
  /** Injectable for tests that simulate a schema change. */
  migrations?: readonly Migration[]
  /** How often written progress is recorded (0: only at open and close); default PROGRESS_INTERVAL_MS. */
  progressIntervalMs?: number
}

/** A running node records its progress (when it wrote anything) this often. */
export const PROGRESS_INTERVAL_MS = 30_000

export const markerPath = (file: string) => `${file}.marker`

const RECOVER =
  'Restore the data directory from a backup or snapshot, or, to start deliberately with an empty store, ' +
  'move the data directory (or the store file and its marker) aside.'

/** Writes `data` to `path` so that readers see the old or the new content, never a torn file; mode 0600. */
export function writeFileAtomic(path: string, data: string): void {
  const tmp = `${path}.tmp`
  const fd = openSync(tmp, 'w', 0o600)
  try {
    writeSync(fd, data)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(tmp, path)
  // The rename itself is durable only once the directory entry is.
  const dir = openSync(dirname(path), 'r')
  try {
    fsyncSync(dir)
  } finally {
    closeSync(dir)
  }
}

function readMarker(file: string): StoreMarker | undefined {
  const path = markerPath(file)
  if (!existsSync(path)) return undefined
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as StoreMarker
    if (typeof m.store_uuid === 'string' && Number.isSafeInteger(m.generation)) return m
  } catch {}
  throw new StoreFileError(
    path,
    `store marker ${path} is unreadable, so store file ${file} cannot be verified. ${RECOVER} ` +
      'If the store file is known to be good, deleting only the marker makes the next start adopt it.',
  )
}

const sizeOf = (path: string) => (existsSync(path) ? statSync(path).size : undefined)

/** Checks that need no SQLite: the file against the marker and the write-ahead log beside it. */
function checkPresence(file: string, marker: StoreMarker | undefined): void {
  const size = sizeOf(file)
  const wal = sizeOf(`${file}-wal`) ?? 0
  const what = size === undefined ? 'is missing' : 'is empty'
  if (size !== undefined && size > 0) return
  if (marker) {
    throw new StoreFileError(
      file,
      `store file ${file} ${what}, but ${markerPath(file)} records store ${marker.store_uuid} at generation ${marker.generation}: ` +
        `its data is gone. ${RECOVER}`,
    )
  }
  // Without a marker (a store from before markers existed): a write-ahead log without its store,
  // or an emptied file, still means data was there. Only "nothing at all" is a first start.
  if (wal > 0) {
    throw new StoreFileError(
      file,
      `store file ${file} ${what} but its write-ahead log ${file}-wal holds data: the store was lost. ${RECOVER}`,
    )
  }
  if (size === 0) throw new StoreFileError(file, `store file ${file} is empty (0 bytes): it is not a store. ${RECOVER}`)
}

function quickCheck(db: Database, file: string): void {
  const rows = db.query('PRAGMA quick_check').all() as Array<{ quick_check: string }>
  const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok')
  if (problems.length > 0) {
    throw new StoreFileError(file, `store file ${file} fails SQLite's quick_check (${problems.slice(0, 3).join('; ')}). ${RECOVER}`)
  }
}

/**
 * OpenSearch's cluster_uuid: random (22 base64url characters, as OpenSearch's) once per store, so
 * two installs never report the same one, and kept, so a node keeps it across restarts.
 */
function clusterUuidOf(db: Database): string {
  const fresh = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64url')
  db.query("INSERT OR IGNORE INTO store_meta (key, value) VALUES ('cluster_uuid', ?)").run(fresh)
  return meta(db, 'cluster_uuid')!
}

function meta(db: Database, key: string): string | undefined {
  return (db.query('SELECT value FROM store_meta WHERE key = ?').get(key) as { value: string } | null)?.value
}

/** Raises the generation in the store (durably) and then in the marker. */
function advance(db: Database, file: string, uuid: string, schemaVersion: number): number {
  const generation = Number(meta(db, 'generation') ?? 0) + 1
  db.transaction(() =>
    db.query("INSERT OR REPLACE INTO store_meta (key, value) VALUES ('generation', ?)").run(String(generation)),
  ).immediate()
  writeFileAtomic(
    markerPath(file),
    JSON.stringify({
      store_uuid: uuid,
      generation,
      schema_version: schemaVersion,
      updated: new Date().toISOString(),
    } satisfies StoreMarker) + '\n',
  )
  return generation
}

/**
 * Opens the store file after the presence checks, `quick_check`, schema migration and the
 * identity/progress comparison with the marker; `:memory:` skips the file checks.
 */
export function openStoreFile(file: string, options: OpenStoreFileOptions): OpenedStoreFile {
  const migrations = options.migrations ?? SCHEMA_MIGRATIONS
  if (file === ':memory:') {
    const db = new Database(file)
    const migration = prepareDatabase(db, options.synchronous, file, migrations)
    return { db, migration, clusterUuid: clusterUuidOf(db), seal() {} }
  }
  const marker = readMarker(file)
  checkPresence(file, marker)
  // Created private before SQLite opens it: SQLite gives the WAL and shared-memory files the same mode.
  if (!existsSync(file)) closeSync(openSync(file, 'wx', 0o600))
  let db: Database | undefined
  try {
    db = new Database(file, { create: true })
    quickCheck(db, file)
    const migration = prepareDatabase(db, options.synchronous, file, migrations)
    let uuid = meta(db, 'store_uuid')
    if (marker && uuid !== marker.store_uuid) {
      throw new StoreFileError(
        file,
        `store file ${file} is store ${uuid ?? '(without identity)'}, but ${markerPath(file)} records store ${marker.store_uuid}: ` +
          `the file was replaced by another store's file. ${RECOVER}`,
      )
    }
    const generation = Number(meta(db, 'generation') ?? 0)
    if (marker && generation < marker.generation) {
      throw new StoreFileError(
        file,
        `store file ${file} is at generation ${generation}, older than the generation ${marker.generation} recorded in ${markerPath(file)}: ` +
          `it is an earlier copy of this store and acknowledged writes after it would be lost. ${RECOVER}`,
      )
    }
    if (!uuid) {
      // A new store, or one written before markers existed: it gets its identity now.
      uuid = crypto.randomUUID()
      db.query("INSERT INTO store_meta (key, value) VALUES ('store_uuid', ?)").run(uuid)
    }
    const schemaVersion = migration.to
    const opened = db
    const id = uuid
    advance(opened, file, id, schemaVersion)
    // While the node runs, the generation also moves when writes happened since the last tick, so a
    // copy of the file taken mid-run is refused once a tick has passed, even after a crash.
    const changes = () => (opened.query('SELECT total_changes() AS n').get() as { n: number }).n
    let seen = changes()
    const interval = options.progressIntervalMs ?? PROGRESS_INTERVAL_MS
    const timer =
      interval > 0
        ? setInterval(() => {
            try {
              // A transaction left open (a deferred bulk's) would take the generation in uncommitted,
              // and the marker would be ahead of the store after a crash: the next tick records it.
              if (opened.inTransaction || changes() === seen) return
              advance(opened, file, id, schemaVersion)
              seen = changes()
            } catch {
              // The connection is gone (closed without a seal); the marker keeps the last progress.
              clearInterval(timer)
            }
          }, interval)
        : undefined
    timer?.unref?.()
    return {
      db: opened,
      migration,
      clusterUuid: clusterUuidOf(opened),
      seal: () => {
        clearInterval(timer)
        advance(opened, file, id, schemaVersion)
      },
    }
  } catch (e) {
    db?.close()
    if (e instanceof StoreFileError) throw e
    // SQLite's own refusal (not a database, malformed image, I/O error) named with our advice.
    const reason = e instanceof Error ? e.message : String(e)
    throw new StoreFileError(file, `store file ${file} cannot be opened (${reason}). ${RECOVER}`)
  }
}

export { StoreFileError }

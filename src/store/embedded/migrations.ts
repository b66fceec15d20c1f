/**
 * Schema versions of the embedded store. The version lives in SQLite's own header field
 * (`PRAGMA user_version`), so it travels with the file and changes in the same transaction as the
 * tables it describes. A newer binary migrates an older file in place, after a backup copy, in one
 * transaction (all steps or none); an older binary refuses a newer file rather than misread it.
 */
import type { Database } from 'bun:sqlite'
import { existsSync } from 'node:fs'
import type { Mappings } from '../port'
import { fieldPath } from '../query/doc'
import { FLAT_OBJECT, flatLeaves, valueAndPathField, valueAndPathKey } from '../query/flat-object'
import { fieldSpecs } from './mapping'
import { ridRange } from './rids'
import { isLengthsField, termsField } from './text-fields'
import {
  createTextTables,
  type Key,
  saveStats,
  type TextRows,
  statsDelta,
  type StatsDelta,
  textKeys,
  viewOf,
  writeText,
} from './text-index'

export interface Migration {
  /** The schema version the store has after this step; steps are numbered 1, 2, 3... */
  version: number
  description: string
  up(db: Database): void
}

/** Raised when a store file cannot be opened as it is; the message names the file and what to do. */
export class StoreFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message)
    this.name = 'StoreFileError'
  }
}

function createBaseSchema(db: Database): void {
  db.run(`CREATE TABLE IF NOT EXISTS indices (
    ix INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    uuid TEXT NOT NULL,
    created INTEGER NOT NULL,
    settings TEXT NOT NULL,
    mappings TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT -1,
    data_stream TEXT
  )`)
  // Stores created before indices could be closed lack the column.
  const cols = db.query('PRAGMA table_info(indices)').all() as Array<{ name: string }>
  if (!cols.some((c) => c.name === 'closed')) db.run('ALTER TABLE indices ADD COLUMN closed INTEGER NOT NULL DEFAULT 0')
  db.run(`CREATE TABLE IF NOT EXISTS aliases (
    alias TEXT NOT NULL,
    ix INTEGER NOT NULL,
    def TEXT NOT NULL,
    PRIMARY KEY (alias, ix)
  )`)
  db.run('CREATE TABLE IF NOT EXISTS templates (name TEXT PRIMARY KEY, body TEXT NOT NULL)')
  db.run(`CREATE TABLE IF NOT EXISTS data_streams (
    name TEXT PRIMARY KEY,
    template TEXT NOT NULL,
    generation INTEGER NOT NULL,
    ts_field TEXT NOT NULL
  )`)
  // One row per document; `keys` lists its fv entries so updates/deletes remove exactly those.
  // Each index owns the rowid range [ix * RID_SPAN, (ix + 1) * RID_SPAN): its documents are
  // contiguous in the table B-tree, scans are rowid range scans, and no extra index is needed.
  db.run(`CREATE TABLE IF NOT EXISTS docs (
    rid INTEGER PRIMARY KEY,
    ix INTEGER NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ver INTEGER NOT NULL,
    src TEXT NOT NULL,
    keys TEXT NOT NULL
  )`)
  db.run('CREATE UNIQUE INDEX IF NOT EXISTS docs_id ON docs (ix, id)')
  // "Documents after seq_no N" (how detector runs read what is new) is a range of this index, so
  // a read costs what it returns, not the size of the index. Updates move a document's seq_no,
  // so rowid order alone cannot answer it.
  db.run('CREATE INDEX IF NOT EXISTS docs_seq ON docs (ix, seq)')
  // Field-value index: every keyword, numeric, date and boolean value of every document.
  // Untyped `v` keeps strings as TEXT and numbers as INTEGER/REAL, so one B-tree serves
  // equality, IN, prefix and range lookups for all of them.
  db.run(`CREATE TABLE IF NOT EXISTS fv (
    f INTEGER NOT NULL,
    v NOT NULL,
    rid INTEGER NOT NULL,
    PRIMARY KEY (f, v, rid)
  ) WITHOUT ROWID`)
  db.run(`CREATE TABLE IF NOT EXISTS fields (
    f INTEGER PRIMARY KEY,
    ix INTEGER NOT NULL,
    name TEXT NOT NULL,
    UNIQUE (ix, name)
  )`)
  // Point-in-time snapshots (copies of the matching rows; replaced in version 2).
  db.run(`CREATE TABLE IF NOT EXISTS pit_docs (
    pit TEXT NOT NULL,
    rid INTEGER NOT NULL,
    ix INTEGER NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ver INTEGER NOT NULL,
    src TEXT NOT NULL,
    PRIMARY KEY (pit, rid)
  ) WITHOUT ROWID`)
  // The store's identity and open/close generation (see integrity.ts), checked against the marker file.
  db.run('CREATE TABLE IF NOT EXISTS store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)')
}

/**
 * Points in time read the live rows up to their `_seq_no` watermark plus the versions that later
 * writes replaced or deleted while a PIT was open, kept once in `pit_history` and shared by all
 * PITs; the per-PIT copies of `pit_docs` are gone.
 */
function pitHistory(db: Database): void {
  db.run('DROP TABLE IF EXISTS pit_docs')
  db.run(`CREATE TABLE IF NOT EXISTS pit_history (
    rid INTEGER NOT NULL,
    gone INTEGER NOT NULL,
    id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    ver INTEGER NOT NULL,
    src TEXT NOT NULL,
    PRIMARY KEY (rid, gone)
  ) WITHOUT ROWID`)
}

/**
 * flat_object leaves are indexed from this version on (the root's values and the
 * `<root>._valueAndPath` keys, see query/flat-object.ts): documents written before get theirs,
 * read page by page so that memory stays bounded. Fields learn whether they are multi-valued.
 */
function flatObjectLeaves(db: Database): void {
  // Whether a document ever held several values of a field (NULL: not known, as for every field
  // written before): counts of single-valued fields need no DISTINCT.
  const cols = db.query('PRAGMA table_info(fields)').all() as Array<{ name: string }>
  if (!cols.some((c) => c.name === 'multi')) db.run('ALTER TABLE fields ADD COLUMN multi INTEGER')
  const fieldId = (ix: number, name: string): number => {
    db.query('INSERT OR IGNORE INTO fields (ix, name) VALUES (?, ?)').run(ix, name)
    return (db.query('SELECT f FROM fields WHERE ix = ? AND name = ?').get(ix, name) as { f: number }).f
  }
  const page = db.query('SELECT rid, src, keys FROM docs WHERE rid > ? AND rid <= ? ORDER BY rid LIMIT 500')
  const insert = db.query('INSERT OR IGNORE INTO fv (f, v, rid) VALUES (?, ?, ?)')
  const setKeys = db.query('UPDATE docs SET keys = ? WHERE rid = ?')
  for (const { ix, mappings } of db.query('SELECT ix, mappings FROM indices').all() as Array<{ ix: number; mappings: string }>) {
    const roots = [...fieldSpecs(JSON.parse(mappings) as Mappings)].filter(([, spec]) => spec.type === FLAT_OBJECT).map(([path]) => path)
    if (roots.length === 0) continue
    const fields = roots.map((root) => ({ path: fieldPath(root), f: fieldId(ix, root), byPath: fieldId(ix, valueAndPathField(root)) }))
    const [lo, hi] = ridRange(ix)
    for (let after = lo - 1; ;) {
      const rows = page.all(after, hi) as Array<{ rid: number; src: string; keys: string }>
      for (const { rid, src, keys } of rows) {
        const had = JSON.parse(keys) as Array<[number, unknown]>
        // Idempotent, as every step (a file without a schema version runs them all again).
        if (had.some(([f]) => fields.some((x) => x.f === f || x.byPath === f))) continue
        const added: Array<[number, string]> = []
        const source = JSON.parse(src) as unknown
        for (const { path, f, byPath } of fields)
          for (const value of path.collect(source))
            flatLeaves(value, (sub, leaf) => {
              added.push([f, String(leaf)])
              if (sub !== undefined) added.push([byPath, valueAndPathKey(sub, String(leaf))])
            })
        if (added.length === 0) continue
        for (const [f, v] of added) insert.run(f, v, rid)
        setKeys.run(JSON.stringify([...had, ...added]), rid)
      }
      if (rows.length < 500) break
      after = rows[rows.length - 1].rid
    }
  }
}

/**
 * Text fields get an inverted index from this version on: the BM25 counters on the fields'
 * rows. (This step also wrote postings into fv; step 5 moved them into FTS5 and builds them for
 * every document, so this one now only adds the columns: the two run together on older stores.)
 */
function textPostings(db: Database): void {
  const cols = db.query('PRAGMA table_info(fields)').all() as Array<{ name: string }>
  if (!cols.some((c) => c.name === 'tdocs')) {
    db.run('ALTER TABLE fields ADD COLUMN tdocs INTEGER NOT NULL DEFAULT 0')
    db.run('ALTER TABLE fields ADD COLUMN ttokens INTEGER NOT NULL DEFAULT 0')
  }
  const fvCols = db.query('PRAGMA table_info(fv)').all() as Array<{ name: string }>
  if (!fvCols.some((c) => c.name === 'w')) db.run('ALTER TABLE fv ADD COLUMN w INTEGER')
}

/**
 * The postings of text fields live in FTS5 (text-index.ts) from this version on: every
 * document's text rows are built from its source, page by page in the migration's transaction;
 * the postings step 4 wrote into fv and the terms entries of the documents' keys go; a document
 * whose keys do not list its lengths yet gets them, and moves the BM25 counters.
 */
function textSearchTables(db: Database): void {
  createTextTables(db)
  const page = db.query('SELECT rid, src, keys FROM docs WHERE rid > ? AND rid <= ? ORDER BY rid LIMIT 500')
  const setKeys = db.query('UPDATE docs SET keys = ? WHERE rid = ?')
  for (const { ix, mappings } of db.query('SELECT ix, mappings FROM indices').all() as Array<{ ix: number; mappings: string }>) {
    const specs = fieldSpecs(JSON.parse(mappings) as Mappings)
    const ids = new Map<string, number>()
    const lengthIds = new Set<number>()
    const termIds = new Set<number>()
    const idOf = (name: string): number => {
      let f = ids.get(name)
      if (f === undefined) {
        db.query('INSERT OR IGNORE INTO fields (ix, name, multi) VALUES (?, ?, 0)').run(ix, name)
        f = (db.query('SELECT f FROM fields WHERE ix = ? AND name = ?').get(ix, name) as { f: number }).f
        ids.set(name, f)
      }
      return f
    }
    for (const { f, name } of db.query('SELECT f, name FROM fields WHERE ix = ?').all(ix) as Array<{ f: number; name: string }>) {
      if (isLengthsField(name)) lengthIds.add(f)
      if (name.startsWith(termsField(''))) termIds.add(f)
    }
    const [lo, hi] = ridRange(ix)
    const delta: StatsDelta = new Map()
    for (let after = lo - 1; ;) {
      const rows = page.all(after, hi) as Array<{ rid: number; src: string; keys: string }>
      // Idempotent, as every step: each document's text rows are written anew, a page at a time.
      const written: Array<[number, TextRows]> = []
      for (const { rid, src, keys } of rows) {
        const added = textKeys(specs, viewOf(src), idOf)
        for (const [f] of added.listed) lengthIds.add(f)
        for (const [f] of added.lengths) termIds.add(f)
        const had = JSON.parse(keys) as Key[]
        const kept = had.filter(([f]) => !termIds.has(f))
        const listed = kept.some(([f]) => lengthIds.has(f))
        if (added.listed.length === 0 && kept.length === had.length) continue
        written.push([rid, added])
        if (!listed) statsDelta(lengthIds, undefined, added.listed, delta)
        setKeys.run(JSON.stringify(listed ? kept : [...kept, ...added.listed]), rid)
      }
      writeText(
        db,
        written.map(([rid]) => rid),
        written,
      )
      if (rows.length < 500) break
      after = rows[rows.length - 1].rid
    }
    saveStats(db, delta)
    for (const f of termIds) db.query('DELETE FROM fv WHERE f = ?').run(f)
  }
}

/**
 * New documents' field values are written by refreshes, in batches (refresh.ts): each index
 * keeps the rowid below which they are. None (NULL) on the indices of older stores, whose
 * documents all have them.
 */
function deferredFieldValues(db: Database): void {
  const cols = db.query('PRAGMA table_info(indices)').all() as Array<{ name: string }>
  if (!cols.some((c) => c.name === 'indexed_rid')) db.run('ALTER TABLE indices ADD COLUMN indexed_rid INTEGER')
}

/** Component templates and legacy (v1) index templates, one JSON body per name as index templates have. */
function moreTemplateKinds(db: Database): void {
  db.run('CREATE TABLE IF NOT EXISTS component_templates (name TEXT PRIMARY KEY, body TEXT NOT NULL)')
  db.run('CREATE TABLE IF NOT EXISTS legacy_templates (name TEXT PRIMARY KEY, body TEXT NOT NULL)')
}

/**
 * A document's keys list its fv values only from this version on: the text fields' lengths, which
 * steps 5-7 listed there too, are read from `tl` when a document is rewritten or deleted (every
 * refresh tested each key against them, and ingest paid for writing them).
 */
function lengthsOutOfKeys(db: Database): void {
  const lengthIds = (db.query('SELECT f, name FROM fields').all() as Array<{ f: number; name: string }>)
    .filter((r) => isLengthsField(r.name))
    .map((r) => r.f)
  if (lengthIds.length === 0) return
  db.query(
    `UPDATE docs SET keys = (SELECT json_group_array(json(k.value)) FROM json_each(docs.keys) k WHERE k.value ->> 0 NOT IN (SELECT value FROM json_each(?1)))
     WHERE EXISTS (SELECT 1 FROM json_each(docs.keys) k WHERE k.value ->> 0 IN (SELECT value FROM json_each(?1)))`,
  ).run(JSON.stringify(lengthIds))
}

/**
 * Every schema step, oldest first. Step 1 is idempotent so it also brings a file written before
 * schema versions existed (user_version 0, tables present) up to version 1. Append, never edit.
 */
export const SCHEMA_MIGRATIONS: readonly Migration[] = [
  { version: 1, description: 'indices, aliases, templates, data streams, documents, field values, store identity', up: createBaseSchema },
  { version: 2, description: 'points in time keep replaced versions (pit_history) instead of copies (pit_docs)', up: pitHistory },
  {
    version: 3,
    description: 'flat_object leaves in the field-value index; fields know when they hold several values',
    up: flatObjectLeaves,
  },
  { version: 4, description: 'inverted index of text fields: postings, field lengths and BM25 counters', up: textPostings },
  {
    version: 5,
    description: 'postings of text fields in FTS5 (written once per transaction) with the field lengths beside them',
    up: textSearchTables,
  },
  { version: 6, description: 'field values written by refreshes: the rowid up to which each index has them', up: deferredFieldValues },
  { version: 7, description: 'component templates and legacy index templates', up: moreTemplateKinds },
  { version: 8, description: "documents' keys list no text field lengths (read from tl)", up: lengthsOutOfKeys },
]

export const latestVersion = (migrations: readonly Migration[]): number => migrations.at(-1)?.version ?? 0

export interface MigrationResult {
  from: number
  to: number
  /** The copy taken before migrating a store that held tables. */
  backup?: string
}

export function schemaVersion(db: Database): number {
  return (db.query('PRAGMA user_version').get() as { user_version: number }).user_version
}

/** `<file>.schema-v<from>.<ISO time>.bak`, beside the store file; never overwrites an earlier backup. */
export function backupPath(file: string, from: number, now = new Date()): string {
  const base = `${file}.schema-v${from}.${now.toISOString().replace(/[:.]/g, '-')}`
  let path = `${base}.bak`
  for (let i = 1; existsSync(path); i++) path = `${base}-${i}.bak`
  return path
}

/**
 * Brings `db` to the newest version of `migrations`. A store at a newer version than this binary
 * knows is refused (StoreFileError). Before migrating a store that has tables, a consistent copy
 * is written with `VACUUM INTO`; the steps then run in one IMMEDIATE transaction together with the
 * new `user_version`, so a failing step leaves the file exactly as it was.
 */
export function migrate(db: Database, file: string, migrations: readonly Migration[] = SCHEMA_MIGRATIONS): MigrationResult {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`schema migration ${i} has version ${m.version}, expected ${i + 1}`)
  })
  const from = schemaVersion(db)
  const to = latestVersion(migrations)
  if (from > to) {
    throw new StoreFileError(
      file,
      `store file ${file} has schema version ${from}, newer than the ${to} this svc-ext supports: it was written by a newer svc-ext. ` +
        'Run that newer version (downgrading a data directory is not supported), or restore the backup taken before the upgrade ' +
        `(${file}.schema-v${to}.*.bak) into a copy of the data directory.`,
    )
  }
  if (from === to) return { from, to }
  const hasTables = (db.query("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n > 0
  let backup: string | undefined
  if (hasTables && file !== ':memory:') {
    backup = backupPath(file, from)
    db.run('VACUUM INTO ?', [backup])
  }
  db.transaction(() => {
    for (const m of migrations.slice(from)) m.up(db)
    // PRAGMA takes no bound parameters; `to` is a number from the list above.
    db.run(`PRAGMA user_version = ${Math.trunc(to)}`)
  }).immediate()
  return { from, to, backup }
}

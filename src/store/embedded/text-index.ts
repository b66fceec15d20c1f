/**
 * The inverted index of text fields: SQLite's FTS5 keeps the postings (table `tx`, one row per
 * document, its rowid the document's rid) in segments it writes once per transaction and merges
 * in the background of later writes, as Lucene does; a posting per term and document in the
 * field-value B-tree cost a random insert each and halved bulk ingest. A document's row holds the
 * tokens of all its text fields, each prefixed with its field's terms id (`<id>_<token>`), so one
 * table serves every field of every index. Tokens are our analyzer's (FTS5's tokenizer only
 * splits on the spaces between them: see ftsToken), so matching stays exactly what a scan does.
 *
 * BM25 needs each field's length in each document: `tl` holds it (one row per text field of a
 * document, appended in rid order), and the term counts come from FTS5's positions (`txi`). The
 * field's document and token totals are counters on its lengths id's `fields` row, moved by the
 * lengths a write brings and those `tl` (or the transaction's pending rows) held before it.
 * Deleting a document deletes its `tx` and `tl` rows in the same transaction (FTS5's
 * contentless_delete), so updates, deletes and retention keep it exact.
 *
 * Tokens come from the same DocView.tokens the evaluator and the scan-time statistics use, so the
 * postings, the counters and the scores are exactly what a scan computes.
 */
import { lengthsField, termsField } from './text-fields'
import type { Database } from 'bun:sqlite'
import { kindOf, type FieldSpec } from '../query/compile'
import { storedName } from '../query/field-spec'
import { DocView, fieldPath, type FieldPath } from '../query/doc'
import { bm25, type FieldStats, type Needs, type Stats } from '../query/score'
import { plainTokensJoined } from '../query/analysis'
import type { IndexMeta } from './catalog'
import { ridRange } from './rids'

export type Key = [f: number, v: string | number]

/** The tables of the text index (created by schema migration 5). */
export function createTextTables(db: Database): void {
  // detail=full keeps positions: a term's count in a document is the number of its positions.
  db.run(`CREATE VIRTUAL TABLE IF NOT EXISTS tx USING fts5(body, content='', contentless_delete=1, detail=full,
    tokenize="unicode61 remove_diacritics 0 tokenchars '_'")`)
  db.run('CREATE VIRTUAL TABLE IF NOT EXISTS txi USING fts5vocab(tx, instance)')
  db.run(
    'CREATE TABLE IF NOT EXISTS tl (rid INTEGER NOT NULL, f INTEGER NOT NULL, len INTEGER NOT NULL, PRIMARY KEY (rid, f)) WITHOUT ROWID',
  )
}

const PLAIN = /^[a-z0-9]*$/

/**
 * A token as FTS5 stores it: its field's terms id, `_`, then the token with every character
 * other than a-z and 0-9 written `_<hex code point>_`. Only a-z, 0-9 and `_` remain, which
 * FTS5's tokenizer keeps whole; the code is prefix-free, so a prefix of a token is a prefix of
 * its stored form (prefix queries), and injective, so no two tokens meet.
 */
export function ftsToken(f: number, token: string): string {
  if (PLAIN.test(token)) return `${f}_${token}`
  let out = `${f}_`
  for (const ch of token) out += /[a-z0-9]/.test(ch) ? ch : `_${ch.codePointAt(0)!.toString(16)}_`
  return out
}

/** FTS5 query syntax for the documents holding the token (a quoted string is one token, no operator). */
export const ftsTermQuery = (f: number, token: string): string => `"${ftsToken(f, token)}"`
/** ... and for those holding a token that starts with `prefix`. */
export const ftsPrefixQuery = (f: number, prefix: string): string => `"${ftsToken(f, prefix)}" *`

/** A text field of a mapping: where its values are read, and the names of its terms and lengths ids. */
interface TextField {
  path: FieldPath
  terms: string
  lengths: string
}

/** The text fields of a mapping; made once per mapping. */
const textFieldsOf = new WeakMap<ReadonlyMap<string, FieldSpec>, TextField[]>()

function textFields(specs: ReadonlyMap<string, FieldSpec>): TextField[] {
  let list = textFieldsOf.get(specs)
  if (!list) {
    list = []
    for (const [name, spec] of specs)
      // An alias's text is its field's, indexed under the field's name.
      if (kindOf(spec.type) === 'text' && spec.index !== false && spec.alias === undefined)
        list.push({ path: fieldPath(spec.path ?? name), terms: termsField(name), lengths: lengthsField(name) })
    textFieldsOf.set(specs, list)
  }
  return list
}

const PLAIN_LIST = /^[a-z0-9 ]*$/

export interface TextRows {
  /** The document's `tx` row: the stored tokens of all its text fields, space-separated. */
  body: string
  /** Its `tl` rows: each text field's terms id and token count. */
  lengths: Array<[f: number, len: number]>
  /** The same counts by each field's lengths id: what moves the field's counters. */
  listed: Key[]
}

/** The text rows of one document, with field ids from `idOf` (made on first use). */
export function textKeys(specs: ReadonlyMap<string, FieldSpec>, d: DocView, idOf: (name: string) => number): TextRows {
  let body = ''
  const lengths: Array<[number, number]> = []
  const listed: Key[] = []
  for (const field of textFields(specs)) {
    // Read from the source, not the view's caches: a written document's view serves this call only.
    const raw = field.path.collect(d.source)
    if (raw.length === 0) continue
    const t = idOf(field.terms)
    // One string (the usual text field) is encoded from its characters; the rest from its tokens.
    const plain = raw.length === 1 && typeof raw[0] === 'string' ? plainTokensJoined(raw[0], ` ${t}_`) : undefined
    const [stored, count] = plain ? [plain[1] === 0 ? '' : `${t}_${plain[0]}`, plain[1]] : encodeTokens(t, d.tokens(field.path))
    if (count === 0) continue
    body = body === '' ? stored : `${body} ${stored}`
    lengths.push([t, count])
    listed.push([idOf(field.lengths), count])
  }
  return { body, lengths, listed }
}

/** Tokens as stored (see ftsToken), space-separated, and their number. */
function encodeTokens(t: number, tokens: readonly string[]): [stored: string, count: number] {
  // Most text is plain words: one test and one replace for the field instead of one per token.
  const joined = tokens.join(' ')
  if (PLAIN_LIST.test(joined)) return [encodeJoined(t, joined), tokens.length]
  return [tokens.map((token) => ftsToken(t, token)).join(' '), tokens.length]
}

/** Plain tokens ([a-z0-9]) joined by spaces, as stored: each prefixed with the field's terms id. */
const encodeJoined = (t: number, joined: string): string => (joined === '' ? '' : `${t}_${joined.replaceAll(' ', ` ${t}_`)}`)

const VALUES3 = Array.from({ length: 101 }, (_, n) => Array(n).fill('(?, ?, ?)').join(', '))

/**
 * Rows of three columns, given flat (`binds` holds row after row), in multi-row INSERTs of at most
 * 100 rows (`into` is the statement up to VALUES). Binding took less than half the time of handing
 * the rows over as one JSON array read back by `json_each` (300k `tl` rows: 140-200 against 330-500 ms).
 */
function insertTriples(db: Database, into: string, binds: Array<string | number>): void {
  for (let at = 0; at < binds.length; at += 300) {
    const part = binds.slice(at, at + 300)
    db.query(`${into} VALUES ${VALUES3[part.length / 3]}`).run(...part)
  }
}

/** A document's field values as fv rows (a keyword array may repeat a value, hence OR IGNORE). */
export function insertValues(db: Database, values: Key[], rid: number): void {
  insertTriples(
    db,
    'INSERT OR IGNORE INTO fv (f, v, rid)',
    values.flatMap(([f, v]) => [f, v, rid]),
  )
}

/**
 * Replaces documents' text rows: the `tl` rows first (deleted, then written in multi-row inserts),
 * then the `tx` rows in one statement over a JSON array (a statement per row was most of the text
 * index's cost on ingest). A statement that may change several rows opens a statement savepoint,
 * at which FTS5 writes what it holds as a segment: so every `tx` row of the transaction goes in one
 * statement, never in several (each would become a segment of its own).
 */
export function writeText(db: Database, gone: readonly number[], docs: ReadonlyArray<[rid: number, text: TextRows]>): void {
  if (gone.length > 0) db.query('DELETE FROM tl WHERE rid IN (SELECT value FROM json_each(?))').run(JSON.stringify(gone))
  const lengths: number[] = []
  const bodies: Array<[number, string]> = []
  for (const [rid, text] of docs) {
    for (const [f, len] of text.lengths) lengths.push(rid, f, len)
    if (text.lengths.length > 0) bodies.push([rid, text.body])
  }
  insertTriples(db, 'INSERT INTO tl (rid, f, len)', lengths)
  if (gone.length > 0) db.query('DELETE FROM tx WHERE rowid IN (SELECT value FROM json_each(?))').run(JSON.stringify(gone))
  if (bodies.length > BOUND_ROWS)
    db.query('INSERT INTO tx (rowid, body) SELECT value ->> 0, value ->> 1 FROM json_each(?)').run(JSON.stringify(bodies))
  else if (bodies.length > 0) {
    // Bound rather than handed over as JSON (a quarter of FTS5's insert time went to JSON.stringify
    // and json_each), padded with NULL rows to one of a few sizes, so few statements are cached.
    const size = paddedSize(bodies.length)
    const binds: Array<number | string | null> = bodies.flat()
    for (let i = bodies.length; i < size; i++) binds.push(null, null)
    db.query(`INSERT INTO tx (rowid, body) SELECT column1, column2 FROM (VALUES ${VALUES2[size]}) WHERE column1 IS NOT NULL`).run(...binds)
  }
}

/** Rows bound in one statement at most (two variables each, far below SQLite's 32,766). */
const BOUND_ROWS = 4096
const paddedSize = (n: number): number => (n <= 16 ? 16 : 2 ** Math.ceil(Math.log2(n)))
const VALUES2: Record<number, string> = {}
for (let size = 16; size <= BOUND_ROWS; size *= 2) VALUES2[size] = Array(size).fill('(?, ?)').join(', ')

/**
 * The counts a document's text held before this write, by lengths id: its pending rows when the
 * transaction wrote them (not in `tl` yet), else its `tl` rows. Empty when it had no text.
 */
export function heldLengths(db: Database, meta: IndexMeta, pending: PendingText, rid: number): Key[] {
  if (meta.lengthIds.size === 0) return []
  const held = pending.held(rid)
  if (held !== undefined) return held?.listed ?? []
  const rows = db.query('SELECT f, len FROM tl WHERE rid = ?').values(rid) as Array<[number, number]>
  return rows.length === 0 ? [] : rows.map(([f, len]) => [lengthsIdOf(meta, f), len])
}

/** A text field's lengths id from its terms id (`tl` rows name the terms id, the counters the lengths id). */
function lengthsIdOf(meta: IndexMeta, termsId: number): number {
  let names = fieldNames.get(meta)
  let name = names?.get(termsId)
  // Made again when a field is new to it, or an id it knew was given back (a write taken back).
  if (name === undefined || meta.fieldIds.get(termsField(name)) !== termsId) {
    names = new Map()
    const prefix = termsField('')
    for (const [key, t] of meta.fieldIds) if (key.startsWith(prefix)) names.set(t, key.slice(prefix.length))
    fieldNames.set(meta, names)
    name = names.get(termsId)
  }
  const f = name === undefined ? undefined : meta.fieldIds.get(lengthsField(name))
  if (f === undefined) throw new Error(`text field ${termsId} of index [${meta.name}] has no lengths id`)
  return f
}

/** Each index's text fields by terms id. */
const fieldNames = new WeakMap<IndexMeta, Map<number, string>>()

/** Removes the text rows of every document of a rid range (an index deleted). */
export function removeTextRange(db: Database, [lo, hi]: [number, number]): void {
  db.query('DELETE FROM tx WHERE rowid BETWEEN ? AND ?').run(lo, hi)
  db.query('DELETE FROM tl WHERE rid BETWEEN ? AND ?').run(lo, hi)
}

/**
 * The text rows of the running transaction, written when it ends (or before a read in it). FTS5
 * writes what it holds as a new segment at every savepoint, and each write of a bulk runs in one
 * (so that a failed item takes only itself back): written there, a bulk of a thousand documents
 * made a thousand segments and ingest a third as fast. Per document: whether its row from before
 * the transaction goes, and what it holds now. A write taken back takes its change back.
 */
export class PendingText {
  private readonly docs = new Map<number, { dropOld: boolean; text: TextRows | null }>()

  get size(): number {
    return this.docs.size
  }

  /** The document's text as this transaction left it: undefined when it wrote none, null when it has none. */
  held(rid: number): TextRows | null | undefined {
    return this.docs.get(rid)?.text
  }

  /** The document's text is now `text` (null: it has none, or it is deleted). */
  set(rid: number, text: TextRows | null, existed: boolean, onUndo: (f: () => void) => void): void {
    const before = this.docs.get(rid)
    this.docs.set(rid, { dropOld: before ? before.dropOld : existed, text })
    onUndo(() => (before ? this.docs.set(rid, before) : this.docs.delete(rid)))
  }

  flush(db: Database): void {
    const gone: number[] = []
    const written: Array<[number, TextRows]> = []
    for (const [rid, { dropOld, text }] of this.docs) {
      if (dropOld) gone.push(rid)
      if (text) written.push([rid, text])
    }
    writeText(db, gone, written)
    this.docs.clear()
  }

  clear(): void {
    this.docs.clear()
  }
}

/** Per lengths id: the change of its documents and tokens counters. */
export type StatsDelta = Map<number, [docs: number, tokens: number]>

/**
 * How the counters of the lengths ids move when documents leave (`gone`) and arrive (`come`):
 * an update that keeps a field's length moves nothing.
 */
export function statsDelta(
  lengthIds: ReadonlySet<number>,
  gone: Key[] | undefined,
  come: Key[] | undefined,
  into: StatsDelta = new Map(),
): StatsDelta {
  if (lengthIds.size === 0) return into
  const add = (keys: Key[] | undefined, sign: number) => {
    if (keys)
      for (const [f, v] of keys) {
        if (!lengthIds.has(f)) continue
        const d = into.get(f) ?? [0, 0]
        d[0] += sign
        d[1] += sign * Number(v)
        into.set(f, d)
      }
  }
  add(gone, -1)
  add(come, 1)
  return into
}

export function saveStats(db: Database, delta: StatsDelta): void {
  const update = db.query('UPDATE fields SET tdocs = tdocs + ?, ttokens = ttokens + ? WHERE f = ?')
  for (const [f, [docs, tokens]] of delta) if (docs !== 0 || tokens !== 0) update.run(docs, tokens, f)
}

/**
 * The counter changes of the running transaction, written once at its end: a bulk of a thousand
 * documents updates each field's counters once, not a thousand times. A write taken back (a
 * failed item's savepoint) takes its change back through the undo it registers.
 */
export class PendingStats {
  private readonly delta: StatsDelta = new Map()

  move(lengthIds: ReadonlySet<number>, gone: Key[] | undefined, come: Key[] | undefined, onUndo: (f: () => void) => void): void {
    if (lengthIds.size === 0) return
    // (lengths id, documents, tokens) triples: one array per write, not a map (every write of a bulk moves them).
    const change: number[] = []
    for (const [keys, sign] of [
      [gone, -1],
      [come, 1],
    ] as const)
      if (keys) for (const [f, v] of keys) if (lengthIds.has(f)) change.push(f, sign, sign * Number(v))
    if (change.length === 0) return
    this.apply(change, 1)
    onUndo(() => this.apply(change, -1))
  }

  private apply(change: readonly number[], sign: number): void {
    for (let i = 0; i < change.length; i += 3) {
      let d = this.delta.get(change[i])
      if (!d) this.delta.set(change[i], (d = [0, 0]))
      d[0] += sign * change[i + 1]
      d[1] += sign * change[i + 2]
    }
  }

  flush(db: Database): void {
    saveStats(db, this.delta)
    this.delta.clear()
  }

  clear(): void {
    this.delta.clear()
  }
}

/**
 * BM25 statistics of the terms a query scores, from the counters and the postings: what a pass
 * over every document of the index (countStats) would count.
 */
export function termStats(db: Database, meta: IndexMeta, needs: Needs): Stats {
  const stats: Stats = new Map()
  const df = db.query('SELECT count(*) AS n FROM tx WHERE tx MATCH ?')
  for (const [field, terms] of needs) {
    const stored = storedName(meta.specs, field)
    const lengths = meta.fieldIds.get(lengthsField(stored))
    if (lengths === undefined) continue
    const row = db.query('SELECT tdocs, ttokens FROM fields WHERE f = ?').get(lengths) as { tdocs: number; ttokens: number } | null
    if (!row || row.tdocs === 0) continue
    const s: FieldStats = { docs: row.tdocs, tokens: row.ttokens, df: new Map() }
    const t = meta.fieldIds.get(termsField(stored))
    if (t !== undefined)
      for (const term of terms) {
        const n = (df.get(ftsTermQuery(t, term)) as { n: number }).n
        if (n > 0) s.df.set(term, n)
      }
    stats.set(field, s)
  }
  return stats
}

/**
 * The best `window` documents of a single-field match (score descending, then rid, as the
 * search ranks them) and the number of its matches, from the term counts (FTS5's positions) and
 * the field lengths (`tl`) alone: no document is read.
 */
export function topByPostings(
  db: Database,
  meta: IndexMeta,
  m: { field: string; terms: string[]; and: boolean; boost: number },
  stats: Stats,
  window: number,
  lengthsOf?: (f: number) => FieldLengths | undefined,
): { total: number; top: Array<{ rid: number; score: number }> } | undefined {
  const f = meta.fieldIds.get(termsField(storedName(meta.specs, m.field)))
  const s = stats.get(m.field)
  if (f === undefined || !s) return { total: 0, top: [] }
  // A common term's lengths come from the field's lengths read at once, not a `tl` lookup per posting.
  const postings = (t: string, df: number) => postingsOf(db, f, ftsToken(f, t), df >= lengthsFrom(s.docs) ? lengthsOf?.(f) : undefined)
  // Each matching document with its score: one term's postings are its documents already (their
  // tuples take the score in place); several terms' scores are summed per document.
  let scored: Iterable<readonly [number, number, ...number[]]>
  if (m.terms.length === 1) {
    const df = s.df.get(m.terms[0]) ?? 0
    const list = df === 0 ? [] : postings(m.terms[0], df)
    for (const p of list) p[1] = bm25(p[1], p[2], df, s)
    scored = list
  } else {
    const sums = new Map<number, number>()
    const seen = new Map<number, number>()
    for (const t of m.terms) {
      const df = s.df.get(t) ?? 0
      if (df === 0) {
        if (m.and) return { total: 0, top: [] }
        continue
      }
      // Each document's terms are added in the query's order, as the scan adds them.
      for (const [rid, tf, len] of postings(t, df)) {
        sums.set(rid, (sums.get(rid) ?? 0) + bm25(tf, len, df, s))
        if (m.and) seen.set(rid, (seen.get(rid) ?? 0) + 1)
      }
    }
    scored = m.and ? [...sums].filter(([rid]) => seen.get(rid) === m.terms.length) : sums
  }
  const top: Array<{ rid: number; score: number }> = []
  const before = (a: { rid: number; score: number }, b: { rid: number; score: number }) =>
    a.score > b.score || (a.score === b.score && a.rid < b.rid)
  let total = 0
  for (const [rid, sum] of scored) {
    total++
    const hit = { rid, score: m.boost * sum }
    // A small window is kept sorted as it fills (a common term's matches are never all sorted).
    if (window > SMALL_WINDOW) top.push(hit)
    else if (top.length < window || before(hit, top[top.length - 1])) {
      let i = top.length < window ? top.length : window - 1
      while (i > 0 && before(hit, top[i - 1])) {
        top[i] = top[i - 1]
        i--
      }
      top[i] = hit
    }
  }
  if (window > SMALL_WINDOW) top.sort((a, b) => b.score - a.score || a.rid - b.rid)
  return { total, top: top.slice(0, window) }
}

const SMALL_WINDOW = 256

/**
 * [document, term frequency, field length] of each document holding `token`. FTS5 lists a term's
 * occurrences by document, so a document's are consecutive and counted here: a GROUP BY had
 * SQLite sort them first, a fifth of a common word's time (50k documents: 68 -> 52 ms). Should a
 * document come back out of order, the grouped query answers instead.
 */
export function postingsOf(db: Database, f: number, token: string, lengths?: FieldLengths): Array<[number, number, number]> {
  const rows = (
    lengths
      ? db.query('SELECT doc, 0 FROM txi WHERE term = ?').values(token)
      : db.query('SELECT i.doc, l.len FROM txi i JOIN tl l ON l.rid = i.doc AND l.f = ? WHERE i.term = ?').values(f, token)
  ) as Array<[number, number]>
  if (lengths) for (const row of rows) row[1] = lengths.lens[row[0] - lengths.lo]
  const out: Array<[number, number, number]> = []
  let last: [number, number, number] | undefined
  for (const [rid, len] of rows) {
    if (last !== undefined && rid === last[0]) last[1]++
    else if (last !== undefined && rid < last[0]) return groupedPostings(db, f, token)
    else out.push((last = [rid, 1, len]))
  }
  return out
}

/**
 * A text field's length in each document of an index (`lens[rid - lo]`, 0 where it has none) up to
 * `nextRid`, read from `tl` in one pass: a word in a third of 1M documents joined `tl` once per
 * posting, three fifths of its time.
 */
export interface FieldLengths {
  lo: number
  nextRid: number
  lens: Uint16Array
}

/**
 * Postings of a term in at least this share of the field's documents read the field's lengths at
 * once: reading them costs about what joining a quarter of them does (kept, they cost nothing).
 */
const lengthsFrom = (docs: number): number => Math.max(LENGTHS_FROM_DOCS, docs / 4)
const LENGTHS_FROM_DOCS = 2048

/**
 * The lengths of field `f` (terms id) over the index's documents: those of `known` (kept while no
 * document was rewritten or deleted) with the documents added since. Null when one does not fit 16 bits.
 */
export function fieldLengths(db: Database, meta: IndexMeta, f: number, known?: FieldLengths): FieldLengths | null {
  if (known?.nextRid === meta.nextRid) return known
  const lo = known?.lo ?? ridRange(meta.ix)[0]
  const from = known?.nextRid ?? lo
  const lens = new Uint16Array(Math.max(0, meta.nextRid - lo))
  if (known) lens.set(known.lens.subarray(0, Math.min(known.lens.length, lens.length)))
  const rows = db.query('SELECT rid, len FROM tl WHERE rid >= ? AND rid < ? AND f = ?').values(from, meta.nextRid, f) as Array<
    [number, number]
  >
  for (const [rid, len] of rows) {
    if (len > 0xffff) return null
    lens[rid - lo] = len
  }
  return { lo, nextRid: meta.nextRid, lens }
}

const groupedPostings = (db: Database, f: number, token: string) =>
  db
    .query('SELECT i.doc, count(*), l.len FROM txi i JOIN tl l ON l.rid = i.doc AND l.f = ? WHERE i.term = ? GROUP BY i.doc')
    .values(f, token) as Array<[number, number, number]>

/** A document of a migrated store, as textKeys reads it. */
export const viewOf = (src: string): DocView => new DocView(JSON.parse(src) as Record<string, unknown>)

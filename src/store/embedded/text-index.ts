/**
 * The inverted index of text fields, kept in the field-value table (`fv`) beside keyword values:
 * each distinct analysed term of a document's text field is one row under the field's terms id,
 * weighted with its count and the field's length. The field's token count is listed in the
 * document's keys under the field's lengths id, whose `fields` row carries the field's document
 * and token totals. So a text query reads the postings of its terms, and
 * BM25's statistics are two counters and one range count per term instead of a pass over every
 * document. The rows are listed in the document's `keys` like any other value, so updates,
 * deletes (retention's too) and index deletion remove them in the same transaction.
 *
 * Tokens come from the same DocView.tokens the evaluator and the scan-time statistics use, so the
 * postings, the counters and the scores are exactly what a scan computes.
 */
import type { Database } from 'bun:sqlite'
import { kindOf, type FieldSpec } from '../query/compile'
import { DocView, fieldPath, type FieldPath } from '../query/doc'
import { bm25, type FieldStats, type Needs, type Stats } from '../query/score'
import type { IndexMeta } from './catalog'

/** Names no mapped field can have (a NUL is not allowed in a field name's JSON path). */
export const termsField = (field: string): string => `\u0000terms ${field}`
export const lengthsField = (field: string): string => `\u0000len ${field}`
export const isLengthsField = (name: string): boolean => name.startsWith('\u0000len ')
export const isTermsField = (name: string): boolean => name.startsWith('\u0000terms ')

export type Key = [f: number, v: string | number]

/** The text fields of a mapping and where their values are read; made once per mapping. */
const textFieldsOf = new WeakMap<ReadonlyMap<string, FieldSpec>, Array<[string, FieldPath]>>()

function textFields(specs: ReadonlyMap<string, FieldSpec>): Array<[string, FieldPath]> {
  let list = textFieldsOf.get(specs)
  if (!list) {
    list = []
    for (const [name, spec] of specs) if (kindOf(spec.type) === 'text') list.push([name, fieldPath(spec.path ?? name)])
    textFieldsOf.set(specs, list)
  }
  return list
}

/**
 * A posting's weight (fv's `w`): the term's count in the document and the field's length, packed
 * so that BM25 is computed from the postings alone (scoreFromPostings). Null when either does not
 * fit (a document of over 2^28 tokens): such a field is then scored from its documents.
 */
const TF_SPAN = 2 ** 24
const weightOf = (tf: number, len: number): number | null => (tf < TF_SPAN && len < 2 ** 28 ? len * TF_SPAN + tf : null)

export interface TextRows {
  /** The postings: term rows of fv. */
  postings: Key[]
  /** The weight of each posting. */
  weights: Array<number | null>
  /**
   * What the document's `keys` list: per field its terms in one entry (terms id, the terms
   * joined by spaces, which no token holds), and its length (lengths id, token count), which is
   * in no table but moves the field's counters.
   */
  listed: Key[]
}

/** The postings and lengths of one document, with field ids from `idOf` (made on first use). */
export function textKeys(specs: ReadonlyMap<string, FieldSpec>, d: DocView, idOf: (name: string) => number): TextRows {
  const postings: Key[] = []
  const weights: Array<number | null> = []
  const listed: Key[] = []
  for (const [name, fp] of textFields(specs)) {
    const tokens = d.tokens(fp)
    if (tokens.length === 0) continue
    const t = idOf(termsField(name))
    const tf = new Map<string, number>()
    for (const term of tokens) tf.set(term, (tf.get(term) ?? 0) + 1)
    for (const [term, n] of tf) {
      postings.push([t, term])
      weights.push(weightOf(n, tokens.length))
    }
    listed.push([t, [...tf.keys()].join(' ')], [idOf(lengthsField(name)), tokens.length])
  }
  return { postings, weights, listed }
}

/** The fv rows a document's keys entry stands for: a terms entry holds several. */
export function listedRows(termIds: ReadonlySet<number>, [f, v]: Key): Key[] {
  return termIds.has(f)
    ? String(v)
        .split(' ')
        .map((t): Key => [f, t])
    : [[f, v]]
}

const VALUES4 = Array.from({ length: 101 }, (_, n) => Array(n).fill('(?, ?, ?, ?)').join(', '))

/**
 * A document's fv rows, its field values (no weight) then its postings, in multi-row INSERTs of
 * at most 100 rows. A keyword array may repeat a value, hence OR IGNORE.
 */
export function insertRows(db: Database, values: Key[], text: TextRows | undefined, rid: number): void {
  const n = values.length + (text?.postings.length ?? 0)
  for (let at = 0; at < n; at += 100) {
    const end = Math.min(n, at + 100)
    const binds: Array<string | number | null> = []
    for (let i = at; i < end; i++)
      if (i < values.length) binds.push(values[i][0], values[i][1], rid, null)
      else {
        const j = i - values.length
        binds.push(text!.postings[j][0], text!.postings[j][1], rid, text!.weights[j])
      }
    db.query(`INSERT OR IGNORE INTO fv (f, v, rid, w) VALUES ${VALUES4[end - at]}`).run(...binds)
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
    const change = statsDelta(lengthIds, gone, come)
    if (change.size === 0) return
    const apply = (sign: number) => {
      for (const [f, [docs, tokens]] of change) {
        const d = this.delta.get(f) ?? [0, 0]
        d[0] += sign * docs
        d[1] += sign * tokens
        this.delta.set(f, d)
      }
    }
    apply(1)
    onUndo(() => apply(-1))
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
  const df = db.query('SELECT count(*) AS n FROM fv WHERE f = ? AND v = ?')
  for (const [field, terms] of needs) {
    const lengths = meta.fieldIds.get(lengthsField(field))
    if (lengths === undefined) continue
    const row = db.query('SELECT tdocs, ttokens FROM fields WHERE f = ?').get(lengths) as { tdocs: number; ttokens: number } | null
    if (!row || row.tdocs === 0) continue
    const s: FieldStats = { docs: row.tdocs, tokens: row.ttokens, df: new Map() }
    const t = meta.fieldIds.get(termsField(field))
    if (t !== undefined)
      for (const term of terms) {
        const n = (df.get(t, term) as { n: number }).n
        if (n > 0) s.df.set(term, n)
      }
    stats.set(field, s)
  }
  return stats
}

/**
 * The best `window` documents of a single-field match (score descending, then rid, as the
 * search ranks them) and the number of its matches, from the postings' weights alone: no
 * document is read. Undefined when a posting has no weight (see weightOf).
 */
export function topByPostings(
  db: Database,
  meta: IndexMeta,
  m: { field: string; terms: string[]; and: boolean; boost: number },
  stats: Stats,
  window: number,
): { total: number; top: Array<{ rid: number; score: number }> } | undefined {
  const f = meta.fieldIds.get(termsField(m.field))
  const s = stats.get(m.field)
  if (f === undefined || !s) return { total: 0, top: [] }
  const postings = db.query('SELECT rid, w FROM fv WHERE f = ? AND v = ?')
  const sums = new Map<number, number>()
  const seen = m.and ? new Map<number, number>() : undefined
  for (const t of m.terms) {
    const df = s.df.get(t) ?? 0
    if (df === 0) {
      if (m.and) return { total: 0, top: [] }
      continue
    }
    // Each document's terms are added in the query's order, as the scan adds them.
    for (const [rid, w] of postings.values(f, t) as Array<[number, number | null]>) {
      if (w === null) return undefined
      sums.set(rid, (sums.get(rid) ?? 0) + bm25(w % TF_SPAN, Math.floor(w / TF_SPAN), df, s))
      seen?.set(rid, (seen.get(rid) ?? 0) + 1)
    }
  }
  const top: Array<{ rid: number; score: number }> = []
  const before = (a: { rid: number; score: number }, b: { rid: number; score: number }) =>
    a.score > b.score || (a.score === b.score && a.rid < b.rid)
  let total = 0
  for (const [rid, sum] of sums) {
    if (seen && seen.get(rid) !== m.terms.length) continue
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

/** A document of a migrated store, as textKeys reads it. */
export const viewOf = (src: string): DocView => new DocView(JSON.parse(src) as Record<string, unknown>)

/**
 * The inverted index of text fields, kept in the field-value table (`fv`) beside keyword values:
 * each distinct analysed term of a document's text field is one row under the field's terms id,
 * and its token count one row under the field's lengths id. The lengths id's `fields` row carries
 * the field's document and token totals. So a text query reads the postings of its terms, and
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
import type { FieldStats, Needs, Stats } from '../query/score'
import type { IndexMeta } from './catalog'

/** Names no mapped field can have (a NUL is not allowed in a field name's JSON path). */
export const termsField = (field: string): string => `\u0000terms ${field}`
export const lengthsField = (field: string): string => `\u0000len ${field}`
export const isLengthsField = (name: string): boolean => name.startsWith('\u0000len ')

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

/** The postings and length rows of one document, with field ids from `idOf` (made on first use). */
export function textKeys(specs: ReadonlyMap<string, FieldSpec>, d: DocView, idOf: (name: string) => number): Key[] {
  const out: Key[] = []
  for (const [name, fp] of textFields(specs)) {
    const tokens = d.tokens(fp)
    if (tokens.length === 0) continue
    const t = idOf(termsField(name))
    for (const term of new Set(tokens)) out.push([t, term])
    out.push([idOf(lengthsField(name)), tokens.length])
  }
  return out
}

/**
 * Moves the counters of the lengths ids by the documents leaving (`gone`) and arriving (`come`):
 * an update that keeps a field's length costs no write.
 */
export function moveTextStats(db: Database, lengthIds: ReadonlySet<number>, gone: Key[] | undefined, come: Key[] | undefined): void {
  if (lengthIds.size === 0) return
  let delta: Map<number, [number, number]> | undefined
  const add = (keys: Key[] | undefined, sign: number) => {
    if (keys)
      for (const [f, v] of keys) {
        if (!lengthIds.has(f)) continue
        delta ??= new Map()
        const d = delta.get(f) ?? [0, 0]
        d[0] += sign
        d[1] += sign * Number(v)
        delta.set(f, d)
      }
  }
  add(gone, -1)
  add(come, 1)
  if (!delta) return
  const update = db.query('UPDATE fields SET tdocs = tdocs + ?, ttokens = ttokens + ? WHERE f = ?')
  for (const [f, [docs, tokens]] of delta) if (docs !== 0 || tokens !== 0) update.run(docs, tokens, f)
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

/** A document of a migrated store, as textKeys reads it. */
export const viewOf = (src: string): DocView => new DocView(JSON.parse(src) as Record<string, unknown>)

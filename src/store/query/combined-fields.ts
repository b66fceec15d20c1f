/**
 * The `combined_fields` query: its text analysed once, each term searched in several text fields
 * as if they were one (BM25F, Lucene's CombinedFieldQuery): a term's frequency in a document is
 * the sum of its weighted frequencies in the fields, the document's length the sum of their
 * weighted lengths, its document frequency the largest of the fields'. Terms combine as
 * `operator` says, `minimum_should_match` counting the terms of an `or`. Scores are computed in
 * 32-bit floats and with Lucene's one-byte field lengths (SmallFloat), as OpenSearch's are.
 */
import { FieldParseError, IllegalArgument, QueryShardError, StoreError } from '../errors'
import { analyze } from './analysis'
import { type DocView, type FieldPath, fieldPath, isObject } from './doc'
import type { FieldSpec } from './field-spec'
import type { QueryableField } from './query-string'
import { normLength } from './norms'

export interface CombinedFields {
  fields: Array<{ name: string; path: FieldPath; weight: number }>
  /** The analysed terms, a repeated one as often as it is repeated (each is a clause). */
  terms: string[]
  /** How many of the term clauses a document must match. */
  need: number
  /** A plain disjunction: Lucene merges a repeated term's clauses into one of their summed boosts. */
  merged: boolean
  boost: number
  name?: string
}

/** What scoring reads of one field: documents with it, their tokens, and documents holding each term. */
interface FieldCounts {
  docs: number
  tokens: number
  df: ReadonlyMap<string, number>
}

const KEYS = new Set(['query', 'fields', 'operator', 'minimum_should_match', 'boost', '_name'])

/** The query as OpenSearch builds it for these mapped fields (undefined: not yet known). */
export function parseCombinedFields(
  body: unknown,
  types: ReadonlyMap<string, FieldSpec> | undefined,
  expand: (pattern: string) => QueryableField[],
  msm: (spec: unknown, clauses: number) => number,
): CombinedFields {
  if (!isObject(body)) throw new StoreError('parsing_exception', 400, '[combined_fields] query malformed, no start_object')
  for (const k of Object.keys(body))
    if (!KEYS.has(k)) throw new StoreError('x_content_parse_exception', 400, `[combined_fields] unknown field [${k}]`)
  if (body.query === undefined || body.query === null) throw new IllegalArgument('Required [query]')
  const operator = String(body.operator ?? 'or').toUpperCase()
  if (operator !== 'AND' && operator !== 'OR')
    throw new FieldParseError('combined_fields', 'operator', `No enum constant org.opensearch.index.query.Operator.${operator}`)
  const fields = new Map<string, number>()
  for (const given of Array.isArray(body.fields) ? body.fields.map(String) : []) {
    const at = given.lastIndexOf('^')
    const weight = at >= 0 ? Number(given.slice(at + 1)) : 1
    const pattern = at >= 0 ? given.slice(0, at) : given
    for (const f of types ? expand(pattern) : [{ name: pattern, kind: 'text' }]) fields.set(f.name, weight)
  }
  const mapped = [...fields].map(([name, weight]) => {
    const spec = types?.get(name)
    // OpenSearch's combined_fields reads the text family only (text, match_only_text).
    if (spec && spec.type !== 'text' && spec.type !== 'match_only_text')
      throw new QueryShardError(`failed to create query: Field [${name}] of type [${spec.type}] does not support [combined_fields] queries`)
    if (!(weight >= 1)) throw new QueryShardError('failed to create query: weight must be greater or equal to 1')
    return { name, path: fieldPath(spec?.path ?? name), weight }
  })
  const terms = analyze(String(body.query))
  const all = operator === 'AND' || terms.length === 0
  const need = all
    ? terms.length
    : body.minimum_should_match === undefined
      ? 1
      : Math.min(terms.length, msm(body.minimum_should_match, terms.length))
  const boost = typeof body.boost === 'number' ? body.boost : Number(body.boost ?? 1)
  const merged = !all && body.minimum_should_match === undefined
  return { fields: mapped, terms, need: Math.max(need, 1), merged, boost, name: typeof body._name === 'string' ? body._name : undefined }
}

/** Whether a document matches: enough term clauses found in any of the fields. */
export function combinedTest(q: CombinedFields): (d: DocView) => boolean {
  if (q.fields.length === 0 || q.terms.length === 0) return () => false
  return (d) => {
    const held = new Set(q.fields.flatMap((f) => d.tokens(f.path)))
    let hits = 0
    for (const t of q.terms) if (held.has(t) && ++hits >= q.need) return true
    return false
  }
}

const K1 = 1.2
const B = 0.75
const f32 = Math.fround

/** A document's BM25F score (0 where it holds none of the terms), from the fields' statistics. */
export function combinedScore(q: CombinedFields, d: DocView, stats: ReadonlyMap<string, FieldCounts>): number {
  const present = q.fields.map((f) => ({ ...f, s: stats.get(f.name) })).filter((f) => f.s !== undefined && f.s.docs > 0)
  if (present.length === 0) return 0
  // The pseudo field's statistics: the largest document count, the weighted sum of token counts (a Java long).
  let docCount = 0
  let sumTotalTermFreq = 0
  for (const f of present) {
    docCount = Math.max(docCount, f.s!.docs)
    sumTotalTermFreq = Math.trunc(sumTotalTermFreq + f.weight * f.s!.tokens)
  }
  const avgdl = f32(sumTotalTermFreq / docCount)
  const tokens = present.map((f) => d.tokens(f.path))
  let norm = 0
  for (let i = 0; i < present.length; i++)
    if (tokens[i].length > 0) norm = f32(norm + f32(present[i].weight * normLength(tokens[i].length)))
  const length = normLength(Math.round(norm))
  const normInverse = f32(1 / f32(K1 * f32(1 - B + f32(f32(B * length) / avgdl))))
  let total = 0
  const clauses = q.merged ? countEach(q.terms) : q.terms.map((t): [string, number] => [t, 1])
  for (const [t, times] of clauses) {
    let docFreq = 0
    let freq = 0
    for (let i = 0; i < present.length; i++) {
      docFreq = Math.max(docFreq, present[i].s!.df.get(t) ?? 0)
      let tf = 0
      for (const x of tokens[i]) if (x === t) tf++
      if (tf > 0) freq = f32(freq + f32(present[i].weight * tf))
    }
    if (docFreq === 0 || freq === 0) continue
    const weight = f32(f32(q.boost * times) * f32(Math.log(1 + (docCount - docFreq + 0.5) / (docFreq + 0.5))))
    total += f32(weight - f32(weight / f32(1 + f32(freq * normInverse))))
  }
  return f32(total)
}

function countEach(terms: string[]): Array<[string, number]> {
  const counts = new Map<string, number>()
  for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1)
  return [...counts]
}

/**
 * What OpenSearch does to `terms` queries before a shard runs them: a terms lookup
 * (`{"terms": {"user": {"index", "id", "path"}}}`) is replaced by the values found at `path` in
 * that document, and no `terms` query may carry more than `index.max_terms_count` values.
 * Only positions that hold queries are visited (compound queries' clauses), never field values.
 */
import { IllegalArgument, ParsingError } from '../errors'
import { fieldPath, isObject } from './doc'

export interface TermsRewrite {
  /** The source of a document for a lookup; undefined when the document does not exist. */
  lookup(index: string, id: string): Record<string, unknown> | undefined
  /** `index.max_terms_count` of the searched indices (the smallest one applies). */
  maxTerms: number
}

export const DEFAULT_MAX_TERMS_COUNT = 65_536

export function rewriteTerms(query: unknown, r: TermsRewrite): unknown {
  if (!isObject(query)) return query
  const keys = Object.keys(query)
  if (keys.length !== 1) return query
  const type = keys[0]
  const body = query[type]
  if (!isObject(body)) return query
  const each = (v: unknown) => (Array.isArray(v) ? v.map((x) => rewriteTerms(x, r)) : rewriteTerms(v, r))
  switch (type) {
    case 'bool': {
      const out: Record<string, unknown> = { ...body }
      for (const k of ['must', 'filter', 'should', 'must_not']) if (body[k] !== undefined) out[k] = each(body[k])
      return { bool: out }
    }
    case 'constant_score':
      return { constant_score: { ...body, filter: rewriteTerms(body.filter, r) } }
    case 'nested':
      return { nested: { ...body, query: rewriteTerms(body.query, r) } }
    case 'dis_max':
      return { dis_max: { ...body, queries: each(body.queries) } }
    case 'terms':
      return { terms: terms(body, r) }
    default:
      return query
  }
}

function terms(body: Record<string, unknown>, r: TermsRewrite): Record<string, unknown> {
  const out: Record<string, unknown> = { ...body }
  for (const [field, v] of Object.entries(body)) {
    if (field === '_name' || field === 'boost' || field === 'value_type') continue
    let values: unknown[] | undefined
    if (Array.isArray(v)) values = v
    else if (isObject(v)) {
      if (typeof v.index !== 'string' || v.id === undefined || typeof v.path !== 'string')
        throw new ParsingError('[terms] query lookup element requires specifying the [index], [id] and [path]')
      const source = r.lookup(v.index, String(v.id))
      values = source === undefined ? [] : fieldPath(v.path).collect(source)
      out[field] = values
    }
    if (values && values.length > r.maxTerms)
      throw new IllegalArgument(
        `The number of terms [${values.length}] used in the Terms Query request has exceeded the allowed maximum of [${r.maxTerms}]. This maximum can be set by changing the [index.max_terms_count] index level setting.`,
      )
  }
  return out
}

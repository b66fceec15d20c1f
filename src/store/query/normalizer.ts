/**
 * Keyword normalizers: the one known is OpenSearch's built-in `lowercase`, applied to the values a
 * field indexes and to the values its term-level queries compare (a regexp or wildcard pattern
 * too, whole: `\W` becomes `\w` there, as in OpenSearch).
 */
import type { FieldSpec } from './field-spec'

/** Lucene's LowerCaseFilter: each code point lowered alone (a lowering into two code points is not taken). */
export function lowercase(s: string): string {
  const lower = s.toLowerCase()
  if (lower.length === s.length && /^[\x00-\x7f]*$/.test(s)) return lower
  let out = ''
  for (const ch of s) {
    const l = ch.toLowerCase()
    out += [...l].length === 1 ? l : ch
  }
  return out
}

/** How a field's values are normalized before they are indexed or compared (undefined: kept as they are). */
export function normalizerOf(spec: Pick<FieldSpec, 'normalizer'> | undefined): ((s: string) => string) | undefined {
  return spec?.normalizer === 'lowercase' ? lowercase : undefined
}

/** The value parameters of each query that a normalized field normalizes (string values only). */
const VALUE_KEYS: Record<string, readonly string[]> = {
  term: ['value'],
  prefix: ['value'],
  wildcard: ['value', 'wildcard'],
  regexp: ['value'],
  range: ['gt', 'gte', 'lt', 'lte', 'from', 'to'],
  match: ['query'],
  match_bool_prefix: ['query'],
  match_phrase: ['query'],
  match_phrase_prefix: ['query'],
}

/**
 * A query's parameters with the field's normalizer applied to its values. A `terms` query on a
 * `wildcard` field is the exception OpenSearch makes: its values are compared as given.
 */
export function normalizedParams(type: string, spec: FieldSpec | undefined, p: Record<string, unknown>): Record<string, unknown> {
  const norm = normalizerOf(spec)
  if (!norm) return p
  const out = { ...p }
  if (type === 'terms') {
    if (spec!.type !== 'wildcard' && Array.isArray(p.value)) out.value = p.value.map((v) => (typeof v === 'string' ? norm(v) : v))
    return out
  }
  for (const k of VALUE_KEYS[type] ?? []) if (typeof p[k] === 'string') out[k] = norm(p[k])
  return out
}

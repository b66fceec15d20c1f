/**
 * Sigma regexp leaves carry a `_pcre` annotation next to their Lucene translation: the
 * in-process evaluator runs the PCRE, OpenSearch must only see the Lucene form (it refuses
 * unknown keys in a query with a parsing_exception).
 */
export function withoutPcre<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutPcre) as T
  if (typeof value !== 'object' || value === null) return value
  let changed = false
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) {
    if (k === '_pcre') {
      changed = true
      continue
    }
    const next = withoutPcre(v)
    if (next !== v) changed = true
    out[k] = next
  }
  // Untouched subtrees keep their identity, so large bodies without annotations are not copied.
  return changed ? (out as T) : value
}

/**
 * Private query parts of compiled Sigma rules (src/ruleset/sigma/dsl.ts) made fit for the
 * platform, which refuses unknown keys. `_pcre` annotations are stripped (the Lucene value beside
 * them is what the platform runs). What the platform's DSL cannot say — `_fieldref` (two fields of
 * one document), `_cidr` (an IPv6 network on a non-`ip` field), a regexp whose Lucene form is
 * only a superset (`_pcre.superset`) — is replaced by a query that returns a superset of the
 * answer: where the node counts positively, a cheap necessary condition (the fields exist, or the
 * superset regexp); under an odd number of `must_not`, `match_none`, so that the negation only
 * grows. The adapter then runs the original query, with THE in-memory evaluator, on the fetched
 * documents (`exact: false`), so both modes answer with one semantics.
 */
import { isObject, soleEntry } from '../../json'

export interface ForPlatform<T> {
  body: T
  /** False when the sent query is a superset and the hits must be evaluated in-process. */
  exact: boolean
}

export function forPlatform<T>(value: T): ForPlatform<T> {
  let exact = true
  const widen = (node: Record<string, unknown>, negated: boolean): Record<string, unknown> | undefined => {
    const clause = soleEntry(node)
    if (!clause) return undefined
    const [kind, body] = clause
    const field = Object.keys(body).find((k) => k !== '_name' && k !== 'boost')
    if (kind === '_fieldref' || kind === '_cidr') {
      exact = false
      if (negated || field === undefined) return { match_none: {} }
      const ref = isObject(body[field]) ? (body[field] as Record<string, unknown>).ref : undefined
      const fields = kind === '_fieldref' && typeof ref === 'string' ? [field, ref] : [field]
      return { bool: { filter: fields.map((f) => ({ exists: { field: f } })) } }
    }
    if (kind === 'regexp' && field !== undefined && isObject(body[field])) {
      const pcre = (body[field] as Record<string, unknown>)._pcre
      if (isObject(pcre) && pcre.superset === true) {
        exact = false
        if (negated) return { match_none: {} }
      }
    }
    return undefined
  }
  const walk = (v: unknown, negated: boolean): unknown => {
    if (Array.isArray(v)) {
      let changed = false
      const out = v.map((x) => {
        const y = walk(x, negated)
        if (y !== x) changed = true
        return y
      })
      return changed ? out : v
    }
    if (!isObject(v)) return v
    const replaced = widen(v, negated)
    if (replaced) return replaced
    let changed = false
    const out: Record<string, unknown> = {}
    for (const [k, x] of Object.entries(v)) {
      if (k === '_pcre') {
        changed = true
        continue
      }
      const y = walk(x, k === 'must_not' ? !negated : negated)
      if (y !== x) changed = true
      out[k] = y
    }
    // Untouched subtrees keep their identity, so large bodies without annotations are not copied.
    return changed ? out : v
  }
  const body = walk(value, false) as T
  return { body, exact }
}

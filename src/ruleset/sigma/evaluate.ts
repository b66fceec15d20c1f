/**
 * `rules/evaluate` core: one event against compiled rules with THE query evaluator
 * (`src/store/query/`), so logtest predicts exactly what a detector over stored documents finds.
 */
import { compileNamedQuery, DocView, type FieldTypes } from '../../store/query'
import type { CompiledSigmaRule } from './compile'

export interface RuleMatch {
  rule: { id?: string; title: string; level?: string; tags: string[] }
  /** Search identifiers that matched and contributed (not those only under `not`). */
  selections: string[]
}

type Predicate = (doc: DocView) => string[] | null

const byTypes = new WeakMap<object, WeakMap<CompiledSigmaRule, Predicate>>()
const untyped = new WeakMap<CompiledSigmaRule, Predicate>()

function predicate(rule: CompiledSigmaRule, fieldTypes?: FieldTypes): Predicate {
  let cache = untyped
  if (fieldTypes) {
    cache = byTypes.get(fieldTypes) ?? new WeakMap()
    byTypes.set(fieldTypes, cache)
  }
  let p = cache.get(rule)
  if (!p) {
    const named = compileNamedQuery(rule.query, fieldTypes)
    const positive = new Set(rule.selections)
    p = (doc) => {
      const names = named(doc)
      return names && names.filter((n) => positive.has(n))
    }
    cache.set(rule, p)
  }
  return p
}

/** Matched rules in the given order. `fieldTypes` (the source index mapping) when known. */
export function evaluateRules(event: Record<string, unknown>, rules: readonly CompiledSigmaRule[], fieldTypes?: FieldTypes): RuleMatch[] {
  const doc = new DocView(event)
  const out: RuleMatch[] = []
  for (const rule of rules) {
    const selections = predicate(rule, fieldTypes)(doc)
    if (selections) out.push({ rule: { id: rule.id, title: rule.title, level: rule.level, tags: rule.tags }, selections })
  }
  return out
}

/**
 * A detector trigger's condition (reference 1.2, 4): OR within a list, AND across the non-empty
 * lists `types`, `ids`, `sev_levels`, `tags` (every tag counts: the peer's only-the-first-tag bug
 * is not reproduced), and with `threat_intel` in `detection_types` an OR of threat-intel matches
 * last. A rule's query tags are `[level, log type, ...rule tags]`, its id the rule id. A trigger
 * with every list empty has no condition: the peer fails such a trigger at each run; here it raises
 * nothing (detector validation could refuse it, but the peer accepts it, and so do we).
 */
import type { FindingRule } from '../findings/writer'
import type { Trigger } from '../model'

const lower = (xs: string[] | undefined) => (xs ?? []).map((x) => x.toLowerCase())

const tagsOf = (rule: FindingRule) =>
  new Set([rule.level, rule.category, ...(rule.tags ?? [])].filter(Boolean).map((t) => t!.toLowerCase()))

/** The rules of one document that satisfy the trigger, or undefined when the document does not. */
export function triggerMatches(trigger: Trigger, rules: FindingRule[]): FindingRule[] | undefined {
  const clauses: Array<(r: FindingRule) => boolean> = []
  const types = lower(trigger.types)
  if (types.length > 0) clauses.push((r) => types.some((t) => tagsOf(r).has(t)))
  const ids = trigger.ids ?? []
  if (ids.length > 0) clauses.push((r) => ids.includes(r.id))
  const levels = lower(trigger.sev_levels)
  if (levels.length > 0) clauses.push((r) => levels.some((t) => tagsOf(r).has(t)))
  const tags = lower(trigger.tags)
  if (tags.length > 0) clauses.push((r) => tags.some((t) => tagsOf(r).has(t)))
  // Threat-intel matches are not findings of these rules yet: the OR'ed clause adds none.
  if (clauses.length === 0) return undefined
  // Set semantics over the document: each clause may be met by a different rule of it.
  const met = clauses.map((c) => rules.filter(c))
  if (met.some((m) => m.length === 0)) return undefined
  return [...new Set(met.flat())]
}

/** The condition as the peer writes it (`ctx.trigger.condition.script.source`). */
export function conditionSource(trigger: Trigger): string {
  const list = (xs: string[] | undefined, kind: 'tag' | 'id') => (xs ?? []).map((x) => `query[${kind}=${x}]`).join(' || ')
  const parts = [
    list(lower(trigger.types), 'tag'),
    list(trigger.ids, 'id'),
    list(lower(trigger.sev_levels), 'tag'),
    list(lower(trigger.tags), 'tag'),
  ]
    .filter(Boolean)
    .map((p) => `(${p})`)
  let source = parts.join(' && ')
  if (trigger.detection_types?.includes('threat_intel')) source += `${source ? ' || ' : ''}(query[tag=threat_intel])`
  return source
}

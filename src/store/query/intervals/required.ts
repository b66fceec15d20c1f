/**
 * The terms a document needs in the query's field to hold an interval of the rules: every term of
 * a `match`, all_of's sub-rules' together, what all of an any_of's alternatives need, and what a
 * filter that needs an interval of its own (containing, contained_by, overlapping, before, after)
 * needs. The store's planner reads only those documents' candidates from the text index; the
 * evaluator still finds the intervals. Rules with a multi-term part are not narrowed: their terms
 * are counted over the documents read, as Lucene counts them over the whole index.
 */
import { analyze } from '../analysis'
import type { Filter, Rule } from './parse'

/** Filters whose source matches only where the filter's own rule has an interval too. */
const POSITIVE = new Set(['containing', 'contained_by', 'overlapping', 'before', 'after'])

/** The terms the rule needs, or undefined when it has a multi-term part (or reads another field). */
export function requiredOf(rule: Rule): Set<string> | undefined {
  let own: Set<string> | undefined
  switch (rule.kind) {
    case 'match':
      if (rule.useField !== undefined) return undefined
      own = new Set(analyze(rule.query))
      break
    case 'all_of':
      own = union(rule.rules.map(requiredOf))
      break
    case 'any_of':
      own = intersection(rule.rules.map(requiredOf))
      break
    default:
      return undefined
  }
  return own && withFilter(own, rule.filter)
}

function withFilter(own: Set<string>, filter: Filter | undefined): Set<string> | undefined {
  if (filter === undefined) return own
  const other = requiredOf(filter.rule)
  if (other === undefined) return undefined
  return POSITIVE.has(filter.type) ? union([own, other]) : own
}

function union(sets: Array<Set<string> | undefined>): Set<string> | undefined {
  const out = new Set<string>()
  for (const s of sets) {
    if (s === undefined) return undefined
    for (const t of s) out.add(t)
  }
  return out
}

function intersection(sets: Array<Set<string> | undefined>): Set<string> | undefined {
  if (sets.some((s) => s === undefined)) return undefined
  if (sets.length === 0) return new Set()
  const [first, ...rest] = sets as Array<Set<string>>
  return new Set([...first].filter((t) => rest.every((s) => s.has(t))))
}

/**
 * An any-of's leaves that compare one field's keyword values with a literal — `*a*`, `a*`, `*a`
 * wildcards and `term`s, named or not — tested as one group per field and case sensitivity: one
 * read of the field and one matcher, whatever their order among the other clauses (an any-of of
 * pure tests is true when one of them is, in any order). SigmaHQ's exclusion filters on `Image`
 * (a dozen `filter_main_*` of startswith, endswith and exact paths, some nested in their own
 * any-of) were a dozen closures each reading the field again, on every event.
 */
import { isObject } from './doc'
import { fold } from './fold'
import { AhoCorasick } from './aho-corasick'
import { anyPrefix, anySuffix } from './affixes'
import type { StringMatcher } from './wildcard'

export type LiteralShape = 'contains' | 'prefix' | 'suffix' | 'equals'

export interface LiteralLeaf {
  field: string
  literal: string
  ci: boolean
  shape: LiteralShape
  name?: string
}

/** The parameters of a one-field leaf `{type: {field: value | {value, case_insensitive, _name}}}` this file reads, if that is its shape. */
function leafParams(q: Record<string, unknown>, type: string): { field: string; value: unknown; ci: boolean; name?: string } | undefined {
  const body = q[type]
  if (Object.keys(q).length !== 1 || !isObject(body)) return undefined
  const fields = Object.keys(body)
  if (fields.length !== 1 || fields[0] === '_name' || fields[0] === 'boost') return undefined
  const raw = body[fields[0]]
  if (!isObject(raw)) return { field: fields[0], value: raw, ci: false }
  for (const k of Object.keys(raw)) if (k !== 'value' && k !== 'case_insensitive' && k !== '_name') return undefined
  if (raw.case_insensitive !== undefined && typeof raw.case_insensitive !== 'boolean') return undefined
  if (raw._name !== undefined && typeof raw._name !== 'string') return undefined
  return { field: fields[0], value: raw.value, ci: raw.case_insensitive === true, name: raw._name as string | undefined }
}

/**
 * `{wildcard: {field: '*literal*'}}` (or `literal*`, `*literal`; escapes read), or a `term` with a
 * string value: its parts. Undefined for any other shape or parameter.
 */
export function literalLeaf(q: unknown): LiteralLeaf | undefined {
  if (!isObject(q)) return undefined
  if (isObject(q.term)) {
    const p = leafParams(q, 'term')
    return p && typeof p.value === 'string' ? { field: p.field, literal: p.value, ci: p.ci, shape: 'equals', name: p.name } : undefined
  }
  const p = isObject(q.wildcard) ? leafParams(q, 'wildcard') : undefined
  if (!p || typeof p.value !== 'string' || p.value.length < 2) return undefined
  // One literal between the stars: `*a*`, `a*` or `*a` (not `a*b`, `*`, `**`, `a`).
  const parts = starParts(p.value)
  let shape: LiteralShape
  if (parts?.length === 3 && parts[0] === '' && parts[2] === '') shape = 'contains'
  else if (parts?.length === 2 && parts[0] === '') shape = 'suffix'
  else if (parts?.length === 2 && parts[1] === '') shape = 'prefix'
  else return undefined
  const literal = parts[shape === 'prefix' ? 0 : 1]
  return literal === '' ? undefined : { field: p.field, literal, ci: p.ci, shape, name: p.name }
}

/**
 * A wildcard pattern's literal runs between its `*` (escapes read as `wildcardMatcher` reads
 * them: `\` makes the next character literal, a trailing one is itself); undefined if it has a
 * `?`. Windows paths are written with escaped backslashes (`*\\\\cmd.exe` for `\\cmd.exe`): read
 * as text, SigmaHQ's lists of binaries were never grouped.
 */
function starParts(pattern: string): string[] | undefined {
  const parts: string[] = []
  let run = ''
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\' && i + 1 < pattern.length) run += pattern[++i]
    else if (c === '?') return undefined
    else if (c === '*') {
      parts.push(run)
      run = ''
    } else run += c
  }
  parts.push(run)
  return parts
}

/**
 * A `bool` that is only an any-of (`should`, minimum_should_match absent or 1, nothing else but
 * a name): its clauses, which an enclosing any-of may take in as its own.
 */
export function anyOfClauses(q: unknown): { clauses: unknown[]; name?: string } | undefined {
  if (!isObject(q) || Object.keys(q).length !== 1 || !isObject(q.bool)) return undefined
  const b = q.bool
  for (const k of Object.keys(b)) if (k !== 'should' && k !== '_name' && k !== 'minimum_should_match') return undefined
  const should = Array.isArray(b.should) ? b.should : b.should === undefined ? [] : [b.should]
  if (should.length === 0 || (b.minimum_should_match !== undefined && b.minimum_should_match !== 1 && b.minimum_should_match !== '1'))
    return undefined
  if (b._name !== undefined && typeof b._name !== 'string') return undefined
  return { clauses: should, name: b._name as string | undefined }
}

/** Whether a value (folded when the group is case-insensitive) equals, starts, ends with or contains one of the group's literals. */
export function groupMatcher(leaves: readonly LiteralLeaf[], ci: boolean): StringMatcher {
  const of = (shape: LiteralShape) => [...new Set(leaves.filter((l) => l.shape === shape).map((l) => (ci ? fold(l.literal) : l.literal)))]
  // Only the kinds the group has, each as plain as its size allows: most groups are one or two
  // filters of a rule, where a general test cost more than the closures it replaced.
  const parts: StringMatcher[] = []
  const equals = of('equals')
  if (equals.length === 1) parts.push((v) => v === equals[0])
  else if (equals.length > 1) {
    const set = new Set(equals)
    // A value longer than every exact one (a command line against `Image` names) is not hashed for the set.
    const longest = Math.max(...equals.map((l) => l.length))
    parts.push((v) => v.length <= longest && set.has(v))
  }
  const prefixes = of('prefix')
  if (prefixes.length > 0) parts.push(anyPrefix(prefixes))
  const suffixes = of('suffix')
  if (suffixes.length > 0) parts.push(anySuffix(suffixes))
  const contains = of('contains')
  if (contains.length > 0) parts.push(containsAny(contains))
  if (parts.length === 1) return parts[0]
  return (v) => {
    for (const m of parts) if (m(v)) return true
    return false
  }
}

/** Whether a value contains one of `literals`: an automaton for long lists, indexOf for short ones. */
function containsAny(literals: string[]): StringMatcher {
  if (literals.length < 8) return (v) => literals.some((l) => v.includes(l))
  // One per list in every compiled rule (hundreds in SigmaHQ's Windows rules): a few dense rows
  // (the root's and its children's, where a scan spends its steps) keep it small.
  const matcher = new AhoCorasick(literals, 16)
  return (v) => matcher.has(v)
}

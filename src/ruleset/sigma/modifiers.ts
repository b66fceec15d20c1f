/**
 * A detection item `Field|mod1|mod2: values` turned into typed values. Modifiers apply left to
 * right; each raw value becomes a group of alternatives (expanding modifiers add members), so
 * `all` can AND the groups while each group stays OR-ed (pySigma's SigmaExpansion).
 */
import { type Network, parseNetwork } from './cidr'
import { base64, base64offset, expand, type Utf16, utf16, windash } from './encodings'
import { SigmaInvalid, SigmaUnsupported } from './errors'
import type { RegexFlag } from './regex'
import { literal, parseSigmaString, placeholdersOf, type SigmaString, withPrefixAny, withSuffixAny } from './sigma-string'

export type Value =
  | SigmaString
  | { kind: 're'; pattern: string; flags: Set<RegexFlag> }
  | { kind: 'cidr'; net: Network }
  | { kind: 'num'; value: number }
  | { kind: 'bool'; value: boolean }
  | { kind: 'null' }
  | { kind: 'cmp'; op: 'lt' | 'lte' | 'gt' | 'gte'; value: number }
  | { kind: 'exists'; value: boolean }
  | { kind: 'fieldref'; ref: string; mode: 'equals' | 'contains' | 'startswith' | 'endswith' }

export interface Item {
  /** Alternatives per raw value. */
  groups: Value[][]
  all: boolean
  cased: boolean
  neq: boolean
}

const ALIASES: Record<string, string> = { wide: 'utf16le', ignorecase: 'i', multiline: 'm', dotall: 's' }
const FLAGS = new Set(['all', 'cased', 'neq'])
const TYPES = new Set(['re', 'cidr', 'exists', 'lt', 'lte', 'gt', 'gte', 'fieldref'])
const STRING_MODIFIERS = new Set([
  'contains',
  'startswith',
  'endswith',
  'base64',
  'base64offset',
  'utf16le',
  'utf16be',
  'utf16',
  'windash',
  'expand',
])
const TIME_PARTS = new Set(['minute', 'hour', 'day', 'week', 'month', 'year'])

export type Raw = string | number | boolean | null

export function buildItem(modifiers: string[], raws: Raw[], placeholders: (name: string) => SigmaString[] | undefined): Item {
  const names = modifiers.map((m) => ALIASES[m] ?? m)
  for (const m of names) {
    if (TIME_PARTS.has(m)) throw new SigmaUnsupported(`modifier '${m}'`, 'time-part comparisons have no query-DSL equivalent')
    if (!FLAGS.has(m) && !TYPES.has(m) && !STRING_MODIFIERS.has(m) && !['i', 'm', 's'].includes(m))
      throw new SigmaUnsupported(`modifier '${m}'`, 'unknown modifier')
  }
  const steps = names.filter((m) => !FLAGS.has(m))
  const item: Item = { groups: [], all: names.includes('all'), cased: names.includes('cased'), neq: names.includes('neq') }
  const typeModifier = TYPES.has(steps[0]) ? steps[0] : undefined
  const misplaced = steps.slice(1).find((m) => TYPES.has(m))
  if (misplaced) throw new SigmaInvalid(`modifier '${misplaced}'`, 'must be the first modifier')

  if (typeModifier === 're') {
    const flags = new Set<RegexFlag>()
    for (const m of steps.slice(1)) {
      if (m === 'i' || m === 'm' || m === 's') flags.add(m)
      // On a regex, contains/startswith/endswith are already implied by substring matching.
      else if (!['contains', 'startswith', 'endswith'].includes(m)) throw new SigmaInvalid(`modifier '${m}'`, "cannot follow 're'")
    }
    item.groups = raws.map((raw) => [{ kind: 're', pattern: stringOf(raw, 're'), flags }])
    return item
  }
  if (typeModifier === 'fieldref') {
    // `fieldref` then at most one of contains/startswith/endswith (pySigma: the order matters).
    const rest = steps.slice(1)
    const mode = rest[0] ?? 'equals'
    if (rest.length > 1 || !['equals', 'contains', 'startswith', 'endswith'].includes(mode))
      throw new SigmaInvalid(`modifier '${rest[rest.length > 1 ? 1 : 0]}'`, "cannot follow 'fieldref'")
    item.groups = raws.map((raw) => [{ kind: 'fieldref', ref: stringOf(raw, 'fieldref'), mode: mode as 'equals' }])
    return item
  }
  const flag = steps.find((m) => m === 'i' || m === 'm' || m === 's')
  if (flag) throw new SigmaInvalid(`modifier '${flag}'`, "only valid after 're'")
  if (typeModifier) {
    if (steps.length > 1) throw new SigmaInvalid(`modifier '${steps[1]}'`, `cannot follow '${typeModifier}'`)
    item.groups = raws.map((raw) => [typed(typeModifier, raw)])
    if (typeModifier === 'exists' && raws.length !== 1) throw new SigmaInvalid("modifier 'exists'", 'takes exactly one boolean')
    return item
  }

  const withPlaceholders = steps.includes('expand')
  item.groups = raws.map((raw) => [initial(raw, steps.length > 0, withPlaceholders)])
  for (const m of steps) {
    item.groups = item.groups.map((group) => group.flatMap((v) => apply(m, asString(v, m), placeholders)))
  }
  return item
}

function stringOf(raw: Raw, modifier: string): string {
  if (raw === null || typeof raw === 'boolean') throw new SigmaInvalid(`modifier '${modifier}'`, `value ${raw} is not a string`)
  return String(raw)
}

function numberOf(raw: Raw, modifier: string): number {
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw) : NaN
  if (!Number.isFinite(n)) throw new SigmaInvalid(`modifier '${modifier}'`, `value '${raw}' is not a number`)
  return n
}

function typed(modifier: string, raw: Raw): Value {
  switch (modifier) {
    case 'cidr':
      return { kind: 'cidr', net: parseNetwork(stringOf(raw, 'cidr')) }
    case 'exists':
      if (typeof raw === 'boolean') return { kind: 'exists', value: raw }
      if (raw === 'true' || raw === 'false') return { kind: 'exists', value: raw === 'true' }
      throw new SigmaInvalid("modifier 'exists'", `value '${raw}' is not a boolean`)
    default:
      return { kind: 'cmp', op: modifier as 'lt', value: numberOf(raw, modifier) }
  }
}

function initial(raw: Raw, transformed: boolean, placeholders: boolean): Value {
  if (typeof raw === 'string') return parseSigmaString(raw, placeholders)
  if (transformed) return raw === null ? { kind: 'null' } : literal(String(raw))
  if (raw === null) return { kind: 'null' }
  return typeof raw === 'number' ? { kind: 'num', value: raw } : { kind: 'bool', value: raw }
}

function asString(v: Value, modifier: string): SigmaString {
  if (v.kind !== 'str') throw new SigmaInvalid(`modifier '${modifier}'`, `cannot apply to a ${v.kind} value`)
  return v
}

function apply(m: string, s: SigmaString, placeholders: (name: string) => SigmaString[] | undefined): SigmaString[] {
  if (m !== 'expand' && placeholdersOf(s).length > 0)
    throw new SigmaInvalid(`modifier '${m}'`, "placeholders must be resolved first: put 'expand' before it")
  switch (m) {
    case 'contains':
      return [withSuffixAny(withPrefixAny(s))]
    case 'startswith':
      return [withSuffixAny(s)]
    case 'endswith':
      return [withPrefixAny(s)]
    case 'base64':
      return [base64(s)]
    case 'base64offset':
      return base64offset(s)
    case 'utf16le':
    case 'utf16be':
    case 'utf16':
      return [utf16(s, m as Utf16)]
    case 'windash':
      return windash(s)
    case 'expand':
      return expand(s, placeholders)
  }
  throw new SigmaInvalid(`modifier '${m}'`)
}

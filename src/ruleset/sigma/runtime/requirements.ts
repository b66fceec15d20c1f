/**
 * What an event must contain for a compiled rule (a query-DSL tree) to possibly match: a
 * few clauses that must all hold, each a disjunction of atoms about one field's values — the field
 * is present, one of its folded keyword values equals a literal, or contains one. The tree is
 * read generically: every node or leaf this file does not understand (regexp, range, anything a
 * newer compiler emits) yields "no requirement", so the rule is always checked and results stay
 * those of the tree evaluator. Being a NECESSARY condition is the only contract: a rule whose
 * requirement holds is then run by the evaluator itself.
 */
import { isObject, soleEntry } from '../../../json'
import { fold, kindOf, type FieldSpec, type FieldTypes } from '../../../store/query'
import { minimumShouldMatch, toNumber } from '../../../store/query/compile'
import { FLAT_OBJECT, flatObjectRoot } from '../../../store/query/flat-object'
import { requiredLiterals } from '../../../store/query/regex-literals'

export type Atom =
  | { kind: 'present'; path: string }
  | { kind: 'equals'; path: string; value: string }
  | { kind: 'contains'; path: string; value: string }
  /** A folded keyword value starts (ends) with `value`. */
  | { kind: 'prefix'; path: string; value: string }
  | { kind: 'suffix'; path: string; value: string }
  /** A numeric field holds this number (`value`: its canonical text, String(n)). */
  | { kind: 'number'; path: string; value: string }

/** Any one of its atoms must hold. An empty clause can never hold. */
export type Clause = Atom[]
/**
 * All of its clauses must hold (a conjunction of disjunctions). No clause: no requirement
 * (always check); an empty clause: the rule can never match.
 */
export type Requirement = Clause[]

/** Clauses kept per rule (the index then picks the most selective among them across the rule set). */
export const MAX_CLAUSES = 8
/** A clause of presence atoms only: met by nearly every event that has the field. */
const WEAK = 20

export type Types = ReadonlyMap<string, FieldSpec> | undefined

export function normaliseTypes(t: FieldTypes | undefined): Types {
  if (t === undefined || t instanceof Map) return t as Types
  const m = new Map<string, FieldSpec>()
  for (const [k, v] of Object.entries(t)) m.set(k, typeof v === 'string' ? { type: v } : v)
  return m
}

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])
const ALWAYS: Requirement = []
const NEVER: Requirement = [[]]

/** Whether no event can meet `r` (one of its clauses has no atom). */
export const neverHolds = (r: Requirement): boolean => r.some((c) => c.length === 0)

/** The requirement of a query; any surprise in its shape means "always check". */
export function requirementOf(query: unknown, types: Types): Requirement {
  try {
    return node(query, types)
  } catch {
    return ALWAYS
  }
}

/** Lower is more selective: an exact value beats a substring, which beats mere presence. */
export function score(c: Clause): number {
  let n = 0
  for (const a of c) n += atomScore(a)
  return n
}

/** An atom's part of `score`: an anchored substring is a little rarer than the same one anywhere. */
export const atomScore = (a: Atom): number =>
  a.kind === 'equals' || a.kind === 'number'
    ? 1
    : a.kind === 'present'
      ? WEAK
      : containsScore(a.kind === 'contains' ? a.value.length : a.value.length + 1)

/**
 * A longer substring is rarer: `\\edrfreeze` or `werfaultsecure.exe` is on few events, `.exe`
 * on nearly all process events (a rule's best clause was `Image` containing `.exe`).
 */
const containsScore = (length: number) => (length >= 3 ? 1 + 12 / length : 8)

const hasPresence = (c: Clause) => c.some((a) => a.kind === 'present')

/** All of them must hold: their clauses together, the most selective ones kept. */
function all(rs: Requirement[]): Requirement {
  const clauses = rs.flat()
  if (clauses.some((c) => c.length === 0)) return NEVER
  const ranked = clauses.map((c) => [score(c), c] as const).sort((a, b) => a[0] - b[0])
  // A presence clause next to a selective one only adds work; a long list of values does not
  // (`Initiated: 'true'` and 53 domains: the domains are the selective part).
  const kept = ranked.filter(([, c], i) => i === 0 || !hasPresence(c))
  return kept.slice(0, MAX_CLAUSES).map(([, c]) => c)
}

/** Clauses an any-of keeps: its alternatives' best ones, second best ones... */
const ANY_CLAUSES = 3

/**
 * Any of them may hold: the union of each one's best clause, then of each one's second best (or
 * its best again)...: each union is necessary, and several of them make a rule whose
 * alternatives each name a path and a tool (`:\\users\\` and `kalilinux`) wait for both.
 * An unconstrained alternative frees the whole.
 */
function any(rs: Requirement[]): Requirement {
  if (rs.length === 0) return NEVER
  if (rs.some((r) => r.length === 0)) return ALWAYS
  const width = Math.min(ANY_CLAUSES, Math.max(...rs.map((r) => r.length)))
  const out = new Map<string, Clause>()
  for (let j = 0; j < width; j++) {
    const atoms = new Map<string, Atom>()
    for (const r of rs) for (const a of r[Math.min(j, r.length - 1)]) atoms.set(atomKey(a), a)
    const key = [...atoms.keys()].sort().join('\u0001')
    if (!out.has(key)) out.set(key, [...atoms.values()])
  }
  return [...out.values()]
}

export const atomKey = (a: Atom) => (a.kind === 'present' ? `present\u0000${a.path}` : `${a.kind}\u0000${a.path}\u0000${a.value}`)

function node(q: unknown, types: Types): Requirement {
  const clause = soleEntry(q)
  if (!clause) return ALWAYS
  const [type, body] = clause
  switch (type) {
    case 'bool':
      return bool(body, types)
    case 'match_none':
      return NEVER
    case 'constant_score':
      return node(body.filter, types)
    case 'nested':
      return node(body.query, types)
    case 'dis_max':
      return any(list(body.queries).map((x) => node(x, types)))
    case 'exists':
      return typeof body.field === 'string' ? exists(body.field, types) : ALWAYS
    case '_fieldref':
      return fieldref(body, types)
    case 'term':
    case 'terms':
    case 'wildcard':
    case 'prefix':
    case 'regexp':
    case 'range':
    case 'match':
    case 'match_phrase':
    case 'match_phrase_prefix':
    case 'match_bool_prefix':
      return leaf(type, body, types)
    default:
      return ALWAYS
  }
}

function bool(body: Record<string, unknown>, types: Types): Requirement {
  const must = [...list(body.must), ...list(body.filter)].map((x) => node(x, types))
  const should = list(body.should)
  const defaultMsm = should.length > 0 && must.length === 0 ? 1 : 0
  const msm = body.minimum_should_match === undefined ? defaultMsm : minimumShouldMatch(body.minimum_should_match, should.length)
  if (msm > should.length) return NEVER
  if (msm > 0) must.push(any(should.map((x) => node(x, types))))
  for (const x of list(body.must_not)) must.push(negated(x, types))
  return all(must)
}

/**
 * What an event must contain for `q` NOT to match. Sigma writes "the field is there" as `not
 * field: null` (`not 1 of filter_*` with a `filter_null`): without this, SigmaHQ's rules made
 * only of exclusions were checked on every event. Anything else yields no requirement.
 */
function negated(q: unknown, types: Types): Requirement {
  const clause = soleEntry(q)
  if (!clause) return ALWAYS
  const [type, body] = clause
  if (type === 'constant_score') return negated(body.filter, types)
  if (type !== 'bool') return ALWAYS
  const must = [...list(body.must), ...list(body.filter)]
  const should = list(body.should)
  const mustNot = list(body.must_not)
  const defaultMsm = should.length > 0 && must.length === 0 ? 1 : 0
  const msm = body.minimum_should_match === undefined ? defaultMsm : minimumShouldMatch(body.minimum_should_match, should.length)
  // not (all of must, none of must_not, msm of should) = any of: a must failing, a must_not
  // matching, fewer than msm of should (for msm 1: none of them).
  const ways = [...must.map((x) => negated(x, types)), ...mustNot.map((x) => node(x, types))]
  if (msm === 1) ways.push(all(should.map((x) => negated(x, types))))
  else if (msm > 1) return ALWAYS
  // No way named (a bool matching everything): nothing is claimed.
  return ways.length === 0 ? ALWAYS : any(ways)
}

/** The document paths a field name reads, and how its values compare (undefined: unmapped). */
function resolve(name: string, types: Types): { paths: string[]; kind: string } | undefined {
  if (types) {
    const spec = types.get(name)
    // A path below a flat_object reads its leaves there as keywords; the root's values lie
    // deeper than its own path, so a rule on the root requires only its presence.
    if (spec === undefined) return flatObjectRoot(types, name) === undefined ? undefined : { paths: [name], kind: 'keyword' }
    return { paths: [spec.path ?? name], kind: spec.type === FLAT_OBJECT ? FLAT_OBJECT : kindOf(spec.type) }
  }
  // Unmapped `x.keyword` reads `x.keyword` when the document has it, else `x`.
  return { paths: name.endsWith('.keyword') ? [name, name.slice(0, -'.keyword'.length)] : [name], kind: 'auto' }
}

const META = new Set(['_id', '_index', '_seq_no', '_version', '_primary_term', '_source'])

function exists(name: string, types: Types): Requirement {
  if (META.has(name)) return ALWAYS
  const f = resolve(name, types)
  // An unmapped object field exists through its sub-fields: not worth modelling.
  if (!f) return ALWAYS
  return [f.paths.map((path) => ({ kind: 'present', path }))]
}

/** Sigma `fieldref`: a value of the field compared with one of the referenced field, so both are there. */
function fieldref(body: Record<string, unknown>, types: Types): Requirement {
  const fields = Object.keys(body).filter((k) => k !== '_name' && k !== 'boost')
  const params = body[fields[0]]
  if (fields.length !== 1 || !isObject(params) || typeof params.ref !== 'string') return ALWAYS
  return all([exists(fields[0], types), exists(params.ref, types)])
}

function leaf(type: string, body: Record<string, unknown>, types: Types): Requirement {
  const fields = Object.keys(body).filter((k) => k !== '_name' && k !== 'boost' && k !== 'value_type')
  if (fields.length !== 1 || META.has(fields[0])) return ALWAYS
  const f = resolve(fields[0], types)
  if (!f) return NEVER // unmapped in a mapped index: the leaf matches nothing
  const raw = body[fields[0]]
  const params = isObject(raw) ? raw : { value: raw }
  const present = (): Requirement => [f.paths.map((path) => ({ kind: 'present', path }))]
  // Text fields compare analysed tokens, numbers and dates compare parsed values: presence only.
  // A number field compares parsed numbers (`DestinationPort` lists): the numbers themselves.
  if (f.kind === 'number' && (type === 'term' || type === 'terms')) {
    const values = type === 'terms' ? (Array.isArray(raw) ? raw : []) : [params.value]
    const numbers = values.map(toNumber).filter((n): n is number => n !== undefined)
    return [f.paths.flatMap((path) => numbers.map((n): Atom => ({ kind: 'number', path, value: String(n) })))]
  }
  if (f.kind !== 'keyword' && f.kind !== 'auto') return present()
  const literals = literalsOf(type, params, raw)
  if (literals === undefined) return present()
  return [
    f.paths.flatMap((path) =>
      literals.map((l): Atom => (l.value === '' && l.kind !== 'equals' ? { kind: 'present', path } : { path, ...l })),
    ),
  ]
}

type Literal = { kind: 'equals' | 'contains' | 'prefix' | 'suffix'; value: string }

const keywordOf = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : undefined)

/** Folded literals of a keyword leaf, one of which a matching value must equal or contain. */
function literalsOf(type: string, params: Record<string, unknown>, raw: unknown): Literal[] | undefined {
  switch (type) {
    case 'term': {
      const k = keywordOf(params.value)
      return k === undefined ? undefined : [{ kind: 'equals', value: fold(k) }]
    }
    case 'terms': {
      if (!Array.isArray(raw)) return undefined
      const out: Literal[] = []
      for (const v of raw) {
        const k = keywordOf(v)
        if (k !== undefined) out.push({ kind: 'equals', value: fold(k) })
      }
      return out
    }
    case 'prefix': {
      const k = keywordOf(params.value)
      return k === undefined ? undefined : [{ kind: 'prefix', value: fold(k) }]
    }
    case 'wildcard': {
      const k = keywordOf(params.value ?? params.wildcard)
      return k === undefined ? undefined : [wildcardLiteral(k)]
    }
    case 'regexp': {
      // Sigma's `re` (its original pattern, searched as a substring): one of its required literals.
      const pcre = params._pcre
      const literals = isObject(pcre) && typeof pcre.pattern === 'string' ? requiredLiterals(pcre.pattern) : undefined
      return literals?.map((l) => ({ kind: 'contains', value: fold(l) }))
    }
    default:
      return undefined
  }
}

/**
 * The longest literal run of an OpenSearch wildcard pattern (`\` escapes), as a prefix (suffix)
 * when nothing comes before (after) it, or the whole value without wildcards.
 */
function wildcardLiteral(pattern: string): Literal {
  const runs: string[] = []
  let run = ''
  let wild = false
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]
    if (c === '\\' && i + 1 < pattern.length) run += pattern[++i]
    else if (c === '*' || c === '?') {
      wild = true
      runs.push(run)
      run = ''
    } else run += c
  }
  runs.push(run)
  if (!wild) return { kind: 'equals', value: fold(run) }
  let best: Literal = { kind: 'contains', value: '' }
  let bestLength = 0
  runs.forEach((r, i) => {
    const kind = i === 0 ? 'prefix' : i === runs.length - 1 ? 'suffix' : 'contains'
    // An anchored run counts one more character (its anchor), so it wins a tie.
    const length = r.length === 0 ? 0 : r.length + (kind === 'contains' ? 0 : 1)
    if (length > bestLength) [best, bestLength] = [{ kind, value: fold(r) }, length]
  })
  return best
}

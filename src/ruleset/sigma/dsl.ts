/**
 * The query-DSL subset a Sigma rule compiles to. Every node is valid OpenSearch JSON, except the
 * private parts the in-memory evaluator runs and the platform adapter translates before sending
 * (`src/store/platform/private-nodes.ts`): the `_pcre` annotation on regexp leaves (the original
 * pattern; the Lucene value beside it may only be a superset when Lucene cannot say it), and the
 * `_fieldref` (compare two fields of one event) and `_cidr` (IPv6 network on a non-`ip` field) nodes.
 */
export type Scalar = string | number | boolean

export interface TermBody {
  value: Scalar
  case_insensitive?: boolean
  _name?: string
}
export interface WildcardBody {
  value: string
  case_insensitive?: boolean
  _name?: string
}
export interface Pcre {
  pattern: string
  flags: string
  /** The Lucene value beside it accepts more strings than the pattern (see regex.ts). */
  superset?: true
}
export interface RegexpBody {
  value: string
  flags: 'NONE'
  case_insensitive?: boolean
  _pcre: Pcre
  _name?: string
}
export interface FieldrefBody {
  /** The other field. */
  ref: string
  mode?: 'contains' | 'startswith' | 'endswith'
  case_insensitive?: boolean
  _name?: string
}
export interface CidrBody {
  value: string
  _name?: string
}
export interface RangeBody {
  gt?: number
  gte?: number
  lt?: number
  lte?: number
  _name?: string
}
export interface BoolBody {
  filter?: Query[]
  should?: Query[]
  minimum_should_match?: number
  must_not?: Query[]
  _name?: string
}

export type Query =
  | { bool: BoolBody }
  | { term: Record<string, TermBody> }
  | { wildcard: Record<string, WildcardBody> }
  | { regexp: Record<string, RegexpBody> }
  | { range: Record<string, RangeBody> }
  | { exists: { field: string; _name?: string } }
  | { _fieldref: Record<string, FieldrefBody> }
  | { _cidr: Record<string, CidrBody> }
  | { match_none: { _name?: string } }

export const term = (field: string, value: Scalar, caseInsensitive = false): Query => ({
  term: { [field]: caseInsensitive ? { value, case_insensitive: true } : { value } },
})

export const wildcard = (field: string, value: string, caseInsensitive = false): Query => ({
  wildcard: { [field]: caseInsensitive ? { value, case_insensitive: true } : { value } },
})

export const regexp = (field: string, lucene: string, pcre: Pcre, caseInsensitive: boolean): Query => ({
  regexp: {
    [field]: caseInsensitive
      ? { value: lucene, flags: 'NONE', case_insensitive: true, _pcre: pcre }
      : { value: lucene, flags: 'NONE', _pcre: pcre },
  },
})

export const fieldref = (field: string, ref: string, mode: FieldrefBody['mode'] | 'equals', caseInsensitive: boolean): Query => ({
  _fieldref: {
    [field]: { ref, ...(mode === 'equals' ? {} : { mode }), ...(caseInsensitive ? { case_insensitive: true } : {}) },
  },
})

export const cidr = (field: string, network: string): Query => ({ _cidr: { [field]: { value: network } } })

export const range = (field: string, op: 'gt' | 'gte' | 'lt' | 'lte', value: number): Query => ({
  range: { [field]: { [op]: value } },
})

export const exists = (field: string): Query => ({ exists: { field } })

// `should` never shares a bool with `filter`/`must_not`: there it would become optional.
const isPlain = (q: Query, key: 'filter' | 'should'): q is { bool: BoolBody } =>
  'bool' in q &&
  q.bool._name === undefined &&
  Object.keys(q.bool).every((k) => k === key || (key === 'should' && k === 'minimum_should_match'))

/**
 * Rough evaluation cost, so cheap clauses run first and short-circuit the expensive ones
 * (clause order never changes the result, in OpenSearch or in memory).
 */
export function cost(q: Query): number {
  if ('bool' in q) {
    const b = q.bool
    return [...(b.filter ?? []), ...(b.should ?? []), ...(b.must_not ?? [])].reduce((n, c) => n + cost(c), 0)
  }
  if ('regexp' in q) return 8
  if ('wildcard' in q) return 2
  return 1
}

const byCost = (qs: Query[]) =>
  qs
    .map((q) => [cost(q), q] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, q]) => q)

export function and(children: Query[]): Query {
  const flat = byCost(children.flatMap((c) => (isPlain(c, 'filter') ? c.bool.filter! : [c])))
  return flat.length === 1 ? flat[0] : { bool: { filter: flat } }
}

export function or(children: Query[]): Query {
  const flat = byCost(children.flatMap((c) => (isPlain(c, 'should') ? c.bool.should! : [c])))
  return flat.length === 1 ? flat[0] : { bool: { should: flat, minimum_should_match: 1 } }
}

export function not(child: Query): Query {
  if ('bool' in child && child.bool._name === undefined) {
    const keys = Object.keys(child.bool)
    if (keys.length === 1 && keys[0] === 'must_not' && child.bool.must_not!.length === 1) return child.bool.must_not![0]
  }
  return { bool: { must_not: [child] } }
}

/** Attach `_name` where OpenSearch expects it for the node's type (field body or query body). */
export function named(q: Query, name: string): Query {
  if ('bool' in q) {
    if (q.bool._name === undefined) return { bool: { ...q.bool, _name: name } }
    return { bool: { filter: [q], _name: name } }
  }
  if ('exists' in q) return { exists: { ...q.exists, _name: name } }
  if ('match_none' in q) return { match_none: { _name: name } }
  const [kind, bodies] = Object.entries(q)[0] as [string, Record<string, { _name?: string }>]
  const [field, body] = Object.entries(bodies)[0]
  if (body._name !== undefined) return { bool: { filter: [q], _name: name } }
  return { [kind]: { [field]: { ...body, _name: name } } } as Query
}

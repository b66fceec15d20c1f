/**
 * THE in-memory evaluator of the query DSL. It mirrors OpenSearch on JSON documents: keyword
 * fields compare whole values, text fields compare analysed tokens, an array matches when any
 * element does, a missing field makes a leaf false (so `must_not` of it is true), and with a
 * mapping (`fieldTypes`) an unmapped field matches nothing, like an OpenSearch index.
 * Without a mapping each value is typed by itself, as dynamic mapping would (string -> keyword
 * for term-level queries and text for `match`, number -> numeric, boolean -> boolean).
 */
import { type FieldSpec, type Kind, kindOf } from './field-spec'
import { ignoredFields } from './malformed'
import { IllegalArgument, ParsingError, QueryShardError } from '../errors'
import { checkNestedDepth, checkRegexLength, ClauseBudget, type QueryLimits } from './limits'
import { analyze } from './analysis'
import { queryTerms } from './analyzers'
import { toBool, toNumber } from './values'
import { parseDate, parseDateMath } from './dates'
import { type Zone, zoneOf } from './zones'
import { type DocView, type FieldPath, fieldPath, isObject, keywordOf, asDocView, type Source } from './doc'
import { FLAT_OBJECT, flatLeavesPath, flatObjectRoot } from './flat-object'
import { compareCodePoints, fold } from './fold'
import { cidrMatcher, parseIp } from './ip'
import { fromJavaScript, linearRegExp } from './linear-regexp'
import { luceneRegExp } from './lucene-regexp'
import { type StringMatcher, wildcardMatcher } from './wildcard'
import { anyOfClauses, groupMatcher, type LiteralLeaf, literalLeaf } from './literal-groups'
import { requiredLiteralSets } from './regex-literals'
import { editDistanceWithin, fuzzyEdits } from './fuzzy'
import { type QueryableField, translateQueryString } from './query-string'
import { compileIntervals } from './intervals'
import { combinedTest, parseCombinedFields } from './combined-fields'
import { checkNestedPath, inScope, nestedDocs, parseNestedQuery, scopedSpecs } from './nested'
import { normalizedParams, normalizerOf } from './normalizer'
import { analyzerRefusal, joiningRefusal, refusal, searchable } from './query-guards'
import { arcDistance, geoPointsOf, inBox, parseGeoBoundingBox, parseGeoDistance, rawValuesAt } from './geo'

export { kindOf, type FieldSpec } from './field-spec'
export { toBool, toNumber } from './values'
export type FieldTypes = ReadonlyMap<string, FieldSpec> | Record<string, string | FieldSpec>

export interface CompileOptions {
  /** Epoch millis used for `now` in date math; default Date.now() at compile time. */
  now?: number
  /** OpenSearch's per-request query limits; callers' searches pass them, rule evaluation does not. */
  limits?: QueryLimits
  /** The documents tested: the root's or a nested path's; by default the scope of a scoped field map (nested.ts), else the root. */
  scope?: string
}

export type Test = (doc: DocView) => boolean
/** A compiled query and its `_name`, if it has one. */
type NamedTest = { test: Test; name?: string }

export interface CompiledQuery {
  test: Test
  /** Every `_name`d sub-query, to be tested on its own (OpenSearch's `matched_queries`). */
  named: ReadonlyArray<{ name: string; test: Test }>
}

/** `(source) => boolean`; pass a `DocView` to share field caches across many compiled queries. */
export function compileQuery(query: unknown, fieldTypes?: FieldTypes, options?: CompileOptions): (doc: Source | DocView) => boolean {
  const { test } = compile(query, fieldTypes, options)
  return (doc) => test(asDocView(doc))
}

/** Like `compileQuery`, but answers the matched `_name`s (in query order) or null when the query does not match. */
export function compileNamedQuery(
  query: unknown,
  fieldTypes?: FieldTypes,
  options?: CompileOptions,
): (doc: Source | DocView) => string[] | null {
  const { test, named } = compile(query, fieldTypes, options)
  return (doc) => {
    const d = asDocView(doc)
    if (!test(d)) return null
    return matchedNames(named, d)
  }
}

export function matchedNames(named: CompiledQuery['named'], d: DocView): string[] {
  const out: string[] = []
  for (const n of named) if (!out.includes(n.name) && n.test(d)) out.push(n.name)
  return out
}

export function compile(query: unknown, fieldTypes?: FieldTypes, options?: CompileOptions): CompiledQuery {
  const c = new Compiler(normaliseTypes(fieldTypes), options?.now ?? Date.now(), options?.limits, options?.scope)
  const test = query === undefined || query === null ? always : c.node(query)
  return { test, named: c.named }
}

const always: Test = () => true
const never: Test = () => false

function normaliseTypes(t: FieldTypes | undefined): ReadonlyMap<string, FieldSpec> | undefined {
  if (t === undefined || t instanceof Map) return t as ReadonlyMap<string, FieldSpec> | undefined
  const m = new Map<string, FieldSpec>()
  for (const [k, v] of Object.entries(t)) m.set(k, typeof v === 'string' ? { type: v } : v)
  return m
}

/** How a leaf reads one field of a document. */
interface Field {
  name: string
  kind: Kind
  format?: string
  raw(d: DocView): unknown[]
  keywords(d: DocView): string[]
  folded(d: DocView): string[]
  tokens(d: DocView): string[]
}

/** A field read through one path: its values, keywords, folded keywords and tokens, cached per document. */
/** The folded values whose keyword (same position) fits in `limit` (apart, so a caller allocates no scope for it). */
function fitting(folded: string[], keywords: string[], limit: number): string[] {
  return folded.filter((_, i) => keywords[i].length <= limit)
}

/** A field read through its normalizer: its values as the field indexes them. */
function normalizedField(f: Field, norm: (s: string) => string): Field {
  const each = (xs: string[]) => xs.map(norm)
  return {
    ...f,
    raw: (d) => f.raw(d).map((v) => (typeof v === 'string' ? norm(v) : v)),
    keywords: (d) => each(f.keywords(d)),
    tokens: (d) => each(f.tokens(d)),
  }
}

function keywordField(name: string, fp: FieldPath): Field {
  return {
    name,
    kind: 'keyword',
    raw: (d) => d.values(fp),
    keywords: (d) => d.keywords(fp),
    folded: (d) => d.folded(fp),
    tokens: (d) => d.tokens(fp),
  }
}

/** Split `{field: value | {value, ...params}, _name, boost}` into its parts. */
export function leafParts(
  queryName: string,
  body: unknown,
  valueKey = 'value',
): { field: string; params: Record<string, unknown>; name?: string } {
  if (!isObject(body)) throw new ParsingError(`[${queryName}] query malformed, no start_object after query name`)
  let field: string | undefined
  let params: Record<string, unknown> = {}
  let name = typeof body._name === 'string' ? body._name : undefined
  for (const [k, v] of Object.entries(body)) {
    if (k === '_name' || k === 'boost') continue
    if (field !== undefined) throw new ParsingError(`[${queryName}] query doesn't support multiple fields, found [${field}] and [${k}]`)
    field = k
    if (isObject(v)) {
      params = v
      if (typeof v._name === 'string') name = v._name
    } else params = { [valueKey]: v }
  }
  if (field === undefined) throw new ParsingError(`[${queryName}] query requires a field`)
  return { field, params, name }
}

const COMPOUND = new Set(['bool', 'constant_score', 'nested', 'dis_max'])

const clauses = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])

class Compiler {
  readonly named: Array<{ name: string; test: Test }> = []
  private readonly clauses: ClauseBudget | undefined
  private nestedDepth = 0
  /** Inside a query_string's translation: a field that refuses a query matches nothing there (see admit). */
  private queryStrings = 0
  /** The fields of the documents being queried: the root's, or a nested query's path's. */
  private types: ReadonlyMap<string, FieldSpec> | undefined

  constructor(
    types: ReadonlyMap<string, FieldSpec> | undefined,
    private readonly now: number,
    private readonly limits: QueryLimits | undefined,
    scope?: string,
  ) {
    this.clauses = limits && new ClauseBudget(limits.maxClauseCount)
    this.types = types && inScope(types, scope)
  }

  /**
   * `nested`: its query tested on each object of the path, a document holding the path's fields
   * alone; the names inside it are not the root document's (OpenSearch reports them in inner hits).
   */
  private nested(body: unknown): NamedTest {
    const q = parseNestedQuery(body)
    if (this.limits) checkNestedDepth(++this.nestedDepth, this.limits.maxNestedDepth)
    const refused = joiningRefusal(this.limits)
    if (refused) throw refused
    const outer = this.types
    const names = this.named.length
    // OpenSearch parses the whole query (its depth limit included) before it looks the path up.
    this.types = outer && scopedSpecs(outer, q.path)
    const inner = this.node(q.query)
    this.types = outer
    this.named.length = names
    this.nestedDepth--
    if (outer && !checkNestedPath(outer, q)) return { test: never, name: q.name }
    return { test: (d) => nestedDocs(d, q.path).some(inner), name: q.name }
  }

  node(q: unknown): Test {
    if (!isObject(q)) throw new ParsingError('query malformed, must start with start_object')
    const keys = Object.keys(q)
    if (keys.length !== 1)
      throw new ParsingError(
        keys.length === 0
          ? 'query malformed, empty clause found'
          : `[${keys[0]}] malformed query, expected [END_OBJECT] but found [FIELD_NAME]`,
      )
    const type = keys[0]
    const body = q[type]
    // Lucene counts leaf queries towards maxClauseCount, not the compound ones holding them.
    if (!COMPOUND.has(type)) this.clauses?.spend(1)
    const unknown = analyzerRefusal(type, body, this.limits)
    if (unknown) throw unknown
    const { test, name } = this.compound(type, body) ?? this.fieldQuery(type, body)
    if (name !== undefined) this.named.push({ name, test })
    return test
  }

  /** The queries that hold other queries, or none of a field (undefined: another kind). */
  private compound(type: string, body: unknown): NamedTest | undefined {
    switch (type) {
      case 'match_all':
        return { test: always, name: nameOf(body) }
      case 'match_none':
        return { test: never, name: nameOf(body) }
      case 'bool':
        return this.bool(body)
      case 'constant_score': {
        if (!isObject(body) || body.filter === undefined) throw new ParsingError("[constant_score] requires a 'filter' element")
        return { test: this.node(body.filter), name: nameOf(body) }
      }
      case 'nested':
        return this.nested(body)
      case 'dis_max': {
        if (!isObject(body)) throw new ParsingError('[dis_max] malformed')
        const qs = clauses(body.queries).map((x) => this.node(x))
        return { test: anyOf(qs), name: nameOf(body) }
      }
      case 'ids': {
        if (!isObject(body)) throw new ParsingError('[ids] query malformed')
        const ids = new Set(clauses(body.values).map(String))
        return { test: (d) => d.id !== undefined && ids.has(d.id), name: nameOf(body) }
      }
      case 'query_string':
      case 'simple_query_string': {
        const q = translateQueryString(body, type === 'simple_query_string', (p) => this.expandFields(p))
        this.queryStrings++
        try {
          return { test: this.node(q), name: nameOf(body) }
        } finally {
          this.queryStrings--
        }
      }
      case 'function_score': {
        // Scores are constant here: a function_score matches what its query (and filters) match.
        if (!isObject(body)) throw new ParsingError('[function_score] malformed query')
        if (body.functions !== undefined && !Array.isArray(body.functions))
          throw new ParsingError('[function_score] [functions] must be an array')
        return { test: body.query === undefined ? always : this.node(body.query), name: nameOf(body) }
      }
      case 'boosting': {
        if (!isObject(body) || body.positive === undefined || body.negative === undefined)
          throw new ParsingError('[boosting] query requires [positive] and [negative]')
        this.node(body.negative)
        return { test: this.node(body.positive), name: nameOf(body) }
      }
      default:
        return undefined
    }
  }

  /** The queries on one field (or a few, for multi_match). */
  private fieldQuery(type: string, body: unknown): NamedTest {
    switch (type) {
      case 'exists': {
        if (!isObject(body) || typeof body.field !== 'string') throw new ParsingError('[exists] must be provided with a [field]')
        return { test: this.exists(body.field), name: nameOf(body) }
      }
      case 'term':
      case 'terms':
      case 'prefix':
      case 'wildcard':
      case 'regexp':
      case 'range':
      case 'match':
      case 'match_phrase':
      case 'match_phrase_prefix':
      case 'match_bool_prefix': {
        const parts = type === 'terms' ? termsParts(body) : leafParts(type, body, type.startsWith('match') ? 'query' : 'value')
        const field = this.field(parts.field)
        return { test: field === undefined ? never : this.leaf(type, field, parts.params), name: parts.name }
      }
      // Private Sigma nodes (the platform adapter translates them, see src/store/platform/private-nodes.ts).
      case '_fieldref': {
        const parts = leafParts(type, body, 'ref')
        return { test: this.fieldref(parts.field, parts.params), name: parts.name }
      }
      case '_cidr': {
        const parts = leafParts(type, body)
        const field = this.field(parts.field)
        const inNet = cidrMatcher(requireString('_cidr', parts.params.value))
        if (!inNet) throw new ParsingError(`[_cidr] [${String(parts.params.value)}] is not an IP network`)
        return { test: field === undefined ? never : (d) => field.raw(d).some(inNet), name: parts.name }
      }
      case 'multi_match':
        return this.multiMatch(body)
      case 'combined_fields': {
        const q = parseCombinedFields(body, this.types, (p) => this.expandFields(p), minimumShouldMatch)
        return { test: combinedTest(q), name: q.name }
      }
      case 'fuzzy': {
        const parts = leafParts(type, body, 'value')
        const field = this.field(parts.field)
        return { test: field === undefined ? never : this.fuzzy(field, parts.params), name: parts.name }
      }
      case 'geo_distance':
      case 'geo_bounding_box':
        return this.geoQuery(type, body)
      case 'intervals': {
        const q = compileIntervals(body, this.types, this.limits)
        return { test: q.test, name: q.name }
      }
      default:
        throw new ParsingError(`unknown query [${type}]`)
    }
  }

  private multiMatch(body: unknown): NamedTest {
    if (!isObject(body) || body.query === undefined) throw new ParsingError('[multi_match] requires query')
    const given = body.fields === undefined ? ['*'] : clauses(body.fields).map((f) => String(f).replace(/\^[\d.]+$/, ''))
    const kind = String(body.type ?? 'best_fields')
    const leafType =
      kind === 'phrase'
        ? 'match_phrase'
        : kind === 'phrase_prefix'
          ? 'match_phrase_prefix'
          : kind === 'bool_prefix'
            ? 'match_bool_prefix'
            : 'match'
    if (!['best_fields', 'most_fields', 'cross_fields', 'phrase', 'phrase_prefix', 'bool_prefix'].includes(kind))
      throw new ParsingError(`failed to parse [multi_match] query type [${kind}]. unknown type.`)
    if (kind === 'bool_prefix')
      for (const k of ['slop', 'cutoff_frequency'])
        if (body[k] !== undefined) throw new ParsingError(`[${k}] not allowed for type [bool_prefix]`)
    const fields = given.flatMap((f) => (f.includes('*') ? this.expandFields(f).map((x) => x.name) : [f]))
    // Over all fields (`*`, the default) a query is lenient unless told otherwise, as OpenSearch's.
    const p = given.includes('*') && body.lenient === undefined ? { ...body, lenient: true } : body
    const test = anyOf(
      fields.map((f) => {
        const field = this.field(f)
        return field === undefined ? never : this.leaf(leafType, field, p)
      }),
    )
    return { test, name: nameOf(body) }
  }

  private geoQuery(type: 'geo_distance' | 'geo_bounding_box', body: unknown): NamedTest {
    if (type === 'geo_distance') {
      const g = parseGeoDistance(body)
      const path = this.geoPath(g.field, g.ignoreUnmapped, 'geo_distance')
      // OpenSearch's query measures arcs whatever `distance_type` says (Lucene's distance query): so here.
      const test: Test =
        path === undefined
          ? never
          : (d) => rawValuesAt(d.source, path).some((v) => geoPointsOf(v).some((p) => arcDistance(g.center, p) <= g.meters))
      return { test, name: g.name }
    }
    const g = parseGeoBoundingBox(body)
    const path = this.geoPath(g.field, g.ignoreUnmapped, 'geo_bounding_box')
    const test: Test = path === undefined ? never : (d) => rawValuesAt(d.source, path).some((v) => geoPointsOf(v).some((p) => inBox(p, g)))
    return { test, name: g.name }
  }

  /** The source path of a geo_point field; undefined = unmapped with ignore_unmapped (matches nothing). */
  private geoPath(field: string, ignoreUnmapped: boolean, query: string): string | undefined {
    if (!this.types) return field
    const spec = this.types.get(field)
    if (spec === undefined) {
      if (ignoreUnmapped) return undefined
      throw new QueryShardError(`failed to find geo_point field [${field}]`)
    }
    if (spec.type !== 'geo_point') throw new QueryShardError(`field [${field}] is not a geo_point field`)
    return spec.path ?? field
  }

  /** Mapped fields a name or `*` pattern covers, with how each is queried (query_string, multi_match). */
  expandFields(pattern: string): QueryableField[] {
    if (!this.types) return pattern.includes('*') ? [] : [{ name: pattern, kind: 'auto' }]
    return expandFieldPattern(this.types, pattern)
  }

  private fuzzy(f: Field, given: Record<string, unknown>): Test {
    const p = this.admit('fuzzy', f, given)
    if (p === undefined) return never
    if (p.value === undefined || p.value === null || isObject(p.value)) throw new ParsingError('[fuzzy] query requires a value')
    const value = String(p.value)
    const max = fuzzyEdits(p.fuzziness, value)
    const prefix = p.prefix_length === undefined ? 0 : Number(p.prefix_length)
    const head = [...value].slice(0, prefix).join('')
    const transpositions = p.transpositions !== false
    return this.strings(f, false, (s) => s.startsWith(head) && editDistanceWithin(s, value, max, transpositions))
  }

  private bool(body: unknown): { test: Test; name?: string } {
    if (!isObject(body)) throw new ParsingError('[bool] query malformed')
    for (const k of Object.keys(body))
      if (!['must', 'filter', 'should', 'must_not', 'minimum_should_match', 'boost', '_name', 'adjust_pure_negative'].includes(k))
        throw new ParsingError(`[bool] query does not support [${k}]`)
    const mustIn = [...clauses(body.must), ...clauses(body.filter)]
    const shouldIn = clauses(body.should)
    const mustNotIn = clauses(body.must_not)
    this.clauses?.bool(mustIn.length + shouldIn.length + mustNotIn.length)
    const defaultMsm = shouldIn.length > 0 && mustIn.length === 0 ? 1 : 0
    const msm = body.minimum_should_match === undefined ? defaultMsm : minimumShouldMatch(body.minimum_should_match, shouldIn.length)
    // Any one of them: the literal leaves on one field become one test (a Sigma list of thousands
    // of hashes is otherwise thousands of closures, tried one by one). Not under limits: a
    // caller's search counts and bounds each clause it wrote.
    // Compiled in OpenSearch's order (must, must_not, should, filter), so the first error is its.
    const mustOnly = clauses(body.must).map((x) => this.node(x))
    const mustNot = mustNotIn.map((x) => this.node(x))
    const should = msm === 1 && !this.limits ? this.anyOf(shouldIn) : shouldIn.map((x) => this.node(x))
    const must = [...mustOnly, ...clauses(body.filter).map((x) => this.node(x))]
    if (msm > shouldIn.length) return { test: never, name: nameOf(body) }
    const test: Test = (d) => {
      for (const t of must) if (!t(d)) return false
      for (const t of mustNot) if (t(d)) return false
      if (msm > 0) {
        let hits = 0
        for (let i = 0; i < should.length; i++) {
          if (should[i](d) && ++hits >= msm) return true
          if (hits + should.length - i - 1 < msm) return false
        }
        return false
      }
      return true
    }
    return { test, name: nameOf(body) }
  }

  /**
   * An any-of's clauses (minimum_should_match 1): the leaves comparing a keyword field with a
   * literal as one test per field and case sensitivity (literal-groups.ts), the clauses of an
   * any-of inside taken in, the rest compiled as they are. A named clause taken in is still
   * compiled once, for its name (matchedNames); `registered`: its names are already.
   */
  private anyOf(clauses: unknown[]): Test[] {
    const groups = new Map<string, { f: Field; ci: boolean; leaves: LiteralLeaf[] }>()
    const rest: Test[] = []
    const take = (list: unknown[], registered: boolean) => {
      for (const c of list) {
        const leaf = literalLeaf(c)
        const f = leaf && this.field(leaf.field)
        // A normalized field's literals are left to leaf(), which normalizes them.
        if (leaf && f && (f.kind === 'keyword' || f.kind === 'auto') && !normalizerOf(this.types?.get(leaf.field))) {
          if (!registered && leaf.name !== undefined) this.node(c)
          const key = `${leaf.ci}\u0000${leaf.field}`
          const g = groups.get(key) ?? groups.set(key, { f, ci: leaf.ci, leaves: [] }).get(key)!
          g.leaves.push(leaf)
          continue
        }
        const inner = anyOfClauses(c)
        if (inner) {
          if (!registered && inner.name !== undefined) this.node(c)
          take(inner.clauses, registered || inner.name !== undefined)
          continue
        }
        rest.push(registered ? this.unnamed(c) : this.node(c))
      }
    }
    take(clauses, false)
    return [...[...groups.values()].map((g) => this.strings(g.f, g.ci, groupMatcher(g.leaves, g.ci))), ...rest]
  }

  /** `q` compiled without registering its names (they were, by an enclosing clause). */
  private unnamed(q: unknown): Test {
    const n = this.named.length
    const test = this.node(q)
    this.named.length = n
    return test
  }

  /** Fields resolved so far: a rule's leaves name a few fields many times (5 closures each). */
  private readonly fields = new Map<string, Field | undefined>()

  /** Resolve a field name to how it is read; undefined = unmapped in a mapped index (matches nothing). */
  field(name: string): Field | undefined {
    if (this.fields.has(name)) return this.fields.get(name)
    const f = this.resolveField(name)
    const norm = f && normalizerOf(this.types?.get(name))
    const g: Field | undefined = f && norm ? normalizedField(f, norm) : f
    this.fields.set(name, g)
    return g
  }

  private resolveField(name: string): Field | undefined {
    if (name === '_id' || name === '_index') {
      const get =
        name === '_id' ? (d: DocView) => (d.id === undefined ? [] : [d.id]) : (d: DocView) => (d.index === undefined ? [] : [d.index])
      return { name, kind: 'keyword', raw: get, keywords: get, folded: (d) => get(d).map(fold), tokens: get }
    }
    if (name === '_ignored' && this.types instanceof Map) {
      const types = this.types
      const get = (d: DocView) => ignoredFields(d.source, types)
      return { name, kind: 'keyword', raw: get, keywords: get, folded: (d) => get(d).map(fold), tokens: get }
    }
    let spec: FieldSpec | undefined
    let path = name
    if (this.types) {
      spec = this.types.get(name)
      // A path below a flat_object is no mapping: its leaves there are keywords.
      if (spec === undefined) return flatObjectRoot(this.types, name) === undefined ? undefined : keywordField(name, fieldPath(name))
      if (spec.type === FLAT_OBJECT) return keywordField(name, flatLeavesPath(name))
      path = spec.path ?? name
    } else if (name.endsWith('.keyword')) {
      // Without a mapping, `x.keyword` is the dynamic keyword sub-field of `x` when the document has no such key.
      const fp = fieldPath(name)
      const parent = fieldPath(name.slice(0, -'.keyword'.length))
      const pick = (d: DocView) => (fp.collect(d.source).length > 0 ? fp : parent)
      return {
        name,
        kind: 'auto',
        raw: (d) => d.values(pick(d)),
        keywords: (d) => d.keywords(pick(d)),
        folded: (d) => d.folded(pick(d)),
        tokens: (d) => d.tokens(pick(d)),
      }
    }
    const fp = fieldPath(path)
    const kind: Kind = spec ? kindOf(spec.type) : 'auto'
    const limit = spec?.ignore_above
    if (limit !== undefined && kind === 'keyword') {
      // Values longer than ignore_above are not indexed: no query sees them. Nearly every value
      // fits, and then the document's own arrays are answered: no copy (and no closure) made
      // per leaf and event, which a thousand rules' leaves did on every event.
      const fits = (xs: readonly unknown[]) => {
        for (const x of xs) if (typeof x === 'string' && x.length > limit) return false
        return true
      }
      const fit = (xs: string[]) => (fits(xs) ? xs : xs.filter((x) => x.length <= limit))
      return {
        name,
        kind,
        raw: (d) => {
          const raw = d.values(fp)
          return fits(raw) ? raw : raw.filter((v) => typeof v !== 'string' || v.length <= limit)
        },
        keywords: (d) => fit(d.keywords(fp)),
        folded: (d) => {
          const k = d.keywords(fp)
          const f = d.folded(fp)
          return fits(k) ? f : fitting(f, k, limit)
        },
        tokens: (d) => fit(d.keywords(fp)),
      }
    }
    return { ...keywordField(name, fp), kind, format: spec?.format }
  }

  /**
   * Sigma `fieldref`: a value of `field` equals (or contains, starts or ends with) a value of the
   * `ref` field of the same document; both compared as keyword text, folded when case-insensitive.
   */
  private fieldref(name: string, p: Record<string, unknown>): Test {
    const ref = requireString('_fieldref', p.ref)
    const mode = p.mode ?? 'equals'
    if (!['equals', 'contains', 'startswith', 'endswith'].includes(String(mode)))
      throw new ParsingError(`[_fieldref] unknown mode [${String(mode)}]`)
    const f = this.field(name)
    const g = this.field(ref)
    if (f === undefined || g === undefined) return never
    const ci = p.case_insensitive === true
    // The field's keyword texts (folded), as the document's views cache them for every rule.
    const texts = (field: Field, d: DocView) => (ci ? field.folded(d) : field.keywords(d))
    const holds =
      mode === 'contains'
        ? (a: string, b: string) => a.includes(b)
        : mode === 'startswith'
          ? (a: string, b: string) => a.startsWith(b)
          : mode === 'endswith'
            ? (a: string, b: string) => a.endsWith(b)
            : (a: string, b: string) => a === b
    return (d) => {
      const refs = texts(g, d)
      if (refs.length === 0) return false
      for (const a of texts(f, d)) for (const b of refs) if (holds(a, b)) return true
      return false
    }
  }

  private exists(name: string): Test {
    // Every document has these metadata fields; `_source` is stored, not indexed.
    if (name === '_seq_no' || name === '_version' || name === '_primary_term') return always
    if (name === '_source') throw new QueryShardError('The _source field is not searchable')
    const f = this.field(name)
    if (f !== undefined && !searchable(name, this.types?.get(name))) return never
    if (f === undefined) {
      // An object field in a mapping exists when any of its sub-fields does.
      if (!this.types) return never
      const subs = [...this.types.keys()].filter((k) => k.startsWith(`${name}.`) && !this.types!.get(k)!.path)
      return anyOf(subs.map((s) => this.exists(s)))
    }
    // A geo_point ({lat, lon}, an array or a string) has no keyword values but is there all the same.
    if (f.kind === 'keyword' && this.types?.get(name)?.type !== 'geo_point') return (d) => f.keywords(d).length > 0
    return (d) => {
      for (const v of f.raw(d)) if (!isObject(v) || hasLeaf(v)) return true
      return false
    }
  }

  private leaf(type: string, f: Field, given: Record<string, unknown>): Test {
    const p = this.admit(type, f, given)
    if (p === undefined) return never
    const ci = toBool(p.case_insensitive) === true
    switch (type) {
      case 'term':
        if (!('value' in p)) throw new ParsingError('[term] query requires a value')
        return this.term(f, p.value, ci)
      case 'terms': {
        const values = p.value as unknown[]
        if (f.kind === 'keyword' || f.kind === 'auto') {
          const set = new Set<string>()
          for (const v of values) {
            const k = keywordOf(v)
            if (k !== undefined) set.add(k)
          }
          return (d) => {
            for (const k of f.keywords(d)) if (set.has(k)) return true
            return false
          }
        }
        return anyOf(values.map((v) => this.term(f, v, false)))
      }
      case 'prefix': {
        const value = requireString('prefix', p.value)
        const pre = ci ? fold(value) : value
        return this.strings(f, ci, (s) => s.startsWith(pre))
      }
      case 'wildcard': {
        const value = requireString('wildcard', p.value ?? p.wildcard)
        return this.strings(f, ci, this.termSized(wildcardMatcher(value, ci)))
      }
      case 'regexp':
        return this.regexp(f, p, ci)
      case 'range':
        return this.range(f, p)
      case 'match':
      case 'match_bool_prefix':
        return this.match(f, p, type === 'match_bool_prefix')
      case 'match_phrase':
        return this.phrase(f, p)
      case 'match_phrase_prefix':
        return this.phrase(f, p, true)
    }
    throw new ParsingError(`unknown query [${type}]`)
  }

  /**
   * A query on a mapped field as the field takes it: refused as OpenSearch refuses it (in a
   * query_string, and in rule evaluation, the query matches nothing: undefined), its values
   * normalized by the field's normalizer.
   */
  private admit(type: string, f: Field, p: Record<string, unknown>): Record<string, unknown> | undefined {
    const spec = this.types?.get(f.name)
    if (spec === undefined) return p
    const refused = refusal(type, f.name, spec, p, this.limits)
    if (refused) {
      if (this.queryStrings > 0 || !this.limits) return undefined
      throw refused
    }
    return normalizedParams(type, spec, p)
  }

  /**
   * Lucene indexes no term longer than 32,766 UTF-8 bytes (OpenSearch refuses such a document), so
   * a caller's pattern query never runs over one there. Here such values are stored, and in a
   * caller's search (limits set) they are not pattern-matched either: the cost of one regexp or
   * wildcard on one value stays bounded. Rule evaluation (no limits) still sees every value.
   */
  private termSized(m: StringMatcher): StringMatcher {
    if (!this.limits) return m
    // UTF-8 takes at least one byte per UTF-16 unit and at most three.
    return (s) => (s.length <= MAX_TERM_BYTES / 3 || (s.length <= MAX_TERM_BYTES && Buffer.byteLength(s) <= MAX_TERM_BYTES)) && m(s)
  }

  private strings(f: Field, ci: boolean, m: StringMatcher): Test {
    if (f.kind === 'text') {
      return ci
        ? (d) => {
            for (const t of f.tokens(d)) if (m(fold(t))) return true
            return false
          }
        : (d) => {
            for (const t of f.tokens(d)) if (m(t)) return true
            return false
          }
    }
    return (d) => {
      for (const s of ci ? f.folded(d) : f.keywords(d)) if (m(s)) return true
      return false
    }
  }

  private regexp(f: Field, p: Record<string, unknown>, ci: boolean): Test {
    const pcre = p._pcre
    if (isObject(pcre)) {
      // Sigma's original PCRE pattern, with search (substring) semantics and its i/m/s flags.
      if (typeof pcre.pattern !== 'string') throw new ParsingError('[regexp] _pcre.pattern must be a string')
      if (this.limits) checkRegexLength(pcre.pattern, this.limits.maxRegexLength)
      const flags = String(pcre.flags ?? '')
      const re = linearRegExp(fromJavaScript(pcre.pattern), {
        anchored: false,
        caseInsensitive: ci || flags.includes('i'),
        multiline: flags.includes('m'),
        dotAll: flags.includes('s'),
        display: pcre.pattern,
      })
      const test = this.termSized((s) => re.test(s))
      const branches = f.kind === 'text' ? undefined : requiredLiteralSets(pcre.pattern)?.map((sets) => sets.map((set) => set.map(fold)))
      if (branches === undefined) return this.strings(f, false, test)
      // The regex engine runs only on a value holding the literals it cannot match without, all
      // of them for one branch (the folded value, already made for the rules' case-insensitive leaves).
      return (d) => {
        const folded = f.folded(d)
        let keywords: string[] | undefined
        for (let i = 0; i < folded.length; i++) if (meetsOne(folded[i], branches) && test((keywords ??= f.keywords(d))[i])) return true
        return false
      }
    }
    const value = requireString('regexp', p.value)
    if (this.limits) checkRegexLength(value, this.limits.maxRegexLength)
    const re = luceneRegExp(value, typeof p.flags === 'string' ? p.flags : 'ALL', ci)
    return this.strings(
      f,
      false,
      this.termSized((s) => re.test(s)),
    )
  }

  private term(f: Field, value: unknown, ci: boolean): Test {
    if (value === null || value === undefined || isObject(value) || Array.isArray(value))
      throw new ParsingError('[term] query does not support array or object values')
    switch (f.kind) {
      case 'text': {
        const t = ci ? fold(String(value)) : String(value)
        return (d) => (ci ? f.tokens(d).some((x) => fold(x) === t) : f.tokens(d).includes(t))
      }
      case 'number': {
        const n = toNumber(value)
        if (n === undefined) return never
        return (d) => f.raw(d).some((v) => toNumber(v) === n)
      }
      case 'date': {
        // As OpenSearch reads a term on a date: every instant the value names (`2024-04-02`: the day).
        const lo = parseDateMath(value, false, this.now, f.format)
        const hi = parseDateMath(value, true, this.now, f.format)
        return (d) =>
          f.raw(d).some((v) => {
            const ms = parseDate(v, f.format)
            return ms !== undefined && ms >= lo && ms <= hi
          })
      }
      case 'boolean': {
        const b = toBool(value)
        if (b === undefined) return never
        return (d) => f.raw(d).some((v) => toBool(v) === b)
      }
      case 'ip': {
        const inNet = cidrMatcher(String(value))
        if (!inNet) return never
        return (d) => f.raw(d).some(inNet)
      }
      case 'object':
        return never
      case 'keyword':
      case 'auto': {
        const k = keywordOf(value)!
        if (ci) {
          const fk = fold(k)
          return (d) => f.folded(d).includes(fk)
        }
        if (f.kind === 'auto' && typeof value === 'number') {
          // Dynamic typing: a numeric value compares numerically with numbers, as keyword with strings.
          return (d) => f.raw(d).some((v) => (typeof v === 'number' ? v === value : keywordOf(v) === k))
        }
        return (d) => f.keywords(d).includes(k)
      }
    }
  }

  private range(f: Field, p: Record<string, unknown>): Test {
    let { gt, gte, lt, lte } = p as Record<string, unknown>
    if ('from' in p || 'to' in p) {
      const incLo = p.include_lower !== false
      const incHi = p.include_upper !== false
      if (p.from !== undefined && p.from !== null) incLo ? (gte = p.from) : (gt = p.from)
      if (p.to !== undefined && p.to !== null) incHi ? (lte = p.to) : (lt = p.to)
    }
    const format = typeof p.format === 'string' ? p.format : f.format
    const zone = rangeZone(p)
    const bounds = { gt, gte, lt, lte }
    for (const [k, v] of Object.entries(bounds)) if (v === null) delete (bounds as Record<string, unknown>)[k]

    const numeric = mapBounds(bounds, (v) => toNumber(v))
    const dates = mapBounds(bounds, (v, up) => {
      try {
        return parseDateMath(v, up, this.now, format, zone)
      } catch {
        return undefined
      }
    })
    const strings = mapBounds(bounds, (v) => keywordOf(v))
    const numCmp = (a: number, b: number) => a - b

    switch (f.kind) {
      case 'number':
        if (!numeric) throw new ParsingError('[range] bounds of a numeric field must be numbers')
        return (d) => f.raw(d).some((v) => inRange(toNumber(v), numeric, numCmp))
      case 'date':
        if (!dates) throw new ParsingError('[range] failed to parse date bounds')
        // `format` reads the bounds; the documents' values are read as the mapping says (as indexed).
        return (d) => f.raw(d).some((v) => inRange(parseDate(v, f.format), dates, numCmp))
      case 'ip': {
        const ips = mapBounds(bounds, (v) => (typeof v === 'string' ? parseIp(v) : undefined))
        if (!ips) throw new ParsingError('[range] bounds of an ip field must be addresses')
        const cmp = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0)
        return (d) => f.raw(d).some((v) => inRange(typeof v === 'string' ? parseIp(v) : undefined, ips, cmp))
      }
      case 'boolean': {
        const bools = mapBounds(bounds, (v) => {
          const b = toBool(v)
          return b === undefined ? undefined : Number(b)
        })
        if (!bools) return never
        return (d) =>
          f.raw(d).some((v) => {
            const b = toBool(v)
            return b !== undefined && inRange(Number(b), bools, numCmp)
          })
      }
      case 'object':
        return never
      case 'text':
        if (!strings) return never
        return (d) => f.tokens(d).some((t) => inRange(t, strings, compareCodePoints))
      case 'keyword':
        if (!strings) return never
        return (d) => f.keywords(d).some((s) => inRange(s, strings, compareCodePoints))
      case 'auto':
        return (d) =>
          f.raw(d).some((v) => {
            if (typeof v === 'number') return numeric !== undefined && inRange(v, numeric, numCmp)
            if (typeof v !== 'string') return false
            if (numeric) {
              const n = toNumber(v)
              if (n !== undefined) return inRange(n, numeric, numCmp)
            }
            if (dates && !numeric) {
              const ms = parseDate(v, format)
              if (ms !== undefined) return inRange(ms, dates, numCmp)
            }
            return strings !== undefined && inRange(v, strings, compareCodePoints)
          })
    }
  }

  /** `match`, or `match_bool_prefix` (`prefixLast`: the last analysed term matches as a prefix, never fuzzily). */
  private match(f: Field, p: Record<string, unknown>, prefixLast = false): Test {
    const query = p.query
    if (query === undefined || query === null || isObject(query)) throw new ParsingError('[match] requires query value')
    if (f.kind !== 'text' && f.kind !== 'auto') {
      if (f.kind === 'keyword') {
        // A keyword is one term: match_bool_prefix makes it a prefix query.
        const k = keywordOf(query)!
        return prefixLast ? this.strings(f, false, (s) => s.startsWith(k)) : (d) => f.keywords(d).includes(k)
      }
      if (p.lenient !== true && p.lenient !== 'true') return this.term(f, query, false)
      // Lenient (a multi_match over `*`): a value the field cannot read matches nothing there.
      try {
        return this.term(f, query, false)
      } catch {
        return never
      }
    }
    const qt = queryTerms(p.analyzer, this.limits?.analysis)(String(query))
    if (qt.length === 0) return p.zero_terms_query === 'all' ? always : never
    const and = String(p.operator ?? 'or').toLowerCase() === 'and'
    const need = and
      ? qt.length
      : p.minimum_should_match === undefined
        ? 1
        : Math.max(1, minimumShouldMatch(p.minimum_should_match, qt.length))
    if (p.fuzziness !== undefined || prefixLast) {
      // Each query term matches a token within its edit distance (its first prefix_length characters exact).
      const prefix = Number(p.prefix_length ?? 0)
      const transpositions = p.fuzzy_transpositions !== false
      const near = qt.map((q, i) => {
        if (prefixLast && i === qt.length - 1) return (t: string) => t.startsWith(q)
        if (p.fuzziness === undefined) return (t: string) => t === q
        const max = fuzzyEdits(p.fuzziness, q)
        const head = q.slice(0, prefix)
        return (t: string) => t === q || (t.startsWith(head) && editDistanceWithin(t, q, max, transpositions))
      })
      return (d) => hitsAtLeast(f.tokens(d), near, need)
    }
    const exact = qt.map((t) => (token: string) => token === t)
    return (d) => hitsAtLeast(f.tokens(d), exact, need)
  }

  /** `match_phrase`, or `match_phrase_prefix` (`prefixLast`: the last analysed term matches as a prefix). */
  private phrase(f: Field, p: Record<string, unknown>, prefixLast = false): Test {
    const query = p.query
    if (query === undefined || query === null || isObject(query)) throw new ParsingError('[match_phrase] requires query value')
    if (f.kind !== 'text' && f.kind !== 'auto') {
      if (!prefixLast) return this.match(f, p)
      // Lucene indexes no positions there; a lenient query matches nothing instead.
      if (p.lenient === true) return never
      const type = this.types?.get(f.name)?.type ?? f.kind
      throw new QueryShardError(
        `failed to create query: Can only use phrase prefix queries on text fields - not on [${f.name}] which is of type [${type}]`,
      )
    }
    const qt = queryTerms(p.analyzer, this.limits?.analysis)(String(query))
    if (qt.length === 0) return p.zero_terms_query === 'all' ? always : never
    const slop = Number(p.slop ?? 0)
    if (!Number.isInteger(slop) || slop < 0)
      throw new ParsingError(`[match_phrase] slop must be a non-negative integer, found [${String(p.slop)}]`)
    const last = qt.length - 1
    const at = (token: string, j: number) => (prefixLast && j === last ? token.startsWith(qt[j]) : token === qt[j])
    return (d) =>
      f.raw(d).some((v) => {
        const k = keywordOf(v)
        if (k === undefined) return false
        const tokens = analyze(k)
        if (slop > 0) return withinSlop(tokens, qt.length, at, slop)
        outer: for (let i = 0; i + qt.length <= tokens.length; i++) {
          for (let j = 0; j < qt.length; j++) if (!at(tokens[i + j], j)) continue outer
          return true
        }
        return false
      })
  }
}

/**
 * A sloppy phrase, as Lucene measures it: one position per query term such that the spread of
 * (position - term index) is at most `slop` (the moves needed to line the terms up). The smallest
 * spread over all choices is found by a sweep over the terms' sorted position lists.
 */
function withinSlop(tokens: string[], terms: number, matches: (token: string, term: number) => boolean, slop: number): boolean {
  const lists = Array.from({ length: terms }, (_, i) => {
    const out: number[] = []
    tokens.forEach((x, p) => {
      if (matches(x, i)) out.push(p - i)
    })
    return out
  })
  if (lists.some((l) => l.length === 0)) return false
  const at = lists.map(() => 0)
  for (;;) {
    let lo = 0
    let max = -Infinity
    for (let i = 0; i < lists.length; i++) {
      const v = lists[i][at[i]]
      if (v < lists[lo][at[lo]]) lo = i
      if (v > max) max = v
    }
    if (max - lists[lo][at[lo]] <= slop) return true
    if (++at[lo] >= lists[lo].length) return false
  }
}

const MAX_TERM_BYTES = 32_766

function nameOf(body: unknown): string | undefined {
  return isObject(body) && typeof body._name === 'string' ? body._name : undefined
}

function termsParts(body: unknown): { field: string; params: Record<string, unknown>; name?: string } {
  if (!isObject(body)) throw new ParsingError('[terms] query malformed')
  let field: string | undefined
  let values: unknown[] | undefined
  for (const [k, v] of Object.entries(body)) {
    if (k === '_name' || k === 'boost' || k === 'value_type') continue
    if (field !== undefined) throw new ParsingError(`[terms] query does not support multiple fields, found [${field}] and [${k}]`)
    field = k
    if (!Array.isArray(v)) throw new ParsingError(isObject(v) ? '[terms] lookup is not supported' : `[terms] query does not support [${k}]`)
    values = v
  }
  if (field === undefined) throw new ParsingError('[terms] query requires a field')
  return { field, params: { value: values }, name: nameOf(body) }
}

function requireString(q: string, v: unknown): string {
  if (typeof v === 'string') return v
  if (typeof v === 'number' || typeof v === 'boolean') return String(v)
  throw new ParsingError(`[${q}] query requires a value`)
}

function containsOneOf(value: string, literals: string[]): boolean {
  for (const l of literals) if (value.includes(l)) return true
  return false
}

/** Whether `value` holds one literal of every set of one of the branches (see requiredLiteralSets). */
function meetsOne(value: string, branches: string[][][]): boolean {
  for (const sets of branches) if (sets.every((set) => containsOneOf(value, set))) return true
  return false
}

function anyOf(tests: Test[]): Test {
  if (tests.length === 0) return never
  if (tests.length === 1) return tests[0]
  return (d) => {
    for (const t of tests) if (t(d)) return true
    return false
  }
}

function hasLeaf(o: unknown): boolean {
  if (Array.isArray(o)) return o.some(hasLeaf)
  if (isObject(o)) return Object.values(o).some(hasLeaf)
  return o !== null && o !== undefined
}

interface Bounds<T> {
  gt?: T
  gte?: T
  lt?: T
  lte?: T
}

function mapBounds<T>(b: Bounds<unknown>, f: (v: unknown, roundUp: boolean) => T | undefined): Bounds<T> | undefined {
  const out: Bounds<T> = {}
  for (const k of ['gt', 'gte', 'lt', 'lte'] as const) {
    if (b[k] === undefined) continue
    const v = f(b[k], k === 'gt' || k === 'lte')
    if (v === undefined) return undefined
    out[k] = v
  }
  return out
}

function inRange<T>(v: T | undefined, b: Bounds<T>, cmp: (a: T, b: T) => number): boolean {
  if (v === undefined) return false
  if (b.gt !== undefined && !(cmp(v, b.gt) > 0)) return false
  if (b.gte !== undefined && !(cmp(v, b.gte) >= 0)) return false
  if (b.lt !== undefined && !(cmp(v, b.lt) < 0)) return false
  if (b.lte !== undefined && !(cmp(v, b.lte) <= 0)) return false
  return true
}

/** `2`, `-1`, `"75%"`, `"-25%"` against `n` optional clauses (OpenSearch rounds percentages down). */
export function minimumShouldMatch(spec: unknown, n: number): number {
  const s = String(spec).trim()
  let v: number
  if (s.endsWith('%')) {
    const pct = Number(s.slice(0, -1))
    if (!Number.isFinite(pct)) throw new ParsingError(`[bool] invalid minimum_should_match [${s}]`)
    v = Math.trunc((n * pct) / 100)
    v = pct < 0 ? n + v : v
  } else {
    const k = Number(s)
    if (!Number.isInteger(k)) throw new ParsingError(`[bool] invalid minimum_should_match [${s}]`)
    v = k < 0 ? n + k : k
  }
  return Math.max(0, v)
}

/** The fields a name or `*` pattern stands for (objects left out), as query_string and scoring expand them. */
export function expandFieldPattern(types: ReadonlyMap<string, FieldSpec>, pattern: string): QueryableField[] {
  if (!pattern.includes('*')) {
    const spec = types.get(pattern)
    return spec ? [{ name: pattern, kind: kindOf(spec.type) }] : []
  }
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map((x) => x.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  )
  // An alias stands for its field, once (OpenSearch resolves a pattern's names to their fields' names).
  const named = new Map<string, QueryableField>()
  for (const [n, s] of types)
    if (re.test(n) && kindOf(s.type) !== 'object') named.set(s.alias ?? n, { name: s.alias ?? n, kind: kindOf(s.type) })
  return [...named.values()]
}

/** Whether at least `need` of the matchers match some token. */
function hitsAtLeast(tokens: string[], matchers: Array<(token: string) => boolean>, need: number): boolean {
  if (tokens.length === 0) return false
  let hits = 0
  for (const m of matchers) if (tokens.some(m) && ++hits >= need) return true
  return false
}

/** A range's `time_zone` (undefined: UTC); one that names no zone is refused as OpenSearch refuses it (400, illegal_argument_exception). */
export function rangeZone(p: Record<string, unknown>): Zone | undefined {
  if (p.time_zone === undefined || p.time_zone === null) return undefined
  return zoneOf(String(p.time_zone))
}

/**
 * Sigma rule -> one query-DSL tree. The same tree is sent to OpenSearch and interpreted by the
 * in-memory evaluator (`src/store/query/`), so both executors agree by construction.
 */
import { type Condition, parseCondition } from './condition'
import { type DetectionContext, compileSearch } from './detection'
import { type Query, and, not, or } from './dsl'
import { SigmaInvalid } from './errors'
import { type SigmaRuleDocument, parseSigmaRule } from './rule'
import { type SigmaString, literal, parseSigmaString } from './sigma-string'

/** Searched by field-less (keyword) values unless a log type configures its own list. */
export const DEFAULT_KEYWORD_FIELDS = ['event.original', 'message']

export interface CompileOptions {
  /** Sigma field -> document field (a log type's mapping); identity for unlisted fields. */
  fieldMapping?: Record<string, string> | ((sigmaField: string) => string | undefined)
  /** Document fields that keyword (field-less) searches look into. */
  keywordFields?: string[]
  /** Values for `expand` placeholders (`%name%`); each value is itself a Sigma string. */
  placeholders?: Record<string, string | number | (string | number)[]>
  /** Document field -> OpenSearch field type; `ip` fields take `cidr` natively (IPv6 needs it). */
  fieldTypes?: Record<string, string>
}

export interface CompiledSigmaRule {
  id?: string
  title: string
  level?: string
  status?: string
  tags: string[]
  logsource: Record<string, unknown>
  query: Query
  /** Search identifiers that can contribute to a match (those not under an odd number of `not`). */
  selections: string[]
  /** Document fields the query reads. */
  fields: string[]
  document: SigmaRuleDocument
}

export function compileSigmaRule(source: string | object, options: CompileOptions = {}): CompiledSigmaRule {
  const document = parseSigmaRule(source)
  const { condition, ...searches } = document.detection
  const ctx = context(options)
  const compiled = new Map<string, Query>()
  for (const [name, definition] of Object.entries(searches)) compiled.set(name, compileSearch(name, definition, ctx))

  const conditions = Array.isArray(condition) ? condition : [condition]
  if (conditions.length === 0 || !conditions.every((c) => typeof c === 'string'))
    throw new SigmaInvalid("field 'detection.condition'", 'must be a string or a list of strings')
  const positive = new Set<string>()
  const trees = conditions.map((text) => {
    const ast = parseCondition(text)
    const q = build(ast, compiled, text, false, positive)
    if (!q) throw new SigmaInvalid(`condition '${text}'`, 'selects no search identifier')
    return q
  })
  return {
    id: document.id ?? document.sigma_id,
    title: (document.title ?? document.metadata?.title)!,
    level: document.level,
    status: document.status,
    tags: document.tags ?? [],
    logsource: document.logsource ?? {},
    // Several conditions: the rule matches when any of them does (spec).
    query: or(trees),
    selections: [...positive],
    fields: [...ctx.fields],
    document,
  }
}

function context(options: CompileOptions): DetectionContext {
  const mapping = options.fieldMapping
  const mapField =
    typeof mapping === 'function' ? (f: string) => mapping(f) ?? f : mapping ? (f: string) => mapping[f] ?? f : (f: string) => f
  const placeholderValues = new Map<string, SigmaString[]>()
  for (const [name, value] of Object.entries(options.placeholders ?? {})) {
    const list = Array.isArray(value) ? value : [value]
    placeholderValues.set(
      name,
      list.map((v) => (typeof v === 'string' ? parseSigmaString(v) : literal(String(v)))),
    )
  }
  const types = options.fieldTypes ?? {}
  return {
    mapField,
    keywordFields: options.keywordFields ?? DEFAULT_KEYWORD_FIELDS,
    placeholders: (name) => placeholderValues.get(name),
    isIpField: (field) => types[field] === 'ip',
    fields: new Set(),
  }
}

/** `1 of` / `all of` selectors that match nothing are dropped (pySigma), hence `undefined`. */
function build(c: Condition, searches: Map<string, Query>, text: string, negated: boolean, positive: Set<string>): Query | undefined {
  switch (c.op) {
    case 'id': {
      const q = searches.get(c.name)
      if (!q) throw new SigmaInvalid(`condition '${text}'`, `unknown search identifier '${c.name}'`)
      if (!negated) positive.add(c.name)
      return q
    }
    case 'not': {
      const inner = build(c.arg, searches, text, !negated, positive)
      return inner && not(inner)
    }
    case 'and':
    case 'or': {
      const args = c.args.map((a) => build(a, searches, text, negated, positive)).filter((q): q is Query => q !== undefined)
      if (args.length === 0) return undefined
      return c.op === 'and' ? and(args) : or(args)
    }
    case 'of': {
      const names = resolvePattern(c.pattern, [...searches.keys()])
      if (names.length === 0) return undefined
      if (!negated) for (const n of names) positive.add(n)
      const qs = names.map((n) => searches.get(n)!)
      return c.quantifier === 'all' ? and(qs) : or(qs)
    }
  }
}

/** `them` and patterns not starting with `_` skip `_`-prefixed identifiers (pySigma). */
export function resolvePattern(pattern: string, names: string[]): string[] {
  if (pattern === 'them') return names.filter((n) => !n.startsWith('_'))
  const re = new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\-]/g, '\\$&').replaceAll('*', '.*')}$`)
  return names.filter((n) => re.test(n) && (pattern.startsWith('_') || !n.startsWith('_')))
}

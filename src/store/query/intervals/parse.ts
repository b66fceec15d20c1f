/**
 * The rules of an `intervals` query as OpenSearch's parsers read them (IntervalQueryBuilder,
 * IntervalsSourceProvider and their ObjectParsers), with their 400 errors: parsing_exception for
 * the query's structure, x_content_parse_exception for a rule's fields, illegal_argument_exception
 * for a missing required one. Parsing builds nothing: what the rules need of the index is checked
 * when they are built (build.ts), as OpenSearch checks it when it creates the shard's query.
 */
import { IllegalArgument, ParsingError, StoreError } from '../../errors'
import { isObject } from '../doc'
import { luceneRegExp } from '../lucene-regexp'

export type Mode = 'ordered' | 'unordered' | 'unordered_no_overlap'

export interface Filter {
  type: string
  rule: Rule
}

export type Rule =
  | { kind: 'match'; query: string; maxGaps: number; mode: Mode; filter?: Filter; useField?: string }
  | { kind: 'any_of'; rules: Rule[]; filter?: Filter }
  | { kind: 'all_of'; rules: Rule[]; maxGaps: number; mode: Mode; filter?: Filter }
  | { kind: 'prefix'; prefix: string; useField?: string }
  | { kind: 'wildcard'; pattern: string; useField?: string; maxExpansions?: number }
  | { kind: 'regexp'; pattern: string; flags: string; useField?: string; maxExpansions?: number; caseInsensitive: boolean }
  | { kind: 'fuzzy'; term: string; prefixLength: number; transpositions: boolean; fuzziness: unknown; useField?: string }

interface IntervalsQuery {
  field: string
  rule: Rule
  boost: number
  name?: string
}

/** The JSON token OpenSearch's parser names for a value. */
function token(v: unknown): string {
  if (v === null || v === undefined) return 'VALUE_NULL'
  if (Array.isArray(v)) return 'START_ARRAY'
  if (isObject(v)) return 'START_OBJECT'
  return typeof v === 'string' ? 'VALUE_STRING' : typeof v === 'boolean' ? 'VALUE_BOOLEAN' : 'VALUE_NUMBER'
}

/**
 * x_content_parse_exception, with what caused it: OpenSearch names the innermost parse error under
 * it (a rule's structure deep in `intervals` or `filter`) as the root cause.
 */
class ContentError extends StoreError {
  constructor(
    reason: string,
    readonly inner?: StoreError,
  ) {
    super('x_content_parse_exception', 400, reason, inner ? { caused_by: causeOf(inner) } : {})
  }

  override toOpenSearch(): ReturnType<StoreError['toOpenSearch']> {
    let root: StoreError = this
    while (root instanceof ContentError && (root.inner instanceof ContentError || root.inner instanceof ParsingError)) root = root.inner
    return { ...super.toOpenSearch(), root_cause: [{ type: root.type, reason: root.reason }] }
  }
}

const contentError = (reason: string, cause?: StoreError): StoreError => new ContentError(reason, cause)

function causeOf(e: StoreError): Record<string, unknown> {
  const { caused_by, ...rest } = e.metadata
  return { type: e.type, reason: e.reason, ...rest, ...(caused_by === undefined ? {} : { caused_by }) }
}

/** `{"intervals": {field: {rule: {...}, boost, _name}}}` */
export function parseIntervals(body: unknown): IntervalsQuery {
  if (!isObject(body)) throw new ParsingError('[intervals] query malformed, no start_object after query name')
  const keys = Object.keys(body)
  if (keys.length === 0) throw new ParsingError('Expected [FIELD_NAME] but got [END_OBJECT]')
  if (keys.length > 1) throw new ParsingError('Expected [END_OBJECT] but got [FIELD_NAME]')
  const field = keys[0]
  const spec = body[field]
  if (!isObject(spec)) throw new ParsingError(`Expected [START_OBJECT] but got [${token(spec)}]`)
  let rule: Rule | undefined
  let ruleName: string | undefined
  let boost = 1
  let name: string | undefined
  for (const [k, v] of Object.entries(spec)) {
    if (k === '_name') name = String(v)
    else if (k === 'boost') boost = floatOf(v)
    else {
      if (ruleName !== undefined) throw new ParsingError(`Only one interval rule can be specified, found [${ruleName}] and [${k}]`)
      ruleName = k
      rule = parseRule(k, v)
    }
  }
  if (rule === undefined) throw new ParsingError('Missing intervals from interval query definition')
  return { field, rule, boost, name }
}

function floatOf(v: unknown): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN
  if (!Number.isFinite(n)) throw new StoreError('number_format_exception', 400, `For input string: "${String(v)}"`)
  return Math.fround(n)
}

const RULES = 'match, any_of, all_of, prefix, wildcard, regexp'

/** IntervalsSourceProvider.fromXContent: one rule by its name. */
function parseRule(kind: string, body: unknown): Rule {
  switch (kind) {
    case 'match':
    case 'any_of':
    case 'all_of':
      return parseCombining(kind, body)
    case 'prefix':
    case 'wildcard':
    case 'regexp':
    case 'fuzzy':
      return parseMultiTerm(kind, body)
    default:
      throw new ParsingError(`Unknown interval type [${kind}], expecting one of [${RULES}]`)
  }
}

type FieldKind = 'string' | 'int' | 'bool' | 'fuzziness' | 'filter' | 'rules'

const FIELDS: Record<string, Record<string, FieldKind>> = {
  match: { query: 'string', max_gaps: 'int', ordered: 'bool', mode: 'string', analyzer: 'string', filter: 'filter', use_field: 'string' },
  any_of: { intervals: 'rules', filter: 'filter' },
  all_of: { intervals: 'rules', max_gaps: 'int', ordered: 'bool', mode: 'string', filter: 'filter' },
  prefix: { prefix: 'string', analyzer: 'string', use_field: 'string' },
  wildcard: { pattern: 'string', analyzer: 'string', use_field: 'string', max_expansions: 'int' },
  regexp: { pattern: 'string', flags: 'string', flags_value: 'int', use_field: 'string', max_expansions: 'int', case_insensitive: 'bool' },
  fuzzy: { term: 'string', prefix_length: 'int', transpositions: 'bool', fuzziness: 'fuzziness', analyzer: 'string', use_field: 'string' },
}

const REQUIRED: Record<string, string> = {
  match: 'query',
  any_of: 'intervals',
  all_of: 'intervals',
  prefix: 'prefix',
  wildcard: 'pattern',
  regexp: 'pattern',
  fuzzy: 'term',
}

/** A rule's object read as its ObjectParser reads it: known fields of the right types, the required one there. */
function readFields(kind: string, body: unknown): Record<string, unknown> {
  if (!isObject(body)) throw contentError(`[${kind}] Expected START_OBJECT but was: ${token(body)}`)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(body)) {
    const type = Object.hasOwn(FIELDS[kind], k) ? FIELDS[kind][k] : undefined
    if (type === undefined) throw contentError(`[${kind}] unknown field [${k}]`)
    out[k] = readValue(kind, k, type, v)
  }
  if (out[REQUIRED[kind]] === undefined) throw new IllegalArgument(`Required [${REQUIRED[kind]}]`)
  return out
}

function readValue(kind: string, key: string, type: FieldKind, v: unknown): unknown {
  const refuse = () => contentError(`[${kind}] ${key} doesn't support values of type: ${token(v)}`)
  switch (type) {
    case 'string':
      if (typeof v !== 'string') throw refuse()
      return v
    case 'int':
      return intOf(kind, key, v, refuse)
    case 'bool':
      if (typeof v === 'boolean') return v
      if (typeof v !== 'string') throw refuse()
      if (v !== 'true' && v !== 'false')
        throw contentError(
          `[${kind}] failed to parse field [${key}]`,
          new IllegalArgument(`Failed to parse value [${v}] as only [true] or [false] are allowed.`),
        )
      return v === 'true'
    case 'fuzziness':
      if (typeof v !== 'string' && typeof v !== 'number') throw refuse()
      if (!/^(AUTO(:\d+,\d+)?|\d+(\.\d+)?)$/i.test(String(v).trim()))
        throw contentError(`[${kind}] failed to parse field [${key}]`, new IllegalArgument(`Invalid fuzziness value: ${String(v)}`))
      return v
    case 'filter':
      if (!isObject(v)) throw refuse()
      return within(kind, key, () => parseFilter(v))
    case 'rules':
      if (!isObject(v) && !Array.isArray(v)) throw refuse()
      return within(kind, key, () => parseRules(Array.isArray(v) ? v : [v]))
  }
}

function intOf(kind: string, key: string, v: unknown, refuse: () => StoreError): number {
  if (typeof v === 'number') return Math.trunc(v)
  if (typeof v !== 'string') throw refuse()
  const n = Number(v)
  if (v.trim() === '' || !Number.isFinite(n))
    throw contentError(
      `[${kind}] failed to parse field [${key}]`,
      new StoreError('number_format_exception', 400, `For input string: "${v}"`),
    )
  return Math.trunc(n)
}

/** An error in a rule's inner object, wrapped as ObjectParser wraps it: `[all_of] failed to parse field [intervals]`. */
function within<T>(kind: string, key: string, parse: () => T): T {
  try {
    return parse()
  } catch (e) {
    if (e instanceof StoreError && !(e instanceof Unsupported)) throw contentError(`[${kind}] failed to parse field [${key}]`, e)
    throw e
  }
}

/** The rule objects of `intervals` (each holds one rule); the errors name the token the parser met next. */
function parseRules(list: unknown[]): Rule[] {
  return list.map((el, i) => {
    if (!isObject(el)) throw new ParsingError(`Expected [FIELD_NAME] but got [${i + 1 < list.length ? token(list[i + 1]) : 'END_ARRAY'}]`)
    return soleRule(el)
  })
}

/** `{rule: {...}}`: exactly one rule. */
function soleRule(o: Record<string, unknown>): Rule {
  const keys = Object.keys(o)
  if (keys.length === 0) throw new ParsingError('Expected [FIELD_NAME] but got [END_OBJECT]')
  const rule = parseRule(keys[0], o[keys[0]])
  if (keys.length > 1) throw new ParsingError('Expected [END_OBJECT] but got [FIELD_NAME]')
  return rule
}

/** What OpenSearch reads but the embedded store refuses: the 400 as it is, not wrapped as a parse error. */
class Unsupported extends IllegalArgument {}

/** IntervalFilter.fromXContent: `{type: {rule: {...}}}`; a script filter is refused (no scripts run here). */
function parseFilter(o: Record<string, unknown>): Filter {
  const keys = Object.keys(o)
  if (keys.length === 0) throw new ParsingError('Expected [FIELD_NAME] but got [END_OBJECT]')
  const type = keys[0]
  if (type === 'script') throw new Unsupported('[intervals] script filters are not supported by the embedded store')
  const inner = o[type]
  if (!isObject(inner)) throw new ParsingError(`Expected [START_OBJECT] but got [${token(inner)}]`)
  const rule = soleRule(inner)
  if (keys.length > 1) throw new ParsingError('Expected [END_OBJECT] but got [FIELD_NAME]')
  return { type: type.toLowerCase(), rule }
}

/** `ordered` (deprecated) wins over `mode`; unordered by default. */
function modeOf(kind: string, f: Record<string, unknown>): Mode {
  if (f.ordered !== undefined) return f.ordered ? 'ordered' : 'unordered'
  if (f.mode === undefined) return 'unordered'
  const mode = String(f.mode).toLowerCase()
  if (mode === 'ordered' || mode === 'unordered' || mode === 'unordered_no_overlap') return mode
  throw built(kind, new IllegalArgument(`no mode can be parsed from ordinal ${String(f.mode)}`))
}

/** A value ConstructingObjectParser refuses once it has every field. */
const built = (kind: string, cause: StoreError) => contentError(`Failed to build [${kind}] after last required field arrived`, cause)

function parseCombining(kind: 'match' | 'any_of' | 'all_of', body: unknown): Rule {
  const f = readFields(kind, body)
  const filter = f.filter as Filter | undefined
  const maxGaps = (f.max_gaps as number | undefined) ?? -1
  if (kind === 'any_of') return { kind, rules: f.intervals as Rule[], filter }
  if (kind === 'all_of') return { kind, rules: f.intervals as Rule[], maxGaps, mode: modeOf(kind, f), filter }
  return { kind, query: f.query as string, maxGaps, mode: modeOf(kind, f), filter, useField: f.use_field as string | undefined }
}

const FLAG_NAMES: Array<[string, number]> = [
  ['INTERSECTION', 1],
  ['COMPLEMENT', 2],
  ['EMPTY', 4],
  ['ANYSTRING', 8],
  ['INTERVAL', 32],
]

/** `flags_value` (Lucene's bits) as the flag names the regexp translator reads. */
function flagNames(bits: number): string {
  if ((bits & 0xffff) === 0xffff) return 'ALL'
  const names = FLAG_NAMES.filter(([, bit]) => (bits & bit) !== 0).map(([name]) => name)
  return names.length === 0 ? 'NONE' : names.join('|')
}

function parseMultiTerm(kind: 'prefix' | 'wildcard' | 'regexp' | 'fuzzy', body: unknown): Rule {
  const f = readFields(kind, body)
  const useField = f.use_field as string | undefined
  const maxExpansions = f.max_expansions as number | undefined
  switch (kind) {
    case 'prefix':
      return { kind, prefix: f.prefix as string, useField }
    case 'wildcard':
      return { kind, pattern: f.pattern as string, useField, maxExpansions }
    case 'regexp': {
      const flags = f.flags_value !== undefined ? flagNames(f.flags_value as number) : ((f.flags as string | undefined) ?? 'ALL')
      checkFlags(flags)
      return { kind, pattern: f.pattern as string, flags, useField, maxExpansions, caseInsensitive: f.case_insensitive === true }
    }
    case 'fuzzy':
      return {
        kind,
        term: f.term as string,
        prefixLength: (f.prefix_length as number | undefined) ?? 0,
        transpositions: f.transpositions !== false,
        fuzziness: f.fuzziness ?? 'AUTO',
        useField,
      }
  }
}

function checkFlags(flags: string): void {
  try {
    luceneRegExp('a', flags)
  } catch (e) {
    if (e instanceof StoreError) throw built('regexp', e)
    throw e
  }
}

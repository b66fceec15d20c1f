/**
 * The queries a field refuses, with OpenSearch's errors: on a field neither indexed nor kept as
 * doc values (OpenSearch 3.0+ searches doc values when `index` is false), and the expensive ones
 * while the cluster setting `search.allow_expensive_queries` is false.
 */
import { QueryCreationFailed } from '../errors'
import { dateValueFailure } from './dates'
import { DEFAULT_DATE_FORMAT } from './date-pattern'
import { namedAnalyzer } from './analyzers'
import { isObject } from './doc'
import { type FieldSpec, kindOf } from './field-spec'
import type { QueryLimits } from './limits'
import { parseIp } from './ip'
import { toBool, toNumber } from './values'

/** Whether a caller's query may run on this field (undefined) or the error OpenSearch answers. */
export function refusal(
  type: string,
  field: string,
  spec: FieldSpec,
  p: Record<string, unknown>,
  limits: QueryLimits | undefined,
): QueryCreationFailed | undefined {
  const unsearchable = unsearchableWhy(field, spec)
  if (unsearchable) return new QueryCreationFailed({ type: 'illegal_argument_exception', reason: unsearchable })
  // A caller's search only: rule evaluation keeps reading each value of a list on its own (a
  // value the field cannot read matches nothing there, the list's others still match).
  const unreadable = limits === undefined ? undefined : (unreadableValue(type, spec, p) ?? unreadableDate(type, spec, p))
  if (unreadable) return unreadable instanceof QueryCreationFailed ? unreadable : new QueryCreationFailed(unreadable)
  if (limits?.allowExpensiveQueries !== false) return undefined
  const kind = expensiveKind(type, spec, p)
  return kind === undefined ? undefined : expensive(kind)
}

/**
 * A value a number, boolean or ip field cannot read, in a query that looks it up as the field's
 * term (term, terms, match and match_phrase unless `lenient`; a numeric range's bounds): OpenSearch
 * fails the query on each shard, caused by its parser's exception. (query_string matches nothing
 * instead: see compile.ts's admit; rule evaluation is not refused at all: see refusal.)
 */
function unreadableValue(type: string, spec: FieldSpec, p: Record<string, unknown>): { type: string; reason: string } | undefined {
  const kind = kindOf(spec.type)
  if (kind !== 'number' && kind !== 'boolean' && kind !== 'ip') return undefined
  if (type === 'range' && kind !== 'number') return undefined
  for (const v of lookedUp(type, p)) {
    const text = String(v)
    if (kind === 'number' && toNumber(v) === undefined) return { type: 'number_format_exception', reason: `For input string: "${text}"` }
    if (kind === 'boolean' && toBool(v) === undefined)
      return { type: 'illegal_argument_exception', reason: `Can't parse boolean value [${text}], expected [true] or [false]` }
    if (kind === 'ip' && !text.includes('/') && parseIp(text) === undefined)
      return { type: 'illegal_argument_exception', reason: `'${text}' is not an IP string literal.` }
  }
  return undefined
}

/**
 * The values a query looks up as the field's terms: a term's, a terms list's, a match's or
 * match_phrase's text (unless `lenient`), a range's bounds. Absent bounds, and objects or arrays
 * (which the query's own checks refuse), are left out.
 */
function lookedUp(type: string, p: Record<string, unknown>): Array<string | number | boolean | bigint> {
  let values: unknown[]
  if (type === 'term') values = [p.value]
  else if (type === 'terms') values = Array.isArray(p.value) ? p.value : []
  else if ((type === 'match' || type === 'match_phrase') && p.lenient !== true && p.lenient !== 'true') values = [p.query]
  else if (type === 'range') values = [p.gt, p.gte, p.lt, p.lte, p.from, p.to]
  else values = []
  return values.filter((v): v is string | number | boolean | bigint => v !== null && v !== undefined && typeof v !== 'object')
}

/**
 * A value a date field cannot read (its format, or the range's own), where unreadableValue looks:
 * OpenSearch's parse_exception (dates.ts's dateValueFailure). A term's shard wraps it in a
 * query_shard_exception; a range's bound fails its shard with the parse_exception itself.
 */
function unreadableDate(type: string, spec: FieldSpec, p: Record<string, unknown>): QueryCreationFailed | undefined {
  if (kindOf(spec.type) !== 'date') return undefined
  // A range reads its bounds in its own format, when it names one.
  const format = type === 'range' && typeof p.format === 'string' ? p.format : (spec.format ?? DEFAULT_DATE_FORMAT)
  for (const v of lookedUp(type, p)) {
    const cause = dateValueFailure(v, format)
    if (cause) return new QueryCreationFailed(cause, type === 'range' ? 'direct' : 'wrapped')
  }
  return undefined
}

const BOOL_ORDER = ['must', 'must_not', 'filter', 'should']

/**
 * A date range's bound its format cannot read, anywhere in a caller's query: OpenSearch reads
 * those bounds when it rewrites the query, before any other part of it is built, so this failure
 * is the one it answers whatever else the query holds (see unreadableDate for the shape).
 */
export function rewriteRefusal(query: unknown, specs: ReadonlyMap<string, FieldSpec> | undefined): QueryCreationFailed | undefined {
  if (specs === undefined) return undefined
  let found: QueryCreationFailed | undefined
  const visit = (node: unknown): void => {
    if (found || node === null || typeof node !== 'object') return
    if (Array.isArray(node)) return node.forEach(visit)
    for (const [key, value] of Object.entries(node)) {
      if (key === 'range' && isObject(value))
        for (const [field, p] of Object.entries(value)) {
          const spec = specs.get(field)
          if (spec && isObject(p)) found ??= unreadableDate('range', spec, p)
        }
      // A bool query rewrites its clauses in this order.
      if (key === 'bool' && isObject(value)) for (const occur of BOOL_ORDER) visit(value[occur])
      else visit(value)
    }
  }
  visit(query)
  return found
}

/** Whether the field answers `exists` (neither indexed nor kept as doc values: nothing to find). */
export const searchable = (field: string, spec: FieldSpec | undefined): boolean => spec === undefined || !unsearchableWhy(field, spec)

/** Why a field cannot be searched at all, in OpenSearch's words (undefined: it can). */
function unsearchableWhy(field: string, spec: FieldSpec): string | undefined {
  if (spec.index !== false) return undefined
  // Text keeps no doc values: an unindexed one has nothing to search.
  if (kindOf(spec.type) === 'text') return `Cannot search on field [${field}] since it is not indexed.`
  if (spec.doc_values === false)
    return `Cannot search on field [${field}] since it is both not indexed, and does not have doc_values enabled.`
  return undefined
}

/** Queries that analyse their text with the `analyzer` they name: per field, or for the whole query. */
const FIELD_ANALYZED = new Set(['match', 'match_phrase', 'match_phrase_prefix', 'match_bool_prefix'])
const QUERY_ANALYZED = new Set(['multi_match', 'query_string', 'simple_query_string', 'combined_fields'])

/**
 * A caller's full-text query naming an analyzer neither the index's settings nor the built-in
 * ones define: OpenSearch fails it on each shard ("[match] analyzer [x] not found"), whatever the
 * field's type. (Rule evaluation has no index settings to look in: the name is analysed as `standard`.)
 */
export function analyzerRefusal(type: string, body: unknown, limits: QueryLimits | undefined): QueryCreationFailed | undefined {
  if (limits === undefined || !isObject(body)) return undefined
  let name: unknown
  if (QUERY_ANALYZED.has(type)) name = body.analyzer
  else if (FIELD_ANALYZED.has(type)) {
    const params = Object.values(body)[0]
    name = isObject(params) ? params.analyzer : undefined
  }
  if (typeof name !== 'string' || namedAnalyzer(name, limits.analysis) !== undefined) return undefined
  return new QueryCreationFailed({ type: 'query_shard_exception', reason: `[${type}] analyzer [${name}] not found` }, 'shard')
}

/** A `nested` query (a join) under `search.allow_expensive_queries: false`. */
export function joiningRefusal(limits: QueryLimits | undefined): QueryCreationFailed | undefined {
  return limits?.allowExpensiveQueries === false ? expensive('joining') : undefined
}

/** The string field types OpenSearch guards; `wildcard` fields are built for these queries and are not. */
const GUARDED = new Set(['keyword', 'text', 'match_only_text'])

/** The kind of expensive query `type` is on this field, as OpenSearch names it in the error. */
function expensiveKind(type: string, spec: FieldSpec, p: Record<string, unknown>): string | undefined {
  if (!GUARDED.has(spec.type)) return undefined
  switch (type) {
    case 'prefix':
    case 'match_bool_prefix':
      return spec.index_prefixes ? undefined : 'prefix'
    case 'wildcard':
    case 'regexp':
    case 'fuzzy':
    case 'range':
      return type
    case 'match':
      return p.fuzziness === undefined ? undefined : 'fuzzy'
  }
  return undefined
}

function expensive(kind: string): QueryCreationFailed {
  const off = "cannot be executed when 'search.allow_expensive_queries' is set to false."
  const reason =
    kind === 'prefix'
      ? `[prefix] queries ${off} For optimised prefix queries on text fields please enable [index_prefixes].`
      : kind === 'range'
        ? `[range] queries on [text] or [keyword] fields ${off}`
        : `[${kind}] queries ${off}`
  return new QueryCreationFailed({ type: 'exception', reason })
}

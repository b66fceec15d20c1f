/**
 * The queries a field refuses, with OpenSearch's errors: on a field neither indexed nor kept as
 * doc values (OpenSearch 3.0+ searches doc values when `index` is false), and the expensive ones
 * while the cluster setting `search.allow_expensive_queries` is false.
 */
import { QueryCreationFailed } from '../errors'
import { type FieldSpec, kindOf } from './field-spec'
import type { QueryLimits } from './limits'

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
  if (limits?.allowExpensiveQueries !== false) return undefined
  const kind = expensiveKind(type, spec, p)
  return kind === undefined ? undefined : expensive(kind)
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

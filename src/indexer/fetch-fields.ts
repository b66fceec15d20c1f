/**
 * The `fields` option of a search: each hit's values of the named fields (wildcards allowed),
 * read from its source through the mapping as OpenSearch's fields API reads them: in source
 * order, each parsed as its field type parses it (integral numbers truncated, booleans from
 * "true"/"false", dates rendered in the field's or the requested format), multi-fields from their
 * parent's value, keywords past `ignore_above` left out, a token_count as its number of tokens. Object, geo and flat_object fields are
 * not fetched; unmapped fields only exist in `_source`.
 */
import type { Mappings, SearchHit } from '../store/port'
import { kindOf, type FieldSpec } from '../store/query/compile'
import { analyze } from '../store/query/analysis'
import { parseDate } from '../store/query/dates'
import { fieldPath, isObject } from '../store/query/doc'
import { sourceDisabled } from '../store/source-filter'
import { badRequest } from './context'
import { ShardsFailed } from '../store/errors'
import { addHitFields, type NamedField } from './hit-fields'
import { formatDate } from './docvalue-fields'

export type FetchField = NamedField

export function parseFetchFields(v: unknown): FetchField[] {
  if (v === undefined) return []
  if (!Array.isArray(v)) throw badRequest('[fields] must be an array', 'parsing_exception')
  return v.map((x): FetchField => {
    if (typeof x === 'string') return { field: x }
    if (isObject(x) && typeof x.field === 'string') return { field: x.field, ...(typeof x.format === 'string' ? { format: x.format } : {}) }
    throw badRequest('[fields] entries must be a field name or {field, format, include_unmapped}', 'parsing_exception')
  })
}

const INTEGRAL = new Set(['long', 'integer', 'short', 'byte', 'unsigned_long'])

function fetched(source: Record<string, unknown>, name: string, spec: FieldSpec, format: string | undefined): unknown[] {
  if (format !== undefined && kindOf(spec.type) !== 'date')
    throw badRequest(`Field [${name}] of type [${spec.type}] doesn't support formats.`, 'illegal_argument_exception')
  const raw = fieldPath(spec.path ?? name)
    .collect(source)
    .filter((v) => v !== null && v !== undefined)
  // A token_count field's value is its text's number of tokens.
  if (spec.type === 'token_count') return raw.map((v) => analyze(String(v)).length)
  switch (kindOf(spec.type)) {
    case 'number': {
      const nums = raw.map(Number).filter((n) => Number.isFinite(n))
      return INTEGRAL.has(spec.type) ? nums.map(Math.trunc) : nums
    }
    case 'date': {
      const ms = raw.map((v) => parseDate(v, spec.format)).filter((n): n is number => n !== undefined)
      return ms.map((n) => formatDate(n, format ?? spec.format))
    }
    case 'boolean':
      return raw.map((v) => v === true || v === 'true')
    case 'keyword':
    case 'text':
    case 'ip': {
      const strings = raw.filter((v) => !isObject(v)).map(String)
      return spec.ignore_above === undefined ? strings : strings.filter((s) => s.length <= spec.ignore_above!)
    }
    default:
      return []
  }
}

/** Adds the fetched `fields` to each hit (next to any doc values already there). */
export function addFetchFields(hits: SearchHit[], fields: FetchField[], mappingOf: (index: string) => Mappings | undefined): void {
  addHitFields(
    hits,
    fields,
    mappingOf,
    (hit, name, spec, f) => (hit._source ? fetched(hit._source, name, spec, f.format) : []),
    (index, mapping) => {
      // Each shard refuses it, as OpenSearch's do (search_phase_execution_exception around it).
      if (sourceDisabled(mapping))
        throw new ShardsFailed(
          'illegal_argument_exception',
          `Unable to retrieve the requested [fields] since _source is disabled in the mappings for index [${index}]`,
          index,
        )
    },
  )
}

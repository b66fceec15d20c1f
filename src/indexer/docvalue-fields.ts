/**
 * `docvalue_fields` (body or URL) on the hits a search returns, as OpenSearch answers them:
 * `fields: {<name>: [values]}` read from the source through the mapping (multi-fields from their
 * parent), keyword values sorted and unique as doc values are, numbers as numbers (or through a
 * `#.0`-style decimal format), dates in the field's first format (default
 * `strict_date_optional_time`, `.SSSZ` precision) or `epoch_millis`; text fields have no doc values
 * (400). An empty `script_fields` (OpenSearch Dashboards sends `{}`) is accepted.
 */
import { decimalFormat } from '../store/embedded/decimal-format'
import type { Mappings, SearchHit } from '../store/port'
import { kindOf, type FieldSpec } from '../store/query/compile'
import { parseDate } from '../store/query/dates'
import { fieldPath, isObject } from '../store/query/doc'
import { formatInZone } from '../store/embedded/aggs-time'
import { zoneOf } from '../store/query/zones'
import { badRequest } from './context'
import { addHitFields, type NamedField } from './hit-fields'

export type DocValueField = NamedField

export function parseDocValueFields(v: unknown): DocValueField[] {
  if (v === undefined) return []
  const list = typeof v === 'string' ? v.split(',') : [v].flat()
  return list.map((x): DocValueField => {
    if (typeof x === 'string') return { field: x }
    if (isObject(x) && typeof x.field === 'string') return { field: x.field, ...(typeof x.format === 'string' ? { format: x.format } : {}) }
    throw badRequest('[docvalue_fields] entries must be a field name or {field, format}', 'parsing_exception')
  })
}

export function checkScriptFields(v: unknown): void {
  if (v === undefined) return
  if (!isObject(v)) throw badRequest('[script_fields] must be an object', 'parsing_exception')
  if (Object.keys(v).length > 0) throw badRequest('[script_fields] is not supported by this server')
}

const UTC = zoneOf('UTC')

/** A date value in a format (its first, `||`-separated), as OpenSearch renders doc values and fetched fields. */
export function formatDate(ms: number, format: string | undefined): string {
  const f = (format ?? 'strict_date_optional_time').split('||')[0]
  if (f === 'epoch_second') return String(Math.trunc(ms / 1000))
  return formatInZone(ms, UTC, f === 'use_field_mapping' ? undefined : f)
}

const TEXT = new Set(['text', 'match_only_text'])

function valuesOf(hit: SearchHit, name: string, spec: FieldSpec, format: string | undefined): unknown[] {
  const raw = fieldPath(spec.path ?? name)
    .collect(hit._source ?? {})
    .filter((v) => v !== null && v !== undefined)
  const kind = kindOf(spec.type)
  if (kind === 'number') {
    const nums = raw.map(Number).filter((n) => Number.isFinite(n))
    const floats = spec.type === 'float' || spec.type === 'half_float'
    const out = nums.map((n) => (floats ? Math.fround(n) : n)).sort((a, b) => a - b)
    const df = format && format !== 'use_field_mapping' ? decimalFormat(format) : undefined
    return df ? out.map(df) : out
  }
  if (kind === 'date') {
    const ms = raw.map((v) => parseDate(v, spec.format)).filter((n): n is number => n !== undefined)
    return ms.sort((a, b) => a - b).map((n) => formatDate(n, format && format !== 'use_field_mapping' ? format : spec.format))
  }
  if (kind === 'boolean') return raw.map((v) => v === true || v === 'true').sort((a, b) => Number(a) - Number(b))
  const strings = raw.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
  const limited = spec.ignore_above === undefined ? strings : strings.filter((s) => s.length <= spec.ignore_above!)
  return [...new Set(limited)].sort()
}

/** Adds `fields` to each hit; throws OpenSearch's 400 for a text field named explicitly. */
export function addDocValueFields(hits: SearchHit[], fields: DocValueField[], mappingOf: (index: string) => Mappings | undefined): void {
  addHitFields(hits, fields, mappingOf, (hit, name, spec, f, wildcard) => {
    if (!TEXT.has(spec.type)) return valuesOf(hit, name, spec, f.format)
    if (wildcard) return []
    throw badRequest(
      `Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [${name}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
      'illegal_argument_exception',
    )
  })
}

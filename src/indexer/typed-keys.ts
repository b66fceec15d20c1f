/**
 * `typed_keys=true`: each aggregation of an answer is named `<type>#<name>`, the type being the
 * name OpenSearch writes its result under (what the Java and .NET clients ask for on every search,
 * to know how to read each result). Most results carry their request's type; terms say what their
 * keys are (`sterms` strings, `lterms` longs, dates and booleans, `ulterms` unsigned longs, `dterms`
 * doubles), percentiles their algorithm, pipelines the kind of result they make (`simple_value`...).
 */
import type { Mappings } from '../store/port'
import { mappedFields } from './mapped-fields'

const LONG_KEYS = new Set(['long', 'integer', 'short', 'byte', 'date', 'date_nanos', 'boolean', 'unsigned_long'])
const DOUBLE_KEYS = new Set(['double', 'float', 'half_float', 'scaled_float'])
const META_KEYS = new Set(['aggs', 'aggregations', 'meta'])

type Defs = Record<string, Record<string, unknown>>
type FieldType = (field: string) => string | undefined

/** The field types of the searched indices' mappings (the first index mapping a path decides). */
export function fieldTypesOf(mappings: Iterable<Mappings>): FieldType {
  const types = new Map<string, string>()
  for (const m of mappings) for (const f of mappedFields(m)) if (!types.has(f.path)) types.set(f.path, f.type)
  return (field) => types.get(field)
}

function typedName(type: string, params: Record<string, unknown>, fieldType: FieldType): string {
  if (type === 'terms') {
    const field = typeof params.field === 'string' ? fieldType(params.field) : undefined
    if (field === 'unsigned_long') return 'ulterms'
    return field && LONG_KEYS.has(field) ? 'lterms' : field && DOUBLE_KEYS.has(field) ? 'dterms' : 'sterms'
  }
  if (type === 'rare_terms') {
    const field = typeof params.field === 'string' ? fieldType(params.field) : undefined
    return field && LONG_KEYS.has(field) ? 'lrareterms' : 'srareterms'
  }
  if (type === 'percentiles' || type === 'percentile_ranks') return `${params.hdr ? 'hdr' : 'tdigest'}_${type}`
  return PIPELINE_RESULTS[type] ?? type
}

/** The results of pipeline aggregations, by the name OpenSearch writes them under. */
const PIPELINE_RESULTS: Record<string, string> = {
  avg_bucket: 'simple_value',
  sum_bucket: 'simple_value',
  cumulative_sum: 'simple_value',
  bucket_script: 'simple_value',
  serial_diff: 'simple_value',
  moving_fn: 'simple_value',
  min_bucket: 'bucket_metric_value',
  max_bucket: 'bucket_metric_value',
}

/** `aggregations` with every name typed, sub-aggregations (in buckets and single-bucket results) included. */
export function typedKeys(aggregations: Record<string, unknown>, defs: Defs, fieldType: FieldType): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, result] of Object.entries(aggregations)) {
    const def = defs[name]
    const type = def && Object.keys(def).find((k) => !META_KEYS.has(k))
    if (!def || !type) {
      out[name] = result
      continue
    }
    const subs = (def.aggs ?? def.aggregations) as Defs | undefined
    Object.defineProperty(out, `${typedName(type, (def[type] ?? {}) as Record<string, unknown>, fieldType)}#${name}`, {
      value: subs ? withTypedSubs(result, subs, fieldType) : result,
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}

/** A result's sub-aggregations typed: in each bucket of a multi-bucket result, else beside its own keys. */
function withTypedSubs(result: unknown, subs: Defs, fieldType: FieldType): unknown {
  if (!result || typeof result !== 'object') return result
  const r = result as Record<string, unknown>
  const typedIn = (o: Record<string, unknown>) => {
    const entries = Object.entries(o)
    const own = Object.fromEntries(entries.filter(([k]) => !Object.hasOwn(subs, k)))
    return { ...own, ...typedKeys(Object.fromEntries(entries.filter(([k]) => Object.hasOwn(subs, k))), subs, fieldType) }
  }
  const buckets = r.buckets
  if (Array.isArray(buckets)) return { ...r, buckets: buckets.map((b) => typedIn(b as Record<string, unknown>)) }
  if (buckets && typeof buckets === 'object')
    return {
      ...r,
      buckets: Object.fromEntries(Object.entries(buckets).map(([k, b]) => [k, typedIn(b as Record<string, unknown>)])),
    }
  return typedIn(r)
}

/**
 * `buckets_path`, as OpenSearch reads it (AggregationPath, the aggregations' getProperty and
 * BucketHelpers.resolveBucketValue), over the rendered results of a bucket's sub-aggregations:
 * `agg>agg>metric`, `agg.metric` or `agg[99.9]` for one value of a multi-value metric, `_count`,
 * `_key`, `agg._bucket_count`, and `agg['key']>...` for one bucket of a multi-bucket aggregation
 * on the way. A path through any other multi-bucket aggregation names many values, which
 * OpenSearch refuses. A value of a bucket without documents, or one that is not a finite number,
 * is a gap: skipped (NaN) or read as 0, by the pipeline's `gap_policy`.
 */
import { IllegalArgument, StoreError } from '../errors'
import { isObject } from '../query/doc'
import { own } from '../own'
import type { Key } from './aggs-order'
import { javaDouble } from './java-double'

export type GapPolicy = 'skip' | 'insert_zeros'
/** One level's aggregation definitions (an `aggs` object). */
export type Defs = Record<string, unknown>
export type Rendered = Record<string, unknown>

/** One `>`-separated element of a path: an aggregation's name, and what follows its `.` or is in its `[]`. */
interface PathElement {
  name: string
  key?: string
}

/** OpenSearch's aggregation_execution_exception (a 500 there; the request's fault, so a 400 here). */
const executionError = (reason: string) => new StoreError('aggregation_execution_exception', 400, reason)

export function parsePath(path: string): PathElement[] {
  const parts = path
    .split('>')
    .map((p) => p.trim())
    .filter((p) => p !== '')
  if (parts.length === 0) throw new IllegalArgument(`Invalid path [${path}]`)
  return parts.map((element, i) => {
    const invalid = () => executionError(`Invalid path element [${element}] in path [${path}]`)
    const bracket = element.lastIndexOf('[')
    if (bracket >= 0) {
      if (bracket === 0 || bracket > element.length - 3 || !element.endsWith(']')) throw invalid()
      return { name: element.slice(0, bracket), key: element.slice(bracket + 1, -1) }
    }
    // Only the last element may name a metric after a dot (`the_stats.avg`, `the_percentiles.99`).
    const dot = i === parts.length - 1 ? element.lastIndexOf('.') : -1
    if (dot < 0) return { name: element }
    if (dot === 0 || dot > element.length - 2) throw invalid()
    return { name: element.slice(0, dot), key: element.slice(dot + 1) }
  })
}

/** The path as a list of names and keys (OpenSearch's getPathElementsAsStringList). */
export const pathSteps = (path: string): string[] => parsePath(path).flatMap((e) => (e.key === undefined ? [e.name] : [e.name, e.key]))

const META_KEYS = new Set(['aggs', 'aggregations', 'meta'])

/** An aggregation definition's type (its one key besides aggs and meta). */
export function typeOf(def: unknown): string {
  return (isObject(def) && Object.keys(def).find((k) => !META_KEYS.has(k))) || ''
}

export function subsOf(def: unknown): Defs {
  const subs = isObject(def) ? (def.aggs ?? def.aggregations) : undefined
  return isObject(subs) ? subs : {}
}

/** The rendered buckets of a multi-bucket aggregation, with what reading paths in them needs. */
export interface Buckets {
  name: string
  type: string
  /** The definitions of the buckets' sub-aggregations. */
  defs: Defs
  items: Rendered[]
  /** Whether the result is keyed: its buckets in an object, by name. */
  keyed: boolean
  /**
   * Each bucket's name: its place in the object of a keyed result, else its position (what
   * OpenSearch names the unnamed buckets of an anonymous `filters` by).
   */
  names: Map<Rendered, string>
}

export function bucketsOf(name: string, type: string, defs: Defs, result: Rendered): Buckets {
  const raw = result.buckets
  const keyed = !Array.isArray(raw)
  const entries = keyed ? Object.entries(isObject(raw) ? raw : {}) : raw.map((b, i) => [String(i), b] as const)
  const names = new Map<Rendered, string>()
  for (const [k, b] of entries) if (isObject(b)) names.set(b, k)
  return { name, type, defs, items: [...names.keys()], keyed, names }
}

export function keyOf(of: Buckets, b: Rendered): Key {
  return (b.key as Key | undefined) ?? of.names.get(b) ?? ''
}

/** A bucket's key as OpenSearch writes it as text (max_bucket's `keys`, `agg['key']` paths). */
export function keyText(of: Buckets, b: Rendered): string {
  if (typeof b.key_as_string === 'string') return b.key_as_string
  const key = keyOf(of, b)
  if (typeof key === 'string') return key
  return of.type === 'terms' && Number.isInteger(key) ? String(key) : javaDouble(key)
}

/** What a path names when it is not a number: the Java class OpenSearch names in its error. */
interface NotANumber {
  className: string
  multiValue?: boolean
}
type Found = number | NotANumber

/** OpenSearch's InvalidAggregationPathException: the path names nothing in this bucket, which then has no value. */
class NothingThere extends Error {}

/**
 * The number at `path` (steps, see pathSteps) in bucket `b`: NaN for a gap skipped, undefined
 * where the path names nothing in this bucket. A path naming something else than a number is
 * OpenSearch's error.
 */
export function bucketValue(of: Buckets, b: Rendered, path: string[], gap: GapPolicy): number | undefined {
  let found: Found
  try {
    found = bucketProperty(of, b, path)
  } catch (e) {
    if (e instanceof NothingThere) return undefined
    throw e
  }
  if (typeof found !== 'number') throw resolutionError(path.length === 0 ? of.name : path[0], found)
  // A bucket's count is never missing; any other value of an empty bucket is a gap.
  const docCount = path.length === 1 && path[0] === '_count'
  if (!Number.isFinite(found) || (b.doc_count === 0 && !docCount)) return gap === 'insert_zeros' ? 0 : Number.NaN
  return found
}

function resolutionError(at: string, found: NotANumber): StoreError {
  const must = 'buckets_path must reference either a number value or a single value numeric metric aggregation'
  return executionError(
    found.multiValue
      ? `${must}, but [${at}] contains multiple values. Please specify which to use.`
      : `${must}, got: [${found.className}] at aggregation [${at}]`,
  )
}

function bucketProperty(of: Buckets, b: Rendered, path: string[]): Found {
  if (path.length === 0) return { className: 'Bucket' }
  const [head, ...rest] = path
  if (head === '_count' || head === '_key') {
    if (rest.length > 0) throw new NothingThere()
    return head === '_count' ? Number(b.doc_count) : keyProperty(of, b)
  }
  const def = own(of.defs, head)
  const result = own(b, head)
  if (def === undefined || !isObject(result)) throw new NothingThere()
  return aggProperty(head, def, result, rest)
}

const DATE_KEYS = new Set(['date_histogram', 'auto_date_histogram'])

function keyProperty(of: Buckets, b: Rendered): Found {
  if (DATE_KEYS.has(of.type)) return { className: 'ZonedDateTime' }
  const key = keyOf(of, b)
  return typeof key === 'number' ? key : { className: typeof key === 'string' ? 'String' : 'Map' }
}

/** Results that hold no number (their path must stop before them). */
const NOT_NUMERIC = new Set(['top_hits', 'scripted_metric', 'geo_bounds', 'geo_centroid'])

function aggProperty(name: string, def: unknown, result: Rendered, path: string[]): Found {
  const type = typeOf(def)
  if (result.buckets !== undefined) return multiBucketProperty(name, def, result, path)
  if (typeof result.doc_count === 'number') {
    if (path.length === 0) return { className: resultClass(type, result) }
    const [head, ...rest] = path
    if (head === '_count') {
      if (rest.length > 0) throw new IllegalArgument('_count must be the last element in the path')
      return result.doc_count
    }
    const sub = own(result, head)
    const subDef = own(subsOf(def), head)
    if (subDef === undefined || !isObject(sub)) throw new IllegalArgument(`Cannot find an aggregation named [${head}] in [${name}]`)
    return aggProperty(head, subDef, sub, rest)
  }
  if ('value' in result) {
    const [metric = 'value'] = path
    if (path.length <= 1 && (metric === 'value' || (type === 'derivative' && metric === 'normalized_value')))
      return numberOf(result[metric])
    throw new IllegalArgument(`path not supported for [${name}]: [${path.join(', ')}]`)
  }
  if (NOT_NUMERIC.has(type)) return { className: resultClass(type, result) }
  if (path.length === 0) return { className: resultClass(type, result), multiValue: true }
  if (path.length > 1) throw new IllegalArgument(`path not supported for [${name}]: [${path.join(', ')}]`)
  return metricValue(type, result, path[0])
}

function multiBucketProperty(name: string, def: unknown, result: Rendered, path: string[]): Found {
  if (path.length === 0) return { className: resultClass(typeOf(def), result) }
  const of = bucketsOf(name, typeOf(def), subsOf(def), result)
  const [head, ...rest] = path
  if (head === '_bucket_count') return of.items.length
  // `agg['key']`: that one bucket.
  if (head.length >= 2 && head.startsWith("'") && head.endsWith("'")) {
    const b = of.items.find((x) => keyText(of, x) === head.slice(1, -1))
    if (!b) throw new NothingThere()
    return bucketProperty(of, b, rest)
  }
  return { className: 'Object[]' }
}

/** One value of a multi-value metric: a stats field, or a percentile by its percent. */
function metricValue(type: string, result: Rendered, metric: string): number {
  const values = result.values
  if (values !== undefined) {
    const percent = Number(metric)
    const entries = Array.isArray(values)
      ? values.filter(isObject).map((e) => [Number(e.key), e.value] as const)
      : Object.entries(isObject(values) ? values : {})
          .filter(([k]) => !k.endsWith('_as_string'))
          .map(([k, v]) => [Number(k), v] as const)
    const hit = entries.find(([p]) => p === percent)
    if (!hit)
      throw new IllegalArgument(
        `Percent requested [${javaDouble(percent)}] was not one of the computed percentiles.  Available keys are: [${entries.map(([p]) => javaDouble(p)).join(', ')}]`,
      )
    return numberOf(hit[1])
  }
  if (Object.hasOwn(result, metric) && !metric.endsWith('_as_string') && !isObject(result[metric])) return numberOf(result[metric])
  const stats = type.startsWith('extended_stats') ? 'InternalExtendedStats' : 'InternalStats'
  throw new IllegalArgument(`No enum constant org.opensearch.search.aggregations.metrics.${stats}.Metrics.${metric}`)
}

const numberOf = (v: unknown): number => (typeof v === 'number' ? v : Number.NaN)

const CLASS_NAMES: Record<string, string> = {
  histogram: 'InternalHistogram',
  date_histogram: 'InternalDateHistogram',
  range: 'InternalRange',
  date_range: 'InternalDateRange',
  top_hits: 'InternalTopHits',
  stats_bucket: 'InternalStatsBucket',
  extended_stats_bucket: 'InternalExtendedStatsBucket',
  percentiles_bucket: 'InternalPercentilesBucket',
  percentiles: 'InternalTDigestPercentiles',
}

/** The Java class of a result, as OpenSearch's errors name it (terms by their keys' type). */
export function resultClass(type: string, result: Rendered): string {
  if (type === 'terms') {
    const keys = Array.isArray(result.buckets) ? result.buckets.map((b) => (isObject(b) ? b.key : undefined)) : []
    if (keys.length > 0 && keys.every((k) => typeof k === 'number')) return keys.every(Number.isInteger) ? 'LongTerms' : 'DoubleTerms'
    return 'StringTerms'
  }
  return CLASS_NAMES[type] ?? `Internal${type.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())}`
}

/**
 * Pipeline aggregations, as OpenSearch 3.x answers them. They read no documents: they are made
 * from the rendered results of the other aggregations, after them. Sibling pipelines
 * (`avg_bucket`, `sum_bucket`, `min_bucket`, `max_bucket`, `stats_bucket`,
 * `extended_stats_bucket`, `percentiles_bucket`) make a result of their own from the buckets of an
 * aggregation beside them; parent pipelines (`derivative`, `cumulative_sum`, `serial_diff`,
 * `moving_fn`, `bucket_script`, `bucket_selector`, `bucket_sort`) rewrite the buckets of the
 * multi-bucket aggregation they are declared in, in OpenSearch's order (a pipeline after those its
 * paths read). Every `buckets_path` is read by aggs-buckets-path.ts. The request is checked first
 * as OpenSearch checks it: parse errors, then its validation's (a 400 listing them all).
 */
import { FieldParseError, IllegalArgument, ParsingError, StoreError } from '../errors'
import { isObject } from '../query/doc'
import { jsonToken } from '../../json'
import { own, setOwn } from '../own'
import { definePipelines } from './aggs'
import {
  type Buckets,
  bucketsOf,
  bucketValue,
  type Defs,
  type GapPolicy,
  keyOf,
  keyText,
  parsePath,
  pathSteps,
  type Rendered,
  resultClass,
  subsOf,
  typeOf,
} from './aggs-buckets-path'
import { extendedStatsResult, type Moments, statsResult } from './aggs-metrics'
import { compareKeys } from './aggs-order'
import { javaDouble } from './java-double'
import { decimalFormat, type DecimalFormat } from './decimal-format'
import * as MovingFunctions from './moving-functions'
import { compileScript, Int, num, primitiveName, type Script, ScriptFailure, type Value } from './painless-expression'

type Params = Record<string, unknown>

/** Where a pipeline is declared, as its validation sees it. */
interface Where {
  /** The aggregation holding it (none at the top level). */
  parent?: { type: string; params: Params }
  /** The other, non-pipeline, aggregations of its level. */
  siblings: Defs
}

interface Checked {
  /** The paths OpenSearch orders a level's pipelines by and checks exist (its getBucketsPaths). */
  paths: string[]
  /** OpenSearch's validate(): what is wrong with the pipeline where it is declared. */
  validate(where: Where): string[]
}
/** What a pipeline does: a result of its own (sibling), or its parent's buckets rewritten. */
type Behaviour = Checked &
  ({ kind: 'sibling'; compute(level: Readonly<Rendered>, defs: Defs): Rendered } | { kind: 'parent'; apply(of: Buckets): Rendered[] })
type Pipeline = Behaviour & { name: string; type: string }

/** A pipeline's definition, its fields checked as OpenSearch's parser of its type checks them. */
class Spec {
  /** The `format` of its values (OpenSearch's DocValueFormat.Decimal). */
  readonly format: DecimalFormat | undefined
  readonly gapPolicy: GapPolicy

  constructor(
    readonly name: string,
    readonly type: string,
    readonly params: Params,
    readonly meta: Params | undefined,
  ) {
    checkFields(name, type, params, TYPES[type])
    this.format = typeof params.format === 'string' ? decimalFormat(params.format) : undefined
    const g = params.gap_policy ?? 'skip'
    if (g !== 'skip' && g !== 'insert_zeros') {
      const invalid = new ParsingError(`Invalid gap policy: [${String(g)}], accepted values: [insert_zeros, skip]`)
      if (TYPES[type].parser !== 'object') throw invalid
      throw new StoreError('x_content_parse_exception', 400, `[${type}] failed to parse field [gap_policy]`, {
        caused_by: { type: invalid.type, reason: invalid.reason },
      })
    }
    this.gapPolicy = g
  }

  /** A number as OpenSearch writes one of a result: null unless finite, and as text in the `format`. */
  number(key: string, v: number): Rendered {
    const finite = Number.isFinite(v)
    return { [key]: finite ? v : null, ...(finite && this.format ? { [`${key}_as_string`]: this.format(v) } : {}) }
  }

  /** A single value as OpenSearch's InternalSimpleValue renders it. */
  value(v: number, extra: Rendered = {}): Rendered {
    return { ...(this.meta ? { meta: this.meta } : {}), ...this.number('value', v), ...extra }
  }
}

/** How each type's parser words its errors, its fields and its other parameters' checks. */
interface TypeDef {
  kind: 'sibling' | 'parent'
  /** metrics: BucketMetricsParser; custom: a hand-written parser; object: an ObjectParser. */
  parser: 'metrics' | 'custom' | 'object'
  fields: string[]
  required: string[]
  make(spec: Spec): Behaviour
}

const METRIC_FIELDS = ['buckets_path', 'format', 'gap_policy']

const TYPES: Record<string, TypeDef> = {
  avg_bucket: bucketMetric((spec) => (values) => spec.value(values.length === 0 ? Number.NaN : sum(values) / values.length)),
  sum_bucket: bucketMetric((spec) => (values) => spec.value(sum(values))),
  min_bucket: bucketMetric((spec) => extreme(spec, -1)),
  max_bucket: bucketMetric((spec) => extreme(spec, 1)),
  stats_bucket: bucketMetric((spec) => (values) => statsResult(momentsOf(values), spec.format)),
  extended_stats_bucket: bucketMetric(extendedStats, ['sigma']),
  percentiles_bucket: bucketMetric(percentiles, ['percents', 'keyed']),
  derivative: parent('custom', ['buckets_path', 'format', 'gap_policy', 'unit'], ['buckets_path'], derivative),
  cumulative_sum: parent('object', ['buckets_path', 'format'], ['buckets_path'], cumulativeSum),
  serial_diff: parent('custom', ['buckets_path', 'format', 'gap_policy', 'lag'], ['buckets_path'], serialDiff),
  moving_fn: parent(
    'object',
    ['buckets_path', 'script', 'window', 'shift', 'format', 'gap_policy'],
    ['buckets_path', 'script', 'window'],
    movingFn,
  ),
  bucket_script: parent('object', ['buckets_path', 'script', 'format', 'gap_policy'], ['buckets_path', 'script'], bucketScript),
  bucket_selector: parent('custom', ['buckets_path', 'script', 'gap_policy'], ['buckets_path', 'script'], bucketSelector),
  bucket_sort: parent('object', ['sort', 'from', 'size', 'gap_policy'], [], bucketSort),
}

function parent(parser: TypeDef['parser'], fields: string[], required: string[], make: TypeDef['make']): TypeDef {
  return { kind: 'parent', parser, fields, required, make }
}

/** The pipeline type of a definition (undefined: not a pipeline). */
const pipelineType = (def: unknown): TypeDef | undefined => {
  const type = typeOf(def)
  return Object.hasOwn(TYPES, type) ? TYPES[type] : undefined
}

/** Parsed pipelines, by their definition object (a level is parsed again for each bucket holding it). */
const PARSED = new WeakMap<object, Pipeline>()

function pipelineAt(name: string, def: unknown): Pipeline {
  if (!isObject(def)) throw new ParsingError(`Expected [START_OBJECT] under [${name}]`)
  let p = PARSED.get(def)
  if (!p) {
    const type = typeOf(def)
    if (def.aggs !== undefined || def.aggregations !== undefined)
      throw new IllegalArgument(`Aggregation [${name}] cannot define sub-aggregations`)
    const params = def[type]
    if (!isObject(params)) throw new ParsingError(`[${type}] aggregation [${name}] must be an object`)
    const spec = new Spec(name, type, params, isObject(def.meta) ? def.meta : undefined)
    PARSED.set(def, (p = { name, type, ...TYPES[type].make(spec) } as Pipeline))
  }
  return p
}

/** Unknown and missing fields, worded as the type's parser words them. */
function checkFields(name: string, type: string, params: Params, def: TypeDef): void {
  for (const [key, v] of Object.entries(params)) {
    if (def.fields.includes(key)) continue
    const token = jsonToken(v)
    if (def.parser === 'metrics') throw new ParsingError(`Unexpected token ${token} [${key}] in [${name}]`)
    if (def.parser === 'object') throw new StoreError('x_content_parse_exception', 400, `[${type}] unknown field [${key}]`)
    const unknownKey = token === 'VALUE_STRING' || token === 'START_ARRAY' || (type === 'serial_diff' && token === 'VALUE_NUMBER')
    throw new ParsingError(unknownKey ? `Unknown key for a ${token} in [${name}]: [${key}].` : `Unexpected token ${token} in [${name}].`)
  }
  const missing = def.required.filter((k) => params[k] === undefined)
  if (missing.length === 0) return
  if (def.parser === 'object') throw new IllegalArgument(`Required [${missing.join(', ')}]`)
  const of = def.parser === 'metrics' ? 'aggregation' : `${type === 'serial_diff' ? 'derivative' : type} aggregation`
  throw new ParsingError(`Missing required field [${missing[0]}] for ${of} [${name}]`)
}

/** The one `buckets_path` of most pipelines (the first of a list). */
function singlePath(spec: Spec): string {
  const p = spec.params.buckets_path
  const path = Array.isArray(p) ? p[0] : p
  if (typeof path !== 'string') throw new ParsingError(`[buckets_path] must be a string in [${spec.name}]`)
  return path
}

/** `buckets_path` as bucket_script and bucket_selector read it: variables by name (`_value0`... for a list). */
function pathVariables(spec: Spec): Record<string, string> {
  const p = spec.params.buckets_path
  const named = typeof p === 'string' ? { _value: p } : Array.isArray(p) ? Object.fromEntries(p.map((x, i) => [`_value${i}`, x])) : p
  if (!isObject(named) || !Object.values(named).every((v) => typeof v === 'string'))
    throw new ParsingError(`[buckets_path] must be a string, a list or an object of strings in [${spec.name}]`)
  return named as Record<string, string>
}

// ---- Validation (OpenSearch's AggregatorFactories.validate and each builder's validate)

/** The aggregations OpenSearch counts as multi-bucket (bucketCardinality MANY; not composite). */
const MULTI_BUCKET = new Set([
  'terms',
  'histogram',
  'date_histogram',
  'auto_date_histogram',
  'variable_width_histogram',
  'range',
  'date_range',
  'ip_range',
  'geo_distance',
  'filters',
  'adjacency_matrix',
  'rare_terms',
  'multi_terms',
  'significant_terms',
  'significant_text',
  'geohash_grid',
  'geotile_grid',
])

const BUCKET_PACKAGES: Record<string, string> = {
  composite: 'bucket.composite',
  filter: 'bucket.filter',
  missing: 'bucket.missing',
  global: 'bucket.global',
  nested: 'bucket.nested',
  reverse_nested: 'bucket.nested',
  sampler: 'bucket.sampler',
}

/** The Java class of an aggregation's builder, as OpenSearch's validation names it. */
function builderClass(type: string): string {
  const simple = type.replace(/(^|_)([a-z])/g, (_, __, c: string) => c.toUpperCase())
  return `org.opensearch.search.aggregations.${BUCKET_PACKAGES[type] ?? 'metrics'}.${simple}AggregationBuilder`
}

/** Sibling pipelines: the first aggregation of the path is a multi-bucket one beside them. */
function validateSibling(spec: Spec, path: string, where: Where): string[] {
  const first = path.split(/[>.]/)[0]
  const def = own(where.siblings, first)
  if (def === undefined) return [`buckets_path aggregation does not exist for aggregation [${spec.name}]: ${path}`]
  if (!MULTI_BUCKET.has(typeOf(def)))
    return [
      `The first aggregation in buckets_path must be a multi-bucket aggregation for aggregation [${spec.name}] found :${builderClass(typeOf(def))} for buckets path: ${path}`,
    ]
  return []
}

/** derivative, cumulative_sum, serial_diff and moving_fn need buckets in key order, every key present. */
function validateSequential(spec: Spec, where: Where): string[] {
  const must = `${spec.type} aggregation [${spec.name}] must have a histogram, date_histogram or auto_date_histogram as parent`
  if (!where.parent) return [`${must} but doesn't have a parent`]
  const { type, params } = where.parent
  if (type === 'auto_date_histogram') return []
  if (type !== 'histogram' && type !== 'date_histogram') return [must]
  return Number(params.min_doc_count ?? 0) !== 0
    ? [`parent histogram of ${spec.type} aggregation [${spec.name}] must have min_doc_count of 0`]
    : []
}

function validateHasParent(spec: Spec, where: Where): string[] {
  return where.parent ? [] : [`${spec.type} aggregation [${spec.name}] must be declared inside of another aggregation`]
}

/** The request's pipeline errors: every pipeline parsed, then the tree validated level by level. */
function check(aggs: Defs): void {
  parseAll(aggs)
  const errors: string[] = []
  validateLevel(aggs, undefined, errors)
  if (errors.length > 0)
    throw new StoreError(
      'action_request_validation_exception',
      400,
      `Validation Failed: ${errors.map((e, i) => `${i + 1}: ${e};`).join('')}`,
    )
}

function parseAll(defs: Defs): void {
  for (const [name, def] of Object.entries(defs)) {
    if (pipelineType(def)) pipelineAt(name, def)
    else parseAll(subsOf(def))
  }
}

function validateLevel(defs: Defs, parent: Where['parent'], errors: string[]): void {
  const siblings = Object.fromEntries(Object.entries(defs).filter(([, def]) => !pipelineType(def)))
  try {
    for (const p of ordered(defs)) errors.push(...p.validate({ parent, siblings }))
  } catch (e) {
    if (!(e instanceof IllegalArgument)) throw e
    errors.push(e.reason)
  }
  for (const def of Object.values(siblings)) {
    const type = typeOf(def)
    const params = isObject(def) && isObject(def[type]) ? def[type] : {}
    validateLevel(subsOf(def), { type, params }, errors)
  }
}

/**
 * A level's pipelines in the order OpenSearch runs them: as declared, each after the pipelines
 * its paths start with. A path must name aggregations that exist.
 */
function ordered(defs: Defs): Pipeline[] {
  const pipelines = new Map<string, Pipeline>()
  for (const [name, def] of Object.entries(defs)) if (pipelineType(def)) pipelines.set(name, pipelineAt(name, def))
  const out: Pipeline[] = []
  const visiting = new Set<Pipeline>()
  const visit = (p: Pipeline) => {
    if (out.includes(p)) return
    if (visiting.has(p)) throw new IllegalArgument(`Cyclical dependency found with pipeline aggregator [${p.name}]`)
    visiting.add(p)
    for (const path of p.paths) {
      if (path === '_count' || path === '_key') continue
      const elements = parsePath(path)
      const first = own(defs, elements[0].name)
      const dependency = pipelines.get(elements[0].name)
      if (first !== undefined && !dependency)
        checkSubPath(
          first,
          elements.map((e) => e.name),
          path,
        )
      else if (dependency) visit(dependency)
      else throw new IllegalArgument(`No aggregation found for path [${path}]`)
    }
    visiting.delete(p)
    out.push(p)
  }
  for (const p of pipelines.values()) visit(p)
  return out
}

/** Each name after the first is a sub-aggregation of the one before (the last may be a pipeline, `_count` or `_key`). */
function checkSubPath(def: unknown, names: string[], path: string): void {
  for (let i = 1; i < names.length; i++) {
    const name = names[i]
    const last = i === names.length - 1
    if (last && (name.toLowerCase() === '_key' || name === '_count')) return
    const sub = own(subsOf(def), name)
    if (sub !== undefined && !pipelineType(sub)) def = sub
    else if (!(last && sub !== undefined)) throw new IllegalArgument(`No aggregation [${name}] found for path [${path}]`)
  }
}

// ---- Sibling pipelines (OpenSearch's BucketMetricsPipelineAggregator)

type Collected = Array<{ key: string; value: number }>
/** A sibling pipeline's result from the values it collected (and the keys of their buckets). */
type Render = (values: number[], keys: string[]) => Rendered

/** A sibling pipeline type: `renderer` reads the type's own parameters and answers how it renders. */
function bucketMetric(renderer: (spec: Spec) => Render, extra: string[] = []): TypeDef {
  return {
    kind: 'sibling',
    parser: 'metrics',
    fields: [...METRIC_FIELDS, ...extra],
    required: ['buckets_path'],
    make(spec) {
      const path = singlePath(spec)
      const render = renderer(spec)
      return {
        kind: 'sibling',
        paths: [path],
        validate: (where) => validateSibling(spec, path, where),
        compute(level, defs) {
          const collected = siblingValues(path, spec.gapPolicy, level, defs)
          const rendered = render(
            collected.map((c) => c.value),
            collected.map((c) => c.key),
          )
          return { ...(spec.meta ? { meta: spec.meta } : {}), ...rendered }
        },
      }
    },
  }
}

/** The values at `path` in each bucket of the aggregation it starts with (gaps skipped). */
function siblingValues(path: string, gap: GapPolicy, level: Readonly<Rendered>, defs: Defs): Collected {
  const [first, ...rest] = pathSteps(path)
  const result = own(level, first)
  if (!isObject(result)) return []
  const def = own(defs, first)
  const of = bucketsOf(first, typeOf(def), subsOf(def), result)
  const out: Collected = []
  for (const b of of.items) {
    const value = bucketValue(of, b, rest, gap)
    if (value !== undefined && !Number.isNaN(value)) out.push({ key: keyText(of, b), value })
  }
  return out
}

const sum = (values: number[]) => values.reduce((s, v) => s + v, 0)

/** min_bucket (-1) and max_bucket (1): the value and the keys of every bucket holding it. */
function extreme(spec: Spec, dir: 1 | -1): Render {
  return (values, keys) => {
    let best = dir === 1 ? -Infinity : Infinity
    let at: string[] = []
    values.forEach((v, i) => {
      if (dir === 1 ? v > best : v < best) [best, at] = [v, [keys[i]]]
      else if (v === best) at.push(keys[i])
    })
    return spec.value(best, { keys: at })
  }
}

/** The sums of the values, added as OpenSearch adds them (in order, no compensation). */
function momentsOf(values: number[]): Moments {
  let [total, squares, min, max] = [0, 0, Infinity, -Infinity]
  for (const v of values) {
    total += v
    squares += v * v
    min = Math.min(min, v)
    max = Math.max(max, v)
  }
  return { count: values.length, sum: total, sumSq: squares, min, max }
}

function extendedStats(spec: Spec): Render {
  const sigma = spec.params.sigma ?? 2
  if (typeof sigma !== 'number') throw new ParsingError(`Unexpected token ${jsonToken(sigma)} [sigma] in [${spec.name}]`)
  if (!(sigma >= 0)) throw new IllegalArgument('sigma must be a non-negative double')
  return (values) => {
    const m = momentsOf(values)
    return { ...statsResult(m, spec.format), ...extendedStatsResult(m, sigma, spec.format) }
  }
}

const DEFAULT_PERCENTS = [1, 5, 25, 50, 75, 95, 99]

/** percentiles_bucket: the value at each percent of the sorted values (the nearest rank, rounded as OpenSearch does). */
function percentiles(spec: Spec): Render {
  const { percents = DEFAULT_PERCENTS, keyed = true } = spec.params
  if (!Array.isArray(percents)) throw new ParsingError(`Unexpected token ${jsonToken(percents)} [percents] in [${spec.name}]`)
  if (typeof keyed !== 'boolean') throw new ParsingError(`Unexpected token ${jsonToken(keyed)} [keyed] in [${spec.name}]`)
  if (!percents.every((p) => typeof p === 'number' && p >= 0 && p <= 100))
    throw new IllegalArgument('percents must only contain non-null doubles from 0.0-100.0 inclusive')
  return (values) => {
    const sorted = [...values].sort((a, b) => a - b)
    const at = (p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.floor((p / 100) * (sorted.length - 1) + 0.5)])
    if (keyed) return { values: Object.assign({}, ...(percents as number[]).map((p) => spec.number(javaDouble(p), at(p)))) }
    return {
      values: (percents as number[]).map((p) => {
        // Listed, each percent's text is still named by its percent.
        const { value, value_as_string: text } = spec.number('value', at(p))
        return { key: p, value, ...(text === undefined ? {} : { [`${javaDouble(p)}_as_string`]: text }) }
      }),
    }
  }
}

// ---- Parent pipelines (each adds its value to the buckets it has one for, or selects or sorts them)

/** `unit`: a date unit (`day`, `1M`...) or a time value (`6h`), in milliseconds. */
const DATE_UNITS: Record<string, number> = {
  year: 31_556_952_000,
  '1y': 31_556_952_000,
  quarter: 7_889_238_000,
  '1q': 7_889_238_000,
  month: 2_629_746_000,
  '1M': 2_629_746_000,
  week: 604_800_000,
  '1w': 604_800_000,
  day: 86_400_000,
  '1d': 86_400_000,
  hour: 3_600_000,
  '1h': 3_600_000,
  minute: 60_000,
  '1m': 60_000,
  second: 1_000,
  '1s': 1_000,
}
const TIME_UNITS: Record<string, number> = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }

function unitMillis(unit: string): number {
  if (DATE_UNITS[unit] !== undefined) return DATE_UNITS[unit]
  const m = /^(.*?)(nanos|micros|ms|s|m|h|d)$/.exec(unit.toLowerCase().trim())
  if (!m)
    throw new IllegalArgument(
      `failed to parse setting [DerivativePipelineAggregationBuilder.unit] with value [${unit}] as a time value: unit is missing or unrecognized`,
    )
  if (!/^-?\d+$/.test(m[1].trim())) throw new IllegalArgument(`failed to parse [${unit}]`)
  return Number(m[1]) * TIME_UNITS[m[2]]
}

function derivative(spec: Spec): Behaviour {
  const path = pathSteps(singlePath(spec))
  const gap = spec.gapPolicy
  const unit = typeof spec.params.unit === 'string' ? unitMillis(spec.params.unit) : undefined
  return {
    kind: 'parent',
    paths: [singlePath(spec)],
    validate: (where) => validateSequential(spec, where),
    apply(of) {
      let last: { key: number; value: number | undefined } | undefined
      for (const b of of.items) {
        const key = Number(keyOf(of, b))
        const value = bucketValue(of, b, path, gap)
        if (last?.value !== undefined && value !== undefined) {
          const gradient = value - last.value
          const perUnit = unit === undefined ? {} : spec.number('normalized_value', gradient / ((key - last.key) / unit))
          setOwn<unknown>(b, spec.name, spec.value(gradient, perUnit))
        }
        last = { key, value }
      }
      return of.items
    },
  }
}

function cumulativeSum(spec: Spec): Behaviour {
  const given = spec.params.buckets_path
  const paths = (Array.isArray(given) ? given : [given]).map(String)
  const path = pathSteps(paths[0])
  return {
    kind: 'parent',
    paths,
    validate: (where) => [
      ...(paths.length !== 1 ? [`buckets_path must contain a single entry for aggregation [${spec.name}]`] : []),
      ...validateSequential(spec, where),
    ],
    apply(of) {
      let total = 0
      for (const b of of.items) {
        // Gaps count as 0 whatever the gap policy.
        const value = bucketValue(of, b, path, 'insert_zeros')
        if (value !== undefined && Number.isFinite(value)) total += value
        setOwn<unknown>(b, spec.name, spec.value(total))
      }
      return of.items
    },
  }
}

function serialDiff(spec: Spec): Behaviour {
  const path = pathSteps(singlePath(spec))
  const gap = spec.gapPolicy
  const lag = spec.params.lag ?? 1
  if (typeof lag !== 'number' || !Number.isInteger(lag) || lag <= 0)
    throw new ParsingError(`Lag must be a positive, non-zero integer.  Value supplied was${String(lag)} in [${spec.name}]: [lag].`)
  return {
    kind: 'parent',
    paths: [singlePath(spec)],
    validate: (where) => validateSequential(spec, where),
    apply(of) {
      const seen: number[] = []
      for (const b of of.items) {
        const value = bucketValue(of, b, path, gap) ?? Number.NaN
        const before = seen.length >= lag ? seen[seen.length - lag] : Number.NaN
        if (!Number.isNaN(value) && !Number.isNaN(before)) setOwn<unknown>(b, spec.name, spec.value(value - before))
        seen.push(value)
      }
      return of.items
    },
  }
}

/**
 * A parameter refused once OpenSearch's ObjectParser builds the pipeline: when its last required
 * field arrives (moving_fn's window, reported at that field), or at the end (bucket_sort's from and size).
 */
function buildError(spec: Spec, field: string, reason: string): StoreError {
  const failed = `Failed to build [${spec.type}] after last required field arrived`
  const why = { type: 'illegal_argument_exception', reason }
  const last = Object.keys(spec.params).filter((k) => TYPES[spec.type].required.includes(k))
  if (last.length > 0)
    return new StoreError('x_content_parse_exception', 400, `[${spec.type}] failed to parse field [${last[last.length - 1]}]`, {
      caused_by: { type: 'x_content_parse_exception', reason: failed, caused_by: why },
    })
  return new StoreError('x_content_parse_exception', 400, failed.replace('Failed', 'failed'), {
    caused_by: { type: 'x_content_parse_exception', reason: `[${spec.type}] failed to parse field [${field}]`, caused_by: why },
  })
}

function intField(spec: Spec, field: string, fallback: number): number {
  const v = spec.params[field] ?? fallback
  const n = typeof v === 'string' && /^-?\d+$/.test(v.trim()) ? Number(v) : v
  if (typeof n !== 'number' || !Number.isInteger(n))
    throw new StoreError('x_content_parse_exception', 400, `[${spec.type}] failed to parse field [${field}]`, {
      caused_by: { type: 'number_format_exception', reason: `For input string: "${String(v)}"` },
    })
  return n
}

const MOVING_FUNCTIONS = {
  MovingFunctions: {
    max: (v: Value) => MovingFunctions.max(doubles(v)),
    min: (v: Value) => MovingFunctions.min(doubles(v)),
    sum: (v: Value) => MovingFunctions.sum(doubles(v)),
    unweightedAvg: (v: Value) => MovingFunctions.unweightedAvg(doubles(v)),
    linearWeightedAvg: (v: Value) => MovingFunctions.linearWeightedAvg(doubles(v)),
    stdDev: (v: Value, avg: Value) => MovingFunctions.stdDev(doubles(v), num(avg)),
    ewma: (v: Value, alpha: Value) => MovingFunctions.ewma(doubles(v), num(alpha)),
    holt: (v: Value, alpha: Value, beta: Value) => MovingFunctions.holt(doubles(v), num(alpha), num(beta)),
    holtWinters: (v: Value, alpha: Value, beta: Value, gamma: Value, period: Value, multiplicative: Value) => {
      try {
        return MovingFunctions.holtWinters(doubles(v), num(alpha), num(beta), num(gamma), num(period), multiplicative === true)
      } catch (e) {
        if (e instanceof RangeError) throw new ScriptFailure('illegal_argument_exception', e.message)
        throw e
      }
    },
  },
}

const doubles = (v: Value): number[] => {
  if (!Array.isArray(v)) throw new ScriptFailure('class_cast_exception', `Cannot cast ${primitiveName(v)} to double[]`)
  return v.map((x) => num(x as Value))
}

function movingFn(spec: Spec): Behaviour {
  if (typeof spec.params.buckets_path !== 'string')
    throw new StoreError(
      'x_content_parse_exception',
      400,
      `[${spec.type}] buckets_path doesn't support values of type: ${jsonToken(spec.params.buckets_path)}`,
    )
  const window = intField(spec, 'window', 0)
  if (window <= 0) throw buildError(spec, 'window', '[window] must be a positive, non-zero integer.')
  const shift = intField(spec, 'shift', 0)
  if (spec.params.format === '') throw new FieldParseError(spec.type, 'format', '[format] must not be null or an empty string.')
  const path = pathSteps(spec.params.buckets_path)
  const gap = spec.gapPolicy
  const script = compileScript(spec.params.script, ['values'], MOVING_FUNCTIONS)
  return {
    kind: 'parent',
    paths: [spec.params.buckets_path],
    validate: (where) => validateSequential(spec, where),
    apply(of) {
      const read = of.items.map((b) => bucketValue(of, b, path, gap))
      const values = read.filter((v): v is number => v !== undefined && !Number.isNaN(v))
      let index = 0
      of.items.forEach((b, i) => {
        const v = read[i]
        if (v === undefined || Number.isNaN(v)) return
        // The window ends `shift` values after this one (excluded), both ends kept within the values.
        const clamp = (n: number) => Math.min(Math.max(n, 0), values.length)
        const inWindow = values.slice(clamp(index - window + shift), clamp(index + shift))
        setOwn<unknown>(b, spec.name, spec.value(numberFrom(script, script.run({ params: script.params, values: inWindow }))))
        index++
      })
      return of.items
    },
  }
}

/** What a script answered, as the number its context expects. */
function numberFrom(script: Script, returned: Value): number {
  if (typeof returned === 'number' || returned instanceof Int) return num(returned)
  throw script.error('class_cast_exception', `Cannot cast from [${primitiveName(returned)}] to [java.lang.Number].`, 'compile')
}

/** The variables of a bucket_script or bucket_selector for one bucket (undefined: skip the bucket). */
function scriptVariables(of: Buckets, b: Rendered, paths: Array<[string, string[]]>, gap: GapPolicy, skipGaps: boolean) {
  const vars: Record<string, Value> = {}
  for (const [name, path] of paths) {
    const v = bucketValue(of, b, path, gap)
    if (skipGaps && gap === 'skip' && (v === undefined || Number.isNaN(v))) return undefined
    vars[name] = v ?? null
  }
  return vars
}

/** What bucket_script and bucket_selector share: their script, the paths of its variables, their gap policy. */
function scripted(spec: Spec) {
  const variables = pathVariables(spec)
  return {
    paths: Object.entries(variables).map(([k, v]) => [k, pathSteps(v)] as [string, string[]]),
    sorted: sortedPaths(variables),
    gap: spec.gapPolicy,
    script: compileScript(spec.params.script),
  }
}

function bucketScript(spec: Spec): Behaviour {
  const { paths, sorted, gap, script } = scripted(spec)
  return {
    kind: 'parent',
    paths: sorted,
    validate: (where) => validateHasParent(spec, where),
    apply(of) {
      for (const b of of.items) {
        const vars = scriptVariables(of, b, paths, gap, true)
        if (!vars) continue
        const returned = script.run({ params: { ...script.params, ...vars } })
        if (returned !== null) setOwn<unknown>(b, spec.name, spec.value(numberFrom(script, returned)))
      }
      return of.items
    },
  }
}

/** The paths in the order of their variables' names (OpenSearch keeps them in a TreeMap). */
const sortedPaths = (variables: Record<string, string>) =>
  Object.keys(variables)
    .sort()
    .map((k) => variables[k])

function bucketSelector(spec: Spec): Behaviour {
  const { paths, sorted, gap, script } = scripted(spec)
  return {
    kind: 'parent',
    paths: sorted,
    validate: (where) => validateHasParent(spec, where),
    apply(of) {
      return of.items.filter((b) => {
        const kept = script.run({ params: { ...script.params, ...scriptVariables(of, b, paths, gap, false) } })
        if (typeof kept !== 'boolean') throw script.error('class_cast_exception', `cannot cast def [${primitiveName(kept)}] to boolean`)
        return kept
      })
    },
  }
}

/** `sort` of bucket_sort: field sorts (`"path"`, `{"path": "desc"}`, `{"path": {"order": "desc"}}`), one or a list. */
function parseSorts(spec: Spec): Array<{ path: string; dir: 1 | -1 }> {
  const given = spec.params.sort
  if (given === undefined) return []
  if (!Array.isArray(given) && !isObject(given))
    throw new StoreError('x_content_parse_exception', 400, `[${spec.type}] sort doesn't support values of type: ${jsonToken(given)}`)
  return (Array.isArray(given) ? given : [given]).flatMap((s) => {
    if (typeof s === 'string') return [{ path: s, dir: 1 as const }]
    if (!isObject(s))
      throw new StoreError('x_content_parse_exception', 400, `[${spec.type}] sort doesn't support values of type: ${jsonToken(s)}`)
    return Object.entries(s).map(([path, o]) => {
      const order = isObject(o) ? o.order : o
      if (order !== undefined && order !== 'asc' && order !== 'desc') throw new IllegalArgument(`Unknown SortOrder [${String(order)}]`)
      return { path, dir: order === 'desc' ? (-1 as const) : (1 as const) }
    })
  })
}

function bucketSort(spec: Spec): Behaviour {
  const sorts = parseSorts(spec)
  const from = intField(spec, 'from', 0)
  if (from < 0) throw buildError(spec, 'from', `[from] must be a non-negative integer: [${from}]`)
  const size = spec.params.size === undefined ? undefined : intField(spec, 'size', 0)
  if (size !== undefined && size <= 0) throw buildError(spec, 'size', `[size] must be a positive integer: [${size}]`)
  const gap = spec.gapPolicy
  return {
    kind: 'parent',
    paths: sorts.map((s) => s.path),
    validate: (where) => [
      ...validateHasParent(spec, where),
      ...(sorts.length === 0 && size === undefined && from === 0
        ? [`[${spec.name}] is configured to perform nothing. Please set either of [sort, size, from] to use bucket_sort`]
        : []),
    ],
    apply(of) {
      const end = from + (size ?? of.items.length)
      if (sorts.length === 0) return of.items.slice(from, end)
      const keyed = of.items.map((b) => ({ b, values: sortValues(of, b, sorts, gap) }))
      // Buckets with no value to sort on are dropped under the skip policy (as OpenSearch does).
      const kept = keyed.filter((k) => k.values.some((v) => v !== undefined))
      kept.sort((x, y) => compareSortValues(x.values, y.values, sorts))
      return kept.slice(from, end).map((k) => k.b)
    },
  }
}

type SortValue = number | string | undefined

function sortValues(of: Buckets, b: Rendered, sorts: Array<{ path: string }>, gap: GapPolicy): SortValue[] {
  return sorts.map(({ path }) => {
    if (path === '_key') return keyOf(of, b)
    const v = bucketValue(of, b, pathSteps(path), gap)
    return gap === 'skip' && (v === undefined || Number.isNaN(v)) ? undefined : v
  })
}

/** A bucket without a sort's value comes after those with one. */
function compareSortValues(x: SortValue[], y: SortValue[], sorts: Array<{ dir: 1 | -1 }>): number {
  for (let i = 0; i < sorts.length; i++) {
    const a = x[i]
    const b = y[i]
    if (a === undefined && b === undefined) continue
    if (a === undefined) return 1
    if (b === undefined) return -1
    const c = compareKeys(a, b) * sorts[i].dir
    if (c !== 0) return c
  }
  return 0
}

// ---- Where pipelines run

/** A level's parent pipelines, in order, by the level's definitions (parsed again for each bucket holding them). */
const PARENTS = new WeakMap<object, Pipeline[]>()

function parentsOf(subs: Defs): Pipeline[] {
  let list = PARENTS.get(subs)
  if (!list) {
    const any = Object.values(subs).some((d) => pipelineType(d)?.kind === 'parent')
    PARENTS.set(subs, (list = any ? ordered(subs).filter((p) => p.kind === 'parent') : []))
  }
  return list
}

/** The result of multi-bucket aggregation `name` with its parent pipelines applied to its buckets. */
function rewrite(name: string, type: string, subs: Defs, pipelines: Pipeline[], result: Rendered): Rendered {
  if (result.buckets === undefined) {
    const from = `org.opensearch.search.aggregations.${BUCKET_PACKAGES[type] ?? 'metrics'}.${resultClass(type, result)}`
    const to = 'org.opensearch.search.aggregations.InternalMultiBucketAggregation'
    throw new StoreError(
      'class_cast_exception',
      400,
      `class ${from} cannot be cast to class ${to} (${from} and ${to} are in unnamed module of loader 'app')`,
    )
  }
  const of = bucketsOf(name, type, subs, result)
  for (const p of pipelines) if (p.kind === 'parent') of.items = p.apply(of)
  if (!of.keyed) return { ...result, buckets: of.items }
  const keyed: Rendered = {}
  for (const b of of.items) setOwn<unknown>(keyed, of.names.get(b)!, b)
  return { ...result, buckets: keyed }
}

definePipelines({
  types: new Set(Object.keys(TYPES)),
  check,
  sibling(name, defs) {
    const p = pipelineAt(name, defs[name])
    return p.kind === 'sibling' ? (level) => p.compute(level, defs) : undefined
  },
  parents(name, type, subs) {
    const pipelines = parentsOf(subs)
    return pipelines.length === 0 ? undefined : (result) => rewrite(name, type, subs, pipelines, result)
  },
})

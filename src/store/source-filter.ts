/**
 * `_source` filtering as OpenSearch does it: `false` drops the source, strings/arrays are include
 * patterns, `{includes, excludes}` both; patterns match dotted paths with `*` wildcards, and an
 * included object keeps everything beneath it (minus excludes).
 */
import type { Source, SourceFilter } from './port'
import { setOwn } from './own'
import { wildcardToRegExp } from './names'
import { isObject } from './query/doc'
import { ShardsFailed } from './errors'

export interface SourceSpec {
  includes: string[]
  excludes: string[]
}

/** Normalise `_source` (body) and `_source_includes`/`_source_excludes` (params); undefined = whole source, null = none. */
export function sourceSpec(
  filter: SourceFilter | undefined,
  includes?: string | string[],
  excludes?: string | string[],
): SourceSpec | null | undefined {
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : v.split(',').filter(Boolean))
  let inc: string[] = list(includes)
  let exc: string[] = list(excludes)
  if (filter === false || filter === 'false') return null
  if (typeof filter === 'string' && filter !== 'true') inc = [...inc, ...filter.split(',').filter(Boolean)]
  else if (Array.isArray(filter)) inc = [...inc, ...filter]
  else if (isObject(filter)) {
    inc = [...inc, ...list(filter.includes ?? filter.include)]
    exc = [...exc, ...list(filter.excludes ?? filter.exclude)]
  }
  if (inc.length === 0 && exc.length === 0) return undefined
  return { includes: inc, excludes: exc }
}

export function filterSource(source: Source, spec: SourceSpec | null | undefined): Source | undefined {
  if (spec === null) return undefined
  if (spec === undefined) return source
  return filterObject(source, '', spec, spec.includes.length === 0) as Source
}

function filterObject(obj: Record<string, unknown>, prefix: string, spec: SourceSpec, included: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(obj)) {
    const path = prefix ? `${prefix}.${k}` : k
    if (spec.excludes.some((p) => wildcardToRegExp(p).test(path))) continue
    const inc = included || spec.includes.some((p) => wildcardToRegExp(p).test(path))
    const kept = filterValue(v, path, spec, inc)
    if (kept !== undefined) setOwn(out, k, kept)
  }
  return out
}

function filterValue(v: unknown, path: string, spec: SourceSpec, included: boolean): unknown {
  if (Array.isArray(v)) {
    // A list of plain values (an integration's 10,000 rule ids) is kept or left whole: no call per item.
    if (v.every(isPlain)) return included ? v.slice() : undefined
    const items = v.map((x) => filterValue(x, path, spec, included)).filter((x) => x !== undefined)
    return items.length > 0 || included ? items : undefined
  }
  if (isObject(v)) {
    if (!included && !spec.includes.some((p) => mayMatchBelow(p, path))) return undefined
    const o = filterObject(v, path, spec, included)
    return Object.keys(o).length > 0 || included ? o : undefined
  }
  return included ? v : undefined
}

const isPlain = (x: unknown) => x === null || typeof x !== 'object'

/** Could pattern `p` match some path under `path`? */
function mayMatchBelow(p: string, path: string): boolean {
  const star = p.indexOf('*')
  const head = star < 0 ? p : p.slice(0, star)
  const below = `${path}.`
  return star < 0 ? p.startsWith(below) : head.startsWith(below) || below.startsWith(head)
}

/**
 * Whether a mapping disables `_source` (`_source: {enabled: false}`): OpenSearch then keeps no
 * source, so it answers none (hits, get, mget), refuses what needs one (updates, by-query,
 * reindex, source filters) and reads doc values for the rest. The embedded store keeps the text
 * (its queries read it) and answers as OpenSearch.
 */
export function sourceDisabled(mappings: unknown): boolean {
  const source = isObject(mappings) ? mappings._source : undefined
  return isObject(source) && (source.enabled === false || source.enabled === 'false')
}

/** Whether `_source` (a search body's) names fields: OpenSearch refuses that for an index without a source. */
export function filtersSource(filter: SourceFilter | undefined): boolean {
  const spec = sourceSpec(filter)
  return spec !== null && spec !== undefined && (spec.includes.length > 0 || spec.excludes.length > 0)
}

/** OpenSearch's refusal of a source filter on an index without a source: each shard fails it. */
export const noSourceToFilter = (index: string): ShardsFailed =>
  new ShardsFailed(
    'illegal_argument_exception',
    `unable to fetch fields from _source field: _source is disabled in the mappings for index [${index}]`,
    index,
  )

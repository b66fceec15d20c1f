/**
 * Search `collapse` on a keyword or numeric field: the top hit of each group of hits sharing the
 * field's value, in the search's order, `from`/`size` counting groups, `hits.total` counting every
 * match (as OpenSearch). The store is read in growing pages of the same sorted search, at most
 * `index.max_result_window` hits, until `from + size` groups are found. Each returned group may
 * carry `inner_hits` (one search per group and inner hit definition, its query ANDed with the group's
 * value), each hit `fields: {<field>: [value]}`.
 */
import type { Mappings, SearchHit } from '../store/port'
import { kindOf } from '../store/query/compile'
import { fieldPath, isObject } from '../store/query/doc'
import { badRequest } from './context'

export interface InnerHitSpec {
  name: string
  from: number
  size: number
  sort?: unknown
  _source?: unknown
  version?: boolean
  seq_no_primary_term?: boolean
  fields?: string[]
  track_scores?: boolean
  /** A second level of collapsing inside the group (no deeper level, no inner hits of its own). */
  collapse?: string
}

export interface CollapseSpec {
  field: string
  innerHits: InnerHitSpec[]
}

const INNER_KEYS = new Set([
  'name',
  'from',
  'size',
  'sort',
  '_source',
  'version',
  'seq_no_primary_term',
  'fields',
  'docvalue_fields',
  'track_scores',
  'ignore_unmapped',
  'explain',
  'stored_fields',
  'collapse',
])

export function parseCollapse(v: unknown): CollapseSpec {
  if (!isObject(v)) throw badRequest('[collapse] must be an object', 'parsing_exception')
  for (const k of Object.keys(v))
    if (!['field', 'inner_hits', 'max_concurrent_group_searches'].includes(k))
      throw badRequest(`[collapse] unknown field [${k}]`, 'x_content_parse_exception')
  if (typeof v.field !== 'string' || v.field === '') throw badRequest('[collapse] requires [field]', 'parsing_exception')
  const max = v.max_concurrent_group_searches
  if (max !== undefined && (typeof max !== 'number' || max < 1))
    throw badRequest(`maxConcurrentGroupRequests must be positive, got ${String(max)}`, 'illegal_argument_exception')
  const list = v.inner_hits === undefined ? [] : [v.inner_hits].flat()
  const innerHits = list.map((ih): InnerHitSpec => {
    if (!isObject(ih)) throw badRequest('[inner_hits] must be an object', 'parsing_exception')
    for (const k of Object.keys(ih))
      if (!INNER_KEYS.has(k)) throw badRequest(`[inner_hits] unknown field [${k}]`, 'x_content_parse_exception')
    const int = (k: string, d: number) => {
      const x = ih[k] ?? d
      if (typeof x !== 'number' || !Number.isInteger(x) || x < 0) throw badRequest(`[inner_hits] [${k}] must be a non-negative integer`)
      return x
    }
    const spec: InnerHitSpec = {
      name: typeof ih.name === 'string' ? ih.name : (v.field as string),
      from: int('from', 0),
      size: int('size', 3),
    }
    if (spec.from + spec.size > 100)
      throw badRequest(
        `Inner result window is too large, the inner hit definition's [${spec.name}]'s from + size must be less than or equal to: [100] but was [${spec.from + spec.size}]. This limit can be set by changing the [index.max_inner_result_window] index level setting.`,
      )
    if (ih.sort !== undefined) spec.sort = ih.sort
    if (ih._source !== undefined) spec._source = ih._source
    if (ih.version === true) spec.version = true
    if (ih.seq_no_primary_term === true) spec.seq_no_primary_term = true
    if (ih.track_scores === true) spec.track_scores = true
    if (ih.collapse !== undefined) {
      const c = ih.collapse
      if (!isObject(c) || typeof c.field !== 'string') throw badRequest('[collapse] requires [field]', 'parsing_exception')
      for (const k of Object.keys(c))
        if (k !== 'field') throw badRequest(`[collapse] unknown field [${k}] inside an inner hit collapse`, 'x_content_parse_exception')
      spec.collapse = c.field
    }
    const fields = ih.fields ?? ih.docvalue_fields
    if (fields !== undefined) spec.fields = [fields].flat().map((f) => (isObject(f) ? String(f.field) : String(f)))
    return spec
  })
  const names = new Set<string>()
  for (const ih of innerHits) {
    if (names.has(ih.name)) throw badRequest(`[inner_hits] already contains an entry for key [${ih.name}]`)
    names.add(ih.name)
  }
  return { field: v.field, innerHits }
}

/** The collapse field's type in each index searched: keyword or numeric, else OpenSearch's 400. */
export function collapseKind(field: string, mappings: Mappings[]): 'keyword' | 'number' {
  let found: 'keyword' | 'number' | undefined
  for (const m of mappings) {
    let def = lookup(m, field)
    if (def?.type === 'alias' && typeof def.path === 'string') def = lookup(m, def.path)
    if (!def) continue
    const type = String(def.type ?? 'object')
    const kind = kindOf(type)
    if (kind === 'number') found = 'number'
    else if (type === 'keyword' || type === 'constant_keyword') found ??= 'keyword'
    else throw badRequest(`unknown type for collapse field \`${field}\`, only keywords and numbers are accepted`)
    if (def.doc_values === false) throw badRequest(`cannot collapse on field \`${field}\` without \`doc_values\``)
  }
  if (!found) throw badRequest(`no mapping found for \`${field}\` in order to collapse on`)
  return found
}

function lookup(m: Mappings, field: string): Record<string, unknown> | undefined {
  let props: Record<string, unknown> | undefined = m.properties
  const parts = field.split('.')
  for (let i = 0; i < parts.length; i++) {
    if (!props) return undefined
    // dotted names may be stored whole or nested
    const whole = parts.slice(i).join('.')
    if (isObject(props[whole])) return props[whole] as Record<string, unknown>
    const def = props[parts[i]]
    if (!isObject(def)) return undefined
    if (i === parts.length - 1) return def
    const sub = isObject(def.fields) ? def.fields[parts.slice(i + 1).join('.')] : undefined
    if (isObject(sub)) return sub
    props = isObject(def.properties) ? def.properties : undefined
  }
  return undefined
}

/** The fields a collapse field stands for in the indices searched (an alias, its target). */
export function queryFields(field: string, mappings: Mappings[]): string[] {
  const out = new Set<string>([field])
  for (const m of mappings) {
    const def = lookup(m, field)
    if (def?.type === 'alias' && typeof def.path === 'string') out.add(def.path)
  }
  return [...out]
}

/** The source path a field reads (a multi-field reads its parent). */
function sourcePath(m: Mappings | undefined, field: string): string {
  const def = m ? lookup(m, field) : undefined
  if (def?.type === 'alias' && typeof def.path === 'string') return def.path
  const parts = field.split('.')
  if (m && parts.length > 1) {
    const parent = lookup(m, parts.slice(0, -1).join('.'))
    if (parent && isObject(parent.fields) && isObject(parent.fields[parts[parts.length - 1]])) return parts.slice(0, -1).join('.')
  }
  return field
}

/** The group value of a hit: its single value of the field, or null. */
export function groupValue(hit: SearchHit, field: string, kind: 'keyword' | 'number', m: Mappings | undefined): string | number | null {
  const values = fieldPath(sourcePath(m, field))
    .collect(hit._source ?? {})
    .filter((v) => v !== null && v !== undefined)
  if (values.length > 1)
    throw badRequest(`failed to collapse ${hit._id}, the collapse field must be single valued`, 'illegal_state_exception')
  if (values.length === 0) return null
  const v = values[0]
  if (kind === 'number') {
    const n = Number(v)
    return Number.isFinite(n) ? n : null
  }
  return typeof v === 'string' ? v : JSON.stringify(v)
}

/** `fields` of an inner hit: each named field's values read from the source. */
export function fieldsOf(hit: SearchHit, names: string[], m: Mappings | undefined): Record<string, unknown[]> | undefined {
  const out: Record<string, unknown[]> = {}
  for (const name of names) {
    const values = fieldPath(sourcePath(m, name)).collect(hit._source ?? {})
    if (values.length > 0) out[name] = values
  }
  return Object.keys(out).length > 0 ? out : undefined
}

/** Picks the first hit of each group, in order, until `want` groups are held. */
export function collapseHits(
  hits: SearchHit[],
  field: string,
  kind: 'keyword' | 'number',
  mappingOf: (index: string) => Mappings | undefined,
  want: number,
): Array<{ hit: SearchHit; value: string | number | null }> {
  const seen = new Set<string>()
  const out: Array<{ hit: SearchHit; value: string | number | null }> = []
  for (const hit of hits) {
    const value = groupValue(hit, field, kind, mappingOf(hit._index))
    const key = value === null ? '\u0000null' : `${typeof value}:${value}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ hit, value })
    if (out.length >= want) break
  }
  return out
}

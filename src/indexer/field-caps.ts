/**
 * `_field_caps` and `_mapping/field/<fields>`: what fields exist, with which types and
 * capabilities, read from the mappings of the indices the caller may read.
 */
import type { Mappings, Query } from '../store/port'
import { badRequest, type RequestContext } from './context'
import { capabilities, mappedFields } from './mapped-fields'
import { globMatcher } from './names'
import type { IndexRouter } from './router'
import { countAs } from './search'

export const FIELD_CAPS_ACTION = 'indices:data/read/field_caps'
export const FIELD_MAPPING_ACTION = 'indices:admin/mappings/fields/get'

/** Metadata fields every index has, as `_field_caps` lists them. */
const METADATA: Array<[string, boolean, boolean]> = [
  ['_id', true, true],
  ['_index', true, true],
  ['_seq_no', true, true],
  ['_version', false, false],
  ['_source', false, false],
  ['_routing', true, false],
  ['_ignored', true, false],
  ['_field_names', true, false],
]

interface Cap {
  type: string
  indices: string[]
  searchable: string[]
  aggregatable: string[]
  meta: Record<string, Set<string>>
}

async function mappingsOf(ctx: RequestContext, action: string): Promise<Record<string, { mappings: Mappings }>> {
  const expression = ctx.indexExpression()
  const options = ctx.resolveOptions()
  const indices = await ctx.authorized(action, expression, options)
  if (indices.length === 0) return {}
  return ctx.store.getMapping({ index: indices, expand_wildcards: 'all' })
}

async function fieldCaps(ctx: RequestContext) {
  const body = (await ctx.json()) ?? {}
  for (const key of Object.keys(body))
    if (key !== 'fields' && key !== 'index_filter') throw badRequest(`request does not support [${key}]`, 'parsing_exception')
  const given = ctx.list('fields') ?? (body.fields === undefined ? undefined : [body.fields].flat().map(String))
  if (!given || given.length === 0) throw badRequest('Validation Failed: 1: no fields specified;', 'action_request_validation_exception')
  const match = given.map(globMatcher)
  const wanted = (name: string) => match.some((m) => m(name))
  const includeUnmapped = ctx.flag('include_unmapped', false)
  const mappings = await mappingsOf(ctx, FIELD_CAPS_ACTION)
  let indices = Object.keys(mappings).sort()
  if (body.index_filter !== undefined) {
    // An index counts when one document the caller can read matches the filter (a search by the caller).
    const filter = body.index_filter
    if (filter === null || typeof filter !== 'object' || Array.isArray(filter))
      throw badRequest('[index_filter] must be an object', 'parsing_exception')
    const kept: string[] = []
    for (const index of indices) if ((await countAs(ctx, index, { expand_wildcards: 'all' }, filter as Query)).count > 0) kept.push(index)
    indices = kept
  }
  const caps = new Map<string, Map<string, Cap>>()
  const add = (field: string, type: string, index: string, searchable: boolean, aggregatable: boolean, meta?: unknown) => {
    let byType = caps.get(field)
    if (!byType) caps.set(field, (byType = new Map()))
    let cap = byType.get(type)
    if (!cap) byType.set(type, (cap = { type, indices: [], searchable: [], aggregatable: [], meta: {} }))
    cap.indices.push(index)
    if (searchable) cap.searchable.push(index)
    if (aggregatable) cap.aggregatable.push(index)
    if (meta && typeof meta === 'object') for (const [k, v] of Object.entries(meta)) (cap.meta[k] ??= new Set()).add(String(v))
  }
  for (const index of indices) {
    for (const [name, searchable, aggregatable] of METADATA) if (wanted(name)) add(name, name, index, searchable, aggregatable)
    const fields = mappedFields(mappings[index].mappings)
    const byPath = new Map(fields.map((f) => [f.path, f]))
    for (const f of fields) {
      if (!wanted(f.path)) continue
      // An alias is reported as the field it names (its type and capabilities).
      const named = f.type === 'alias' ? (byPath.get(String(f.def.path)) ?? f) : f
      const c = capabilities(named)
      add(f.path, named.type, index, c.searchable, c.aggregatable, f.def.meta)
    }
  }
  const fields: Record<string, Record<string, unknown>> = {}
  for (const [field, byType] of [...caps].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const entry: Record<string, unknown> = {}
    const many = byType.size > 1
    const seen = new Set<string>()
    for (const cap of byType.values()) {
      for (const i of cap.indices) seen.add(i)
      const out: Record<string, unknown> = {
        type: cap.type,
        searchable: cap.searchable.length === cap.indices.length,
        aggregatable: cap.aggregatable.length === cap.indices.length,
      }
      if (many) out.indices = cap.indices
      if (cap.searchable.length > 0 && cap.searchable.length < cap.indices.length)
        out.non_searchable_indices = cap.indices.filter((i) => !cap.searchable.includes(i))
      if (cap.aggregatable.length > 0 && cap.aggregatable.length < cap.indices.length)
        out.non_aggregatable_indices = cap.indices.filter((i) => !cap.aggregatable.includes(i))
      if (Object.keys(cap.meta).length > 0) out.meta = Object.fromEntries(Object.entries(cap.meta).map(([k, v]) => [k, [...v].sort()]))
      entry[cap.type] = out
    }
    const unmapped = indices.filter((i) => !seen.has(i))
    if (includeUnmapped && unmapped.length > 0) {
      entry.unmapped = { type: 'unmapped', searchable: false, aggregatable: false, indices: unmapped }
      for (const cap of Object.values(entry) as Array<Record<string, unknown>>)
        if (cap.type !== 'unmapped' && !cap.indices) cap.indices = [...seen].sort()
    }
    fields[field] = entry
  }
  return { indices, fields }
}

async function fieldMapping(ctx: RequestContext) {
  const names = (ctx.part('fields') ?? '').split(',').filter(Boolean)
  if (names.length === 0) throw badRequest('Validation Failed: 1: fields is missing;', 'action_request_validation_exception')
  const match = names.map(globMatcher)
  const mappings = await mappingsOf(ctx, FIELD_MAPPING_ACTION)
  const out: Record<string, { mappings: Record<string, unknown> }> = {}
  for (const [index, { mappings: m }] of Object.entries(mappings)) {
    const fields: Record<string, unknown> = {}
    for (const f of mappedFields(m)) {
      if (f.object || !match.some((x) => x(f.path))) continue
      fields[f.path] = { full_name: f.path, mapping: { [f.leaf]: f.def } }
    }
    out[index] = { mappings: fields }
  }
  return out
}

export function fieldCapsRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_field_caps', '/:index/_field_caps'], fieldCaps)
  r.on('GET', ['/_mapping/field/:fields', '/:index/_mapping/field/:fields'], fieldMapping)
}

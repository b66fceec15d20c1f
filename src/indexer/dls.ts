/**
 * Document-level security on every read path (used through the read gate, read-gate.ts). The
 * security layer gives one DLS query per concrete index (or none); searches AND them into the
 * user's query, scoped per index with `_index` when indices differ, and single-document reads
 * test the document in memory with the one query evaluator.
 */
import { compileQuery, DocView, type FieldSpec } from '../store/query'
import type { Mappings, Query, Store } from '../store/port'
import type { RequestContext } from './context'

/**
 * The filter that restricts a read of `indices` for the caller, or undefined when no index
 * has DLS. An index without DLS among others that have it stays fully readable.
 */
export function dlsFilter(ctx: RequestContext, indices: string[]): Query | undefined {
  return combinedDocumentFilter((index) => ctx.documentFilter(index), indices)
}

/** `dlsFilter` for any source of per-index DLS queries (a caller's, outside a request context too). */
export function combinedDocumentFilter(filterOf: (index: string) => Query | undefined, indices: string[]): Query | undefined {
  const filters = indices.map((index) => ({ index, filter: filterOf(index) }))
  if (filters.every((f) => f.filter === undefined)) return undefined
  const first = JSON.stringify(filters[0].filter)
  if (filters.every((f) => f.filter !== undefined && JSON.stringify(f.filter) === first)) return filters[0].filter
  return {
    bool: {
      should: filters.map(({ index, filter }) =>
        filter === undefined ? { term: { _index: index } } : { bool: { filter: [{ term: { _index: index } }, filter] } },
      ),
      minimum_should_match: 1,
    },
  }
}

/** DLS and the features' read filter (findings visibility), ANDed; what every search path applies. */
export async function readFilter(ctx: RequestContext, indices: string[]): Promise<Query | undefined> {
  const dls = dlsFilter(ctx, indices)
  const feature = await ctx.deps.readFilter?.(ctx.caller, indices)
  if (feature === undefined) return dls
  return dls === undefined ? feature : { bool: { filter: [dls, feature] } }
}

/** The user's query with the DLS filter ANDed in (the filter never changes scores). */
export function withFilter(query: Query | undefined, filter: Query | undefined): Query | undefined {
  if (filter === undefined) return query
  return { bool: { must: [query ?? { match_all: {} }], filter: [filter] } }
}

/** Mapped field types by dotted path (multi-fields read their parent's value), for the evaluator. */
export function fieldTypes(mappings: Mappings | undefined): Map<string, FieldSpec> {
  const out = new Map<string, FieldSpec>()
  const walk = (props: Record<string, any> | undefined, prefix: string) => {
    for (const [name, def] of Object.entries(props ?? {})) {
      const path = prefix + name
      if (def?.type && def.type !== 'object' && def.type !== 'nested')
        out.set(path, { type: def.type, format: def.format, ignore_above: def.ignore_above })
      for (const [sub, subDef] of Object.entries<any>(def?.fields ?? {})) {
        if (subDef?.type) out.set(`${path}.${sub}`, { type: subDef.type, path, ignore_above: subDef.ignore_above })
      }
      if (def?.properties) walk(def.properties, `${path}.`)
    }
  }
  walk(mappings?.properties as Record<string, unknown> | undefined, '')
  return out
}

/** True when the document passes `filter` (the caller's DLS and feature filters for the index). */
export async function matchesFilter(
  store: Store,
  filter: Query,
  index: string,
  id: string,
  source: Record<string, unknown> | undefined,
): Promise<boolean> {
  const mapping = await store.getMapping({ index, expand_wildcards: 'all' })
  const types = fieldTypes(mapping[index]?.mappings)
  return compileQuery(filter, types)(new DocView(source ?? {}, id, index))
}

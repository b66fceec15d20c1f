/**
 * `_resolve/index/<name>`: the indices, aliases and data streams an expression names, each
 * with its attributes. Everything listed is authorized for the caller first.
 */
import { withoutSystemIndices, type RequestContext } from './context'
import { globMatcher } from './names'
import type { IndexRouter } from './router'

export const RESOLVE_ACTION = 'indices:admin/resolve/index'

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)

async function resolveIndex(ctx: RequestContext) {
  const raw = ctx.part('name') ?? '*'
  const expression = ctx.indexExpression('name')
  const options = ctx.resolveOptions({ expand_wildcards: 'open' })
  const indices = await ctx.authorized(RESOLVE_ACTION, expression, { ...options, ignore_unavailable: true, allow_no_indices: true })
  const patterns = raw
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith('-'))
    .map((p) => (p === '_all' ? '*' : p))
    .map(globMatcher)
  const named = (n: string) => patterns.some((m) => m(n))
  const showHidden = String(options.expand_wildcards ?? '').match(/all|hidden/) !== null
  const stats = new Map(
    (indices.length === 0 ? [] : await ctx.store.stats({ index: indices, expand_wildcards: 'all' })).map((s) => [s.index, s]),
  )
  // An alias lists all its indices (closed ones too), each of which the caller must be allowed to see.
  const every = await ctx.store.resolve(withoutSystemIndices(undefined), { expand_wildcards: 'all' })
  const aliasesByIndex = every.length === 0 ? {} : await ctx.store.getAlias({ index: every, expand_wildcards: 'all' })
  const aliasIndices = new Map<string, string[]>()
  for (const [index, { aliases }] of Object.entries(aliasesByIndex))
    for (const alias of Object.keys(aliases ?? {})) if (named(alias)) aliasIndices.set(alias, [...(aliasIndices.get(alias) ?? []), index])
  const viaAliases = [...new Set([...aliasIndices.values()].flat())]
  if (viaAliases.length > 0) ctx.deps.security.authorizeIndices(ctx.caller, RESOLVE_ACTION, viaAliases)
  const { data_streams } = await ctx.store.getDataStream()
  const streams = data_streams.filter((d) => named(d.name) && d.indices.every((i) => indices.includes(i.index_name)))
  const outIndices = indices
    .filter((i) => named(i) || showHidden)
    .map((name) => {
      const s = stats.get(name)
      const attributes = [s?.status === 'close' ? 'closed' : 'open', ...(s?.hidden ? ['hidden'] : [])]
      const aliases = Object.keys(aliasesByIndex[name]?.aliases ?? {}).sort()
      return { name, ...(aliases.length > 0 ? { aliases } : {}), attributes, ...(s?.data_stream ? { data_stream: s.data_stream } : {}) }
    })
    .sort(byName)
  return {
    indices: outIndices,
    aliases: [...aliasIndices].map(([name, list]) => ({ name, indices: list.sort() })).sort(byName),
    data_streams: streams
      .map((d) => ({ name: d.name, backing_indices: d.indices.map((i) => i.index_name), timestamp_field: d.timestamp_field.name }))
      .sort(byName),
  }
}

export function resolveRoutes(r: IndexRouter): void {
  r.on('GET', '/_resolve/index/:name', resolveIndex)
}

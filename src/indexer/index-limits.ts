/** Index-level limits a search checks against the indices it reads (the smallest value among them wins). */
import type { RequestContext } from './context'

const DEFAULTS = {
  'index.max_result_window': 10000,
  'index.max_docvalue_fields_search': 100,
} as const

type IndexLimit = keyof typeof DEFAULTS

/** The limit over `indices`: each index's setting, else OpenSearch's default. */
export async function indexLimit(ctx: RequestContext, indices: string[], name: IndexLimit): Promise<number> {
  const fallback = DEFAULTS[name]
  if (indices.length === 0) return fallback
  const settings = await ctx.store.getSettings({ index: indices, expand_wildcards: 'all', ignore_unavailable: true })
  const key = name.slice('index.'.length)
  let limit = Number.MAX_SAFE_INTEGER
  for (const { settings: s } of Object.values(settings)) {
    const v = Number((s.index as Record<string, unknown>)[key] ?? fallback)
    if (Number.isFinite(v)) limit = Math.min(limit, v)
  }
  return limit === Number.MAX_SAFE_INTEGER ? fallback : limit
}

/**
 * Scroll searches without copying data: a scroll context is a document cursor (doc-cursor.ts:
 * the caller's gated query, a `_seq_no` watermark per index, a search_after position) with an
 * owner and a keep-alive.
 *
 * Contexts live in memory, expire after their keep-alive and are capped by
 * `search.max_open_scroll_context` (OpenSearch's name and default, 500).
 */
import { randomBytes } from 'node:crypto'
import { OpenSearchHttpError } from '../http/errors'
import { SearchContextMissing } from '../store/errors'
import type { SearchHit, SearchResponse } from '../store/port'
import { filterSource, sourceSpec } from '../store/source-filter'
import { parseTimeValue } from '../store/settings'
import { badRequest, type RequestContext } from './context'
import { Reply, type IndexRouter } from './router'
import { openCursor, nextPage, type DocCursor } from './doc-cursor'
import { indexLimit } from './index-limits'
import { highlightHits, parseHighlight, type HighlightSpec } from './highlight'
import { SEARCH_ACTION, type SearchRequest } from './search-gate'

export const SCROLL_ACTION = 'indices:data/read/scroll'
export const CLEAR_SCROLL_ACTION = 'indices:data/read/scroll/clear'

/** OpenSearch's defaults for the scroll limits (cluster settings of the same names override them). */
export const SCROLL_LIMITS = {
  'search.max_open_scroll_context': 500,
  'search.max_keep_alive': '24h',
} as const

interface ScrollContext {
  id: string
  owner: string
  cursor: DocCursor
  size: number
  restTotalHitsAsInt: boolean
  keepAlive: number
  expires: number
  /** Pages are read one at a time per context: a cursor moves in order. */
  busy?: Promise<unknown>
  /** `highlight` of the search, worked out on each page (the cursor reads whole sources; `source` is the caller's filter). */
  highlight?: { spec: HighlightSpec; query: unknown; source: unknown }
}

/** A page's hits highlighted, then source-filtered as the caller asked. */
async function decorate(ctx: RequestContext, c: ScrollContext, hits: SearchHit[]): Promise<SearchHit[]> {
  const h = c.highlight
  if (!h) return hits
  await highlightHits(ctx, hits, h.spec, h.query)
  if (h.source === undefined) return hits
  const spec = sourceSpec(h.source as never)
  return hits.map((hit) => {
    const out = { ...hit }
    const kept = hit._source === undefined ? undefined : filterSource(hit._source, spec)
    if (kept === undefined) delete out._source
    else out._source = kept
    return out
  })
}

class Scrolls {
  private readonly open = new Map<string, ScrollContext>()

  sweep(now: number): void {
    for (const [id, c] of this.open) if (c.expires <= now) this.open.delete(id)
  }

  size(now: number): number {
    this.sweep(now)
    return this.open.size
  }

  add(c: ScrollContext): void {
    this.open.set(c.id, c)
  }

  get(id: string, now: number): ScrollContext | undefined {
    this.sweep(now)
    return this.open.get(id)
  }

  delete(id: string): boolean {
    return this.open.delete(id)
  }

  all(): ScrollContext[] {
    return [...this.open.values()]
  }
}

const registries = new WeakMap<object, Scrolls>()
/** One registry per index API (per node). */
function scrollsOf(ctx: RequestContext): Scrolls {
  let s = registries.get(ctx.deps)
  if (!s) registries.set(ctx.deps, (s = new Scrolls()))
  return s
}

/** A cluster setting OpenSearch owns (persisted as given), or its default. */
async function platformSetting(ctx: RequestContext, key: keyof typeof SCROLL_LIMITS): Promise<string | number> {
  const persisted = await ctx.deps.settings.read(false)
  const v = persisted.transient[key] ?? persisted.persistent[key]
  return v === undefined || v === null ? SCROLL_LIMITS[key] : (v as string | number)
}

async function keepAliveOf(ctx: RequestContext, value: string): Promise<number> {
  let ms: number
  try {
    ms = parseTimeValue(value, 'scroll')
  } catch (e) {
    throw badRequest((e as Error).message, 'illegal_argument_exception')
  }
  const maxText = String(await platformSetting(ctx, 'search.max_keep_alive'))
  const max = parseTimeValue(maxText, 'search.max_keep_alive')
  if (ms > max)
    throw badRequest(
      `Keep alive for request (${value}) is too large. It must be less than (${maxText}). This limit can be set by changing the [search.max_keep_alive] cluster level setting.`,
    )
  return ms
}

/** The hit as the caller asked for it: no cursor fields it did not ask for. */
function shown(c: DocCursor, hit: SearchHit): SearchHit {
  const out = { ...hit }
  if (!c.body.seq_no_primary_term) {
    delete out._seq_no
    delete out._primary_term
  }
  if (!c.body.version) delete out._version
  if (c.sort && out.sort) out.sort = out.sort.slice(0, c.sort.length - 1)
  else delete out.sort
  return out
}

function scrollResponse(c: ScrollContext, started: number, hits: SearchHit[], first?: SearchResponse): Record<string, unknown> {
  const cur = c.cursor
  const maxScore = cur.sort ? null : hits.length > 0 ? 1 : null
  return {
    _scroll_id: c.id,
    took: Math.round(performance.now() - started),
    timed_out: false,
    _shards: first?._shards ?? { total: cur.indices.length || 1, successful: cur.indices.length || 1, skipped: 0, failed: 0 },
    hits: {
      total: c.restTotalHitsAsInt ? cur.total : { value: cur.total, relation: 'eq' },
      max_score: maxScore,
      hits: hits.map((h) => shown(cur, h)),
    },
    ...(first?.aggregations ? { aggregations: first.aggregations } : {}),
  }
}

/** Runs a page under the context's lock. */
async function locked<T>(c: ScrollContext, run: () => Promise<T>): Promise<T> {
  const prev = c.busy ?? Promise.resolve()
  const next = prev.then(run, run)
  c.busy = next.catch(() => undefined)
  return next
}

/** `_search?scroll=...`: opens a context and answers its first page. */
export async function openScroll(ctx: RequestContext, req: SearchRequest, keepAliveText: string): Promise<unknown> {
  const started = performance.now()
  const body = req.body
  const problems: string[] = []
  if (body.from !== undefined && body.from !== 0) problems.push('using [from] is not allowed in a scroll context')
  if (body.size === 0) problems.push('[size] cannot be [0] in a scroll context')
  if (body.search_after !== undefined) problems.push('`search_after` cannot be used in a scroll context.')
  if (body.pit !== undefined) problems.push('using [point in time] is not allowed in a scroll context')
  if (ctx.flag('request_cache', false)) problems.push('[request_cache] cannot be used in a scroll context')
  if (body.track_total_hits === false) problems.push('disabling [track_total_hits] is not allowed in a scroll context')
  if (problems.length > 0)
    throw badRequest(`Validation Failed: ${problems.map((p, i) => `${i + 1}: ${p};`).join('')}`, 'action_request_validation_exception')
  const keepAlive = await keepAliveOf(ctx, keepAliveText)
  const now = ctx.deps.now()
  const scrolls = scrollsOf(ctx)
  const max = Number(await platformSetting(ctx, 'search.max_open_scroll_context'))
  if (scrolls.size(now) >= max)
    throw new OpenSearchHttpError(
      429,
      'rejected_execution_exception',
      `Trying to create too many scroll contexts. Must be less than or equal to: [${max}]. This limit can be set by changing the [search.max_open_scroll_context] setting.`,
    )
  // highlight is worked out here on each page: the cursor reads whole sources when it is asked for.
  const highlight =
    body.highlight === undefined ? undefined : { spec: parseHighlight(body.highlight), query: body.query, source: body._source }
  let cursorReq = req
  if (highlight) {
    const { highlight: _h, ...rest } = body
    cursorReq = { ...req, body: highlight.source === undefined ? rest : { ...rest, _source: true } }
  }
  const { cursor, first } = await openCursor(ctx, cursorReq)
  const size = typeof body.size === 'number' ? body.size : 10
  const window = await indexLimit(ctx, cursor.indices, 'index.max_result_window')
  if (size > window)
    throw badRequest(
      `Batch size is too large, size must be less than or equal to: [${window}] but was [${size}]. Scroll batch sizes cost as much memory as result windows so they are controlled by the [index.max_result_window] index level setting.`,
    )
  const c: ScrollContext = {
    id: randomBytes(24).toString('base64url'),
    owner: ctx.caller.name,
    cursor,
    size,
    restTotalHitsAsInt: req.restTotalHitsAsInt === true,
    keepAlive,
    expires: now + keepAlive,
    ...(highlight ? { highlight } : {}),
  }
  scrolls.add(c)
  const hits = await locked(c, () => nextPage(ctx, c.cursor, c.size))
  return scrollResponse(c, started, await decorate(ctx, c, hits), first)
}

/**
 * A context the caller may continue: the caller that opened it, still allowed to search its
 * indices (a revoked permission stops the scroll). Anyone else learns nothing about it.
 */
function ownContext(ctx: RequestContext, id: string, action: string): ScrollContext | undefined {
  const found = scrollsOf(ctx).get(id, ctx.deps.now())
  const c = found && found.owner === ctx.caller.name ? found : undefined
  // An unknown context needs the action on every index, as an unknown PIT does.
  ctx.deps.security.authorizeIndices(ctx.caller, action, c ? c.cursor.indices : ['*'])
  if (c && action === SCROLL_ACTION) ctx.deps.security.authorizeIndices(ctx.caller, SEARCH_ACTION, c.cursor.indices)
  return c
}

async function continueScroll(ctx: RequestContext) {
  const started = performance.now()
  const body = (await ctx.json()) ?? {}
  for (const key of Object.keys(body))
    if (key !== 'scroll' && key !== 'scroll_id')
      throw badRequest(`Unknown parameter [${key}] in request body or parameter is of the wrong type[VALUE_STRING] `)
  const id = (body.scroll_id as string | undefined) ?? ctx.part('scroll_id') ?? ctx.str('scroll_id')
  if (typeof id !== 'string' || id === '')
    throw badRequest('Validation Failed: 1: scrollId is missing;', 'action_request_validation_exception')
  const keepAliveText = (body.scroll as string | undefined) ?? ctx.str('scroll')
  const c = ownContext(ctx, id, SCROLL_ACTION)
  if (!c) throw new SearchContextMissing(id)
  if (keepAliveText !== undefined) c.keepAlive = await keepAliveOf(ctx, String(keepAliveText))
  c.expires = ctx.deps.now() + c.keepAlive
  const hits = await locked(c, () => nextPage(ctx, c.cursor, c.size))
  const res = scrollResponse(c, started, await decorate(ctx, c, hits))
  if (ctx.flag('rest_total_hits_as_int', false)) (res.hits as Record<string, unknown>).total = c.cursor.total
  return res
}

async function clearScroll(ctx: RequestContext) {
  const body = (await ctx.json()) ?? {}
  const given = body.scroll_id ?? ctx.part('scroll_id')?.split(',') ?? ctx.list('scroll_id')
  const ids = [given ?? []].flat()
  if (ids.length === 0 || !ids.every((i): i is string => typeof i === 'string'))
    throw badRequest('Validation Failed: 1: no scroll ids specified;', 'action_request_validation_exception')
  const scrolls = scrollsOf(ctx)
  let freed = 0
  if (ids.length === 1 && ids[0] === '_all') {
    ctx.deps.security.authorizeIndices(ctx.caller, CLEAR_SCROLL_ACTION, ['*'])
    for (const c of scrolls.all()) if (c.owner === ctx.caller.name && scrolls.delete(c.id)) freed++
  } else {
    for (const id of ids) {
      const c = ownContext(ctx, id, CLEAR_SCROLL_ACTION)
      if (c && scrolls.delete(id)) freed++
    }
  }
  // OpenSearch answers 404 when nothing was freed.
  return new Reply(freed > 0 ? 200 : 404, { succeeded: true, num_freed: freed })
}

export function scrollRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], ['/_search/scroll', '/_search/scroll/:scroll_id'], continueScroll)
  r.on('DELETE', ['/_search/scroll', '/_search/scroll/:scroll_id'], clearScroll)
}

/**
 * Scroll searches without copying data. A scroll context keeps the caller's gated query (DLS
 * and feature filters already ANDed in), the concrete indices and, per index, the `_seq_no`
 * watermark at open: documents written later (or re-written: an update moves a document's
 * seq_no) are not part of the scroll, as they would not be in OpenSearch's point-in-time
 * reader. Each page continues from a cursor: without a sort, index by index in `_seq_no` order
 * (the store reads that range from its seq_no index, so a page costs what it returns); with a
 * sort, `search_after` on the sort plus `_doc`.
 *
 * Contexts live in memory, expire after their keep-alive and are capped by
 * `search.max_open_scroll_context` (OpenSearch's name and default, 500).
 */
import { randomBytes } from 'node:crypto'
import { OpenSearchHttpError } from '../http/errors'
import { SearchContextMissing } from '../store/errors'
import type { Query, SearchBody, SearchHit, SearchResponse } from '../store/port'
import { parseTimeValue } from '../store/settings'
import { badRequest, type RequestContext } from './context'
import { Reply, type IndexRouter } from './router'
import { gateSearch, SEARCH_ACTION, type SearchRequest } from './search'

export const SCROLL_ACTION = 'indices:data/read/scroll'
export const CLEAR_SCROLL_ACTION = 'indices:data/read/scroll/clear'

/** OpenSearch's defaults for the scroll limits (cluster settings of the same names override them). */
export const SCROLL_LIMITS = {
  'search.max_open_scroll_context': 500,
  'search.max_keep_alive': '24h',
} as const

interface Cursor {
  /** Position in `indices` (unsorted scrolls walk one index after the other). */
  pos: number
  /** The last `_seq_no` read from `indices[pos]` (unsorted) or the last sort values (sorted). */
  after?: unknown[]
}

interface ScrollContext {
  id: string
  owner: string
  indices: string[]
  /** Highest `_seq_no` of each index at open; -1 for an empty index. */
  watermarks: Map<string, number>
  /** Alias filters per concrete index, when the scroll named filtered aliases. */
  aliasFilters: Map<string, Query>
  body: Record<string, unknown>
  /** The caller's sort, or undefined to walk `_seq_no` order. */
  sort?: unknown[]
  size: number
  total: number
  restTotalHitsAsInt: boolean
  keepAlive: number
  expires: number
  cursor: Cursor
  /** Pages are read one at a time per context: a cursor moves in order. */
  busy?: Promise<unknown>
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

const isDocSort = (s: unknown) =>
  s === '_doc' || (s !== null && typeof s === 'object' && Object.keys(s).length === 1 && '_doc' in s && (s as any)._doc !== 'desc')

/** The `sort` of a scroll, or undefined when it is (only) `_doc`: index order is then `_seq_no` order. */
function scrollSort(sort: unknown): unknown[] | undefined {
  if (sort === undefined) return undefined
  const list = [sort].flat()
  if (list.length === 0 || list.every(isDocSort)) return undefined
  return [...list, { _doc: 'asc' }]
}

function globToRegExp(glob: string): RegExp {
  return new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`)
}

/**
 * The filters of the filtered aliases the expression names, per concrete index. An index also
 * named directly (or through an unfiltered alias) is read whole, as in OpenSearch.
 */
async function aliasFiltersOf(ctx: RequestContext, expression: string | undefined, indices: string[]): Promise<Map<string, Query>> {
  const out = new Map<string, Query>()
  const parts = (expression ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p && !p.startsWith('-') && p !== '_all')
  if (parts.length === 0 || indices.length === 0) return out
  const patterns = parts.map(globToRegExp)
  const aliases = await ctx.store.getAlias({ index: indices, expand_wildcards: 'all' })
  for (const index of indices) {
    if (patterns.some((p) => p.test(index))) continue
    const defs = Object.entries(aliases[index]?.aliases ?? {}).filter(([name]) => patterns.some((p) => p.test(name)))
    if (defs.length === 0 || defs.some(([, d]) => d.filter === undefined)) continue
    const filters = defs.map(([, d]) => d.filter as Query)
    out.set(index, filters.length === 1 ? filters[0] : { bool: { should: filters, minimum_should_match: 1 } })
  }
  return out
}

/** The highest `_seq_no` of an index now (one row read from its seq_no index). */
async function watermarkOf(ctx: RequestContext, index: string): Promise<number> {
  const res = await ctx.store.search({
    index,
    body: { size: 1, sort: [{ _seq_no: 'desc' }], track_total_hits: false, seq_no_primary_term: true, _source: false },
  })
  return res.hits.hits[0]?._seq_no ?? -1
}

function queryFor(c: ScrollContext, index: string): Query | undefined {
  const alias = c.aliasFilters.get(index)
  const q = c.body.query as Query | undefined
  if (!alias) return q
  return { bool: { must: [q ?? { match_all: {} }], filter: [alias] } }
}

/** The hit as the caller asked for it: no cursor fields it did not ask for. */
function shown(c: ScrollContext, hit: SearchHit): SearchHit {
  const out = { ...hit }
  if (!c.body.seq_no_primary_term) {
    delete out._seq_no
    delete out._primary_term
  }
  if (c.sort && out.sort) out.sort = out.sort.slice(0, c.sort.length - 1)
  else delete out.sort
  return out
}

/** Reads the next page: at most `size` hits at or below each index's watermark. */
async function nextPage(ctx: RequestContext, c: ScrollContext): Promise<SearchHit[]> {
  const out: SearchHit[] = []
  const base: Record<string, unknown> = { ...c.body, seq_no_primary_term: true }
  delete base.aggs
  delete base.aggregations
  delete base.from
  if (c.sort === undefined) {
    while (out.length < c.size && c.cursor.pos < c.indices.length) {
      const index = c.indices[c.cursor.pos]
      const mark = c.watermarks.get(index) ?? -1
      const want = c.size - out.length
      const res =
        mark < 0
          ? undefined
          : await ctx.store.search({
              index,
              body: {
                ...base,
                query: queryFor(c, index),
                size: want,
                sort: [{ _seq_no: 'asc' }],
                track_total_hits: false,
                track_scores: true,
                ...(c.cursor.after ? { search_after: c.cursor.after } : {}),
              } as SearchBody,
            })
      const hits = res?.hits.hits ?? []
      let done = hits.length < want
      for (const h of hits) {
        if ((h._seq_no ?? 0) > mark) {
          done = true
          break
        }
        c.cursor.after = [h._seq_no]
        out.push(shown(c, h))
      }
      if (done) c.cursor = { pos: c.cursor.pos + 1 }
    }
    return out
  }
  // Sorted: one search over every index, continued with search_after; later writes are skipped.
  const perIndex = c.indices.map((index) => {
    const alias = c.aliasFilters.get(index)
    return alias ? { bool: { filter: [{ term: { _index: index } }, alias] } } : { term: { _index: index } }
  })
  const query: Query = {
    bool: { must: [c.body.query ?? { match_all: {} }], filter: [{ bool: { should: perIndex, minimum_should_match: 1 } }] },
  }
  while (out.length < c.size && c.cursor.pos === 0) {
    const want = c.size - out.length
    const res = await ctx.store.search({
      index: c.indices,
      expand_wildcards: 'all',
      body: {
        ...base,
        query,
        size: want,
        sort: c.sort,
        track_total_hits: false,
        ...(c.cursor.after ? { search_after: c.cursor.after } : {}),
      } as SearchBody,
    })
    const hits = res.hits.hits
    for (const h of hits) {
      c.cursor.after = h.sort
      if ((h._seq_no ?? 0) <= (c.watermarks.get(h._index) ?? -1)) out.push(shown(c, h))
    }
    if (hits.length < want) c.cursor.pos = 1
  }
  return out
}

function scrollResponse(c: ScrollContext, started: number, hits: SearchHit[], first?: SearchResponse): Record<string, unknown> {
  const maxScore = c.sort ? null : hits.length > 0 ? 1 : null
  return {
    _scroll_id: c.id,
    took: Math.round(performance.now() - started),
    timed_out: false,
    terminated_early: undefined,
    _shards: first?._shards ?? { total: c.indices.length || 1, successful: c.indices.length || 1, skipped: 0, failed: 0 },
    hits: {
      total: c.restTotalHitsAsInt ? c.total : { value: c.total, relation: 'eq' },
      max_score: maxScore,
      hits,
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
  const gated = await gateSearch(ctx, req)
  const watermarks = new Map<string, number>()
  for (const index of gated.indices) watermarks.set(index, await watermarkOf(ctx, index))
  // Totals and aggregations come from the first search, over the same documents the pages read.
  const first = await ctx.store.search({
    index: req.expression,
    ...req.options,
    body: { ...gated.body, size: 0, track_total_hits: true } as SearchBody,
  })
  const total = typeof first.hits.total === 'number' ? first.hits.total : (first.hits.total?.value ?? 0)
  const c: ScrollContext = {
    id: randomBytes(24).toString('base64url'),
    owner: ctx.caller.name,
    indices: gated.indices,
    watermarks,
    aliasFilters: await aliasFiltersOf(ctx, req.expression, gated.indices),
    body: gated.body,
    sort: scrollSort(gated.body.sort),
    size: typeof body.size === 'number' ? body.size : 10,
    total,
    restTotalHitsAsInt: req.restTotalHitsAsInt === true,
    keepAlive,
    expires: now + keepAlive,
    cursor: { pos: 0 },
  }
  scrolls.add(c)
  const hits = await locked(c, () => nextPage(ctx, c))
  return scrollResponse(c, started, hits, first)
}

/**
 * A context the caller may continue: the caller that opened it, still allowed to search its
 * indices (a revoked permission stops the scroll). Anyone else learns nothing about it.
 */
function ownContext(ctx: RequestContext, id: string, action: string): ScrollContext | undefined {
  const found = scrollsOf(ctx).get(id, ctx.deps.now())
  const c = found && found.owner === ctx.caller.name ? found : undefined
  // An unknown context needs the action on every index, as an unknown PIT does.
  ctx.deps.security.authorizeIndices(ctx.caller, action, c ? c.indices : ['*'])
  if (c && action === SCROLL_ACTION) ctx.deps.security.authorizeIndices(ctx.caller, SEARCH_ACTION, c.indices)
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
  const hits = await locked(c, () => nextPage(ctx, c))
  const res = scrollResponse(c, started, hits)
  if (ctx.flag('rest_total_hits_as_int', false)) (res.hits as Record<string, unknown>).total = c.total
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

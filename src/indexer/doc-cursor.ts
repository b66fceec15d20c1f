/**
 * Reading every document a search matches, page by page, without copying data: what scroll
 * and the by-query writes share. The cursor keeps the caller's gated query (DLS and feature
 * filters already ANDed in), the concrete indices and, per index, the `_seq_no` watermark at
 * open: documents written later (or re-written: an update moves a document's seq_no) are not
 * read, as they would not be in OpenSearch's point-in-time reader, and a by-query update never
 * meets its own writes. Without a sort, pages walk index by index in `_seq_no` order (the store
 * reads that range from its seq_no index, so a page costs what it returns); with a sort, pages
 * continue with `search_after` on the sort plus `_doc`.
 */
import type { Query, SearchBody, SearchHit, SearchResponse } from '../store/port'
import type { RequestContext } from './context'
import { gateSearch, type SearchRequest } from './search'

export interface DocCursor {
  indices: string[]
  /** Highest `_seq_no` of each index at open; -1 for an empty index. */
  watermarks: Map<string, number>
  /** Alias filters per concrete index, when the request named filtered aliases. */
  aliasFilters: Map<string, Query>
  /** The gated search body (query with the caller's read filter). */
  body: Record<string, unknown>
  /** The caller's sort plus `_doc`, or undefined to walk `_seq_no` order. */
  sort?: unknown[]
  /** Matches at open. */
  total: number
  /** Position in `indices` (unsorted: one index after the other; sorted: 1 once exhausted). */
  pos: number
  /** The last `_seq_no` read from `indices[pos]` (unsorted) or the last sort values (sorted). */
  after?: unknown[]
}

const isDocSort = (s: unknown) =>
  s === '_doc' || (s !== null && typeof s === 'object' && Object.keys(s).length === 1 && '_doc' in s && (s as any)._doc !== 'desc')

/** The sort of a cursor, or undefined when it is (only) `_doc`: index order is then `_seq_no` order. */
function cursorSort(sort: unknown): unknown[] | undefined {
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

/**
 * Opens a cursor through the search gate. The first search (totals, and aggregations when the
 * body has them) runs over the same documents the pages read.
 */
export async function openCursor(ctx: RequestContext, req: SearchRequest): Promise<{ cursor: DocCursor; first: SearchResponse }> {
  const gated = await gateSearch(ctx, req)
  const watermarks = new Map<string, number>()
  for (const index of gated.indices) watermarks.set(index, await watermarkOf(ctx, index))
  const first = await ctx.store.search({
    index: req.expression,
    ...req.options,
    body: { ...gated.body, size: 0, track_total_hits: true } as SearchBody,
  })
  const total = typeof first.hits.total === 'number' ? first.hits.total : (first.hits.total?.value ?? 0)
  const cursor: DocCursor = {
    indices: gated.indices,
    watermarks,
    aliasFilters: await aliasFiltersOf(ctx, req.expression, gated.indices),
    body: gated.body,
    sort: cursorSort(gated.body.sort),
    total,
    pos: 0,
  }
  return { cursor, first }
}

function queryFor(c: DocCursor, index: string): Query | undefined {
  const alias = c.aliasFilters.get(index)
  const q = c.body.query as Query | undefined
  if (!alias) return q
  return { bool: { must: [q ?? { match_all: {} }], filter: [alias] } }
}

/** The next page: at most `size` hits at or below each index's watermark, with `_seq_no` and `_primary_term`. */
export async function nextPage(ctx: RequestContext, c: DocCursor, size: number): Promise<SearchHit[]> {
  const out: SearchHit[] = []
  const base: Record<string, unknown> = { ...c.body, seq_no_primary_term: true, version: true }
  delete base.aggs
  delete base.aggregations
  delete base.from
  if (c.sort === undefined) {
    while (out.length < size && c.pos < c.indices.length) {
      const index = c.indices[c.pos]
      const mark = c.watermarks.get(index) ?? -1
      const want = size - out.length
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
                ...(c.after ? { search_after: c.after } : {}),
              } as SearchBody,
            })
      const hits = res?.hits.hits ?? []
      let done = hits.length < want
      for (const h of hits) {
        if ((h._seq_no ?? 0) > mark) {
          done = true
          break
        }
        c.after = [h._seq_no]
        out.push(h)
      }
      if (done) {
        c.pos++
        c.after = undefined
      }
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
  while (out.length < size && c.pos === 0) {
    const want = size - out.length
    const res = await ctx.store.search({
      index: c.indices,
      expand_wildcards: 'all',
      body: {
        ...base,
        query,
        size: want,
        sort: c.sort,
        track_total_hits: false,
        ...(c.after ? { search_after: c.after } : {}),
      } as SearchBody,
    })
    const hits = res.hits.hits
    for (const h of hits) {
      c.after = h.sort
      if ((h._seq_no ?? 0) <= (c.watermarks.get(h._index) ?? -1)) out.push(h)
    }
    if (hits.length < want) c.pos = 1
  }
  return out
}

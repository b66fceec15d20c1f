/** Search, count and explain requests: their targets, query rewrite, limits and time-outs. */
import { noteSearch } from './activity'
import { storedValues } from './stored-fields'
import { answerKey, cachedAnswer, keepAnswer } from './request-cache'
import { IndexNotFound, ParsingError, StoreError } from '../errors'
import type { CountParams, CountResponse, ResolveOptions, SearchBody, SearchParams, SearchResponse } from '../port'
import { DEFAULT_MAX_TERMS_COUNT, rewriteTerms } from '../query/terms'
import { checkJsonDepth, indexLimits } from '../query/limits'
import { isObject } from '../query/doc'
import { scopedSpecs } from '../query/nested'
import { sourceDisabled } from '../source-filter'
import { parseTimeValue } from '../settings'
import type { StoreCore } from './core'
import { getRow, readTarget } from './documents'
import { openPit, pitKeepAlive, pitRows } from './pits'
import { runCount, runSearch, type Row, type SearchTarget } from './search'
import type { SearchLimits } from './search-limits'
import {
  columns,
  exactCount,
  paged,
  planOf,
  plannedRows,
  rowsSql,
  seqSql,
  sortedRows,
  topByScore,
  valuedCount,
  withSources,
} from './search-rows'
import { termStats } from './text-index'
import type { Needs, Stats } from '../query/score'

export function explain(core: StoreCore, index: string, query: unknown, afterSeq?: number): string[] {
  const meta = core.indexMeta(index)
  core.refresh([meta])
  const { sql, params } = afterSeq === undefined ? rowsSql(core, meta, query) : seqSql(core, meta, query, 1, afterSeq)
  try {
    return (core.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail)
  } finally {
    core.lastPlan = undefined
  }
}

function searchTargets(
  core: StoreCore,
  expression: string | string[] | undefined,
  opts: ResolveOptions,
  node?: SearchLimits,
): SearchTarget[] {
  const resolved = core.resolveTargets(expression, { ...opts, forbidClosed: true })
  // Every acknowledged write is searchable: the field values still pending go in first (refresh.ts).
  core.refresh([...resolved.keys()].map((name) => core.indexMeta(name)))
  return [...resolved].map(([name, filters]) => {
    const meta = core.indexMeta(name)
    return {
      name,
      uuid: meta.uuid,
      // What root documents hold: a nested document's fields are read through a nested query or aggregation.
      specs: scopedSpecs(meta.specs, ''),
      shards: resolved.size,
      sourceDisabled: sourceDisabled(meta.mappings),
      filters,
      limits: node === undefined ? undefined : indexLimits(meta.settings, node.maxClauseCount, node.allowExpensiveQueries),
      rows: (query: unknown, limit?: number) => {
        // A bounded page is fetched in one call; open-ended reads go page by page.
        if (limit !== undefined) {
          const { sql, params } = rowsSql(core, meta, query, limit)
          return withSources(core, core.db.query(sql).all(...params) as Row[])
        }
        const plan = planOf(core, meta, query)
        if (plan) return plannedRows(core, plan)
        return paged(
          core,
          (after) => rowsSql(core, meta, query, undefined, after),
          (r) => r.rid,
        )
      },
      exactCount: filters ? undefined : (query: unknown, cap?: number) => exactCount(core, meta, query, cap),
      storedValues: (source: Record<string, unknown>, names: string[]) => storedValues(meta, source, names),
      columns: filters
        ? undefined
        : (fields: Array<{ field: string; path: string; boolean: boolean }>, query: unknown) => columns(core, meta, fields, query),
      termStats: core.scanOnly
        ? undefined
        : (needs: Needs) => {
            core.textVisible()
            return termStats(core.db, meta, needs)
          },
      topByScore:
        filters || core.scanOnly
          ? undefined
          : (query: unknown, stats: Stats, window: number) => topByScore(core, meta, query, stats, window),
      valuedCount: filters ? undefined : (query: unknown, field: string) => valuedCount(core, meta, query, field),
      sortedRows: filters
        ? undefined
        : (query: unknown, field: string, order: 1 | -1, after: string | number | undefined, window: number) =>
            sortedRows(core, meta, query, field, order, after, window),
      rowsBySeq: (query: unknown, order: 1 | -1, after: number | undefined) =>
        paged(
          core,
          (next) => seqSql(core, meta, query, order, next ?? after),
          (r) => r.seq,
        ),
    }
  })
}

/** `index.max_result_window` (10,000): each index checks its own, so the smallest applies. */
function maxResultWindow(core: StoreCore, targets: SearchTarget[]): number {
  let max: number | undefined
  for (const t of targets) {
    const v = Number(core.cat.byName.get(t.name)?.settings['index.max_result_window'] ?? 10_000)
    if (Number.isFinite(v)) max = max === undefined ? v : Math.min(max, v)
  }
  return max ?? 10_000
}

/** Terms lookups resolved and `index.max_terms_count` enforced (see query/terms.ts). */
function rewriteQuery(core: StoreCore, query: unknown, indices: string[]): unknown {
  if (query === undefined) return query
  let maxTerms = DEFAULT_MAX_TERMS_COUNT
  for (const name of indices) {
    const v = core.cat.byName.get(name)?.settings['index.max_terms_count']
    if (typeof v === 'string') maxTerms = Math.min(maxTerms, Number(v))
  }
  return rewriteTerms(query, {
    maxTerms,
    lookup: (index, id) => {
      const meta = readTarget(core, index)
      if (!meta) throw new IndexNotFound(index)
      const row = getRow(core, meta, id)
      return row ? (JSON.parse(row.src) as Record<string, unknown>) : undefined
    },
  })
}

/** The body with its query rewritten for the indices it searches (see rewriteQuery). */
function withRewrittenQuery(core: StoreCore, body: SearchBody, indices: string[]): SearchBody {
  return body.query === undefined ? body : { ...body, query: rewriteQuery(core, body.query, indices) as SearchBody['query'] }
}

/** The request's `timeout`, else `search.default_search_timeout`; -1: none. */
function timeoutOf(body: SearchBody, limits: SearchLimits): number {
  const t = (body as Record<string, unknown>).timeout
  if (t === undefined || t === null) return limits.defaultSearchTimeoutMs
  if (t === -1 || t === '-1') return -1
  return parseTimeValue(String(t), 'timeout')
}

export async function search(core: StoreCore, params: SearchParams): Promise<SearchResponse> {
  core.assertOpen()
  let body = params.body ?? {}
  if (!isObject(body)) throw new ParsingError('request body must be an object')
  // Before anything walks it: the query rewrite and the evaluator recurse.
  checkJsonDepth(body)
  const limits = core.limits()
  const timeoutMs = timeoutOf(body, limits)
  if (body.pit) {
    if (params.index !== undefined && params.index !== '' && !(Array.isArray(params.index) && params.index.length === 0))
      throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: [indices] cannot be used with point in time;')
    const pit = openPit(core, body.pit.id)
    if (body.pit.keep_alive) {
      // Like OpenSearch's reader contexts: the keep-alive only grows, and counts from this use.
      const keepAlive = pitKeepAlive(body.pit.keep_alive, limits)
      pit.keepAlive = Math.max(pit.keepAlive, keepAlive)
      pit.expires = core.now() + pit.keepAlive
    }
    body = withRewrittenQuery(
      core,
      body,
      pit.targets.map((t) => t.name),
    )
    const targets: SearchTarget[] = pit.targets.map((t) => ({
      name: t.name,
      uuid: t.uuid,
      specs: t.specs && scopedSpecs(t.specs, ''),
      shards: pit.targets.length,
      sourceDisabled: sourceDisabled(core.cat.byIx.get(t.ix)?.mappings),
      filters: null,
      limits: indexLimits(core.cat.byIx.get(t.ix)?.settings, limits.maxClauseCount, limits.allowExpensiveQueries),
      rows: () => pitRows(core, t),
    }))
    return runSearch(targets, body, {
      now: core.now(),
      maxResultWindow: 10_000,
      restTotalHitsAsInt: params.rest_total_hits_as_int,
      pitId: pit.id,
      timeoutMs,
      maxBuckets: limits.maxBuckets,
      maxRequestKeys: limits.maxRequestKeys,
      readDisabledSource: params.read_disabled_source,
    })
  }
  const started = performance.now()
  const targets = searchTargets(core, params.index, params, limits)
  body = withRewrittenQuery(
    core,
    body,
    targets.map((t) => t.name),
  )
  const metas = targets.map((t) => ({ meta: core.indexMeta(t.name), filters: t.filters }))
  const key = answerKey(metas, body as Record<string, unknown>, [params.rest_total_hits_as_int, params.read_disabled_source, limits])
  const cached = key === undefined ? undefined : cachedAnswer(core, metas[0].meta, key, started)
  if (cached) return cached
  try {
    const answer = await runSearch(targets, body, {
      now: core.now(),
      maxResultWindow: maxResultWindow(core, targets),
      restTotalHitsAsInt: params.rest_total_hits_as_int,
      timeoutMs,
      maxBuckets: limits.maxBuckets,
      maxRequestKeys: limits.maxRequestKeys,
      readDisabledSource: params.read_disabled_source,
    })
    noteSearch(
      metas.map((m) => m.meta),
      performance.now() - started,
      Array.isArray(body.stats) ? body.stats.map(String) : [],
    )
    if (key !== undefined) keepAnswer(core, metas[0].meta, key, answer)
    return answer
  } finally {
    core.lastPlan = undefined // plans embed field ids and `now`: valid for this call only
  }
}

export async function count(core: StoreCore, params: CountParams): Promise<CountResponse> {
  core.assertOpen()
  const body = params.body ?? {}
  if (!isObject(body)) throw new ParsingError('request body must be an object')
  for (const k of Object.keys(body)) if (k !== 'query') throw new ParsingError(`request does not support [${k}]`)
  checkJsonDepth(body)
  const limits = core.limits()
  const targets = searchTargets(core, params.index, params, limits)
  let n: number
  try {
    n = await runCount(
      targets,
      rewriteQuery(
        core,
        body.query,
        targets.map((t) => t.name),
      ),
      core.now(),
      limits.defaultSearchTimeoutMs,
    )
  } finally {
    core.lastPlan = undefined
  }
  return { count: n, _shards: { total: Math.max(1, targets.length), successful: Math.max(1, targets.length), skipped: 0, failed: 0 } }
}

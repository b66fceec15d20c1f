/**
 * Index management: create, delete, get, exists, mappings, settings, refresh, flush.
 */
import { flattenKeys, nestKeys } from '../store/flat-keys'
import type { CreateIndexBody, IndexSettings, IndexStats, Mappings, ResolveOptions } from '../store/port'
import { badRequest, type RequestContext } from './context'
import { Reply, type IndexRouter } from './router'
import { globMatcher } from './names'
import { COMPATIBLE_OPENSEARCH_VERSION } from './cluster'
import { indexShards } from './topology'
import { indexFigures, sectionOf } from './index-figures'
import { unrecognized } from './suggestion'
import { humanBytes, humanTime } from './cat-table'
import { nodeIdOf } from './node-info'

export const INDEX_ACTIONS = {
  create: 'indices:admin/create',
  delete: 'indices:admin/delete',
  get: 'indices:admin/get',
  getMapping: 'indices:admin/mappings/get',
  putMapping: 'indices:admin/mapping/put',
  getSettings: 'indices:monitor/settings/get',
  putSettings: 'indices:admin/settings/update',
  refresh: 'indices:admin/refresh',
  flush: 'indices:admin/flush',
  forceMerge: 'indices:admin/forcemerge',
  clearCache: 'indices:admin/cache/clear',
  stats: 'indices:monitor/stats',
  close: 'indices:admin/close',
  open: 'indices:admin/open',
} as const

const CREATE_KEYS = new Set(['settings', 'mappings', 'aliases'])

/** `{index: {a: {b: 1}}}` as `{"index.a.b": "1"}`, what `flat_settings=true` answers. */
export function flatSettings(settings: Record<string, unknown>): Record<string, unknown> {
  const flat = flattenKeys(settings)
  return Object.fromEntries(Object.entries(flat).map(([k, v]) => [k, Array.isArray(v) || v === null ? v : String(v)]))
}

function shapeSettings(ctx: RequestContext, settings: { index: Record<string, unknown> }): Record<string, unknown> {
  return ctx.flag('flat_settings', false) ? flatSettings(settings) : settings
}

async function createIndex(ctx: RequestContext) {
  const index = ctx.part('index')!
  ctx.deps.security.authorizeIndices(ctx.caller, INDEX_ACTIONS.create, [index])
  const body = (await ctx.json()) ?? {}
  for (const key of Object.keys(body)) {
    if (!CREATE_KEYS.has(key)) throw badRequest(`unknown key [${key}] for create index`, 'parse_exception')
  }
  for (const key of CREATE_KEYS) {
    const v = body[key]
    if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v))) {
      throw badRequest(`Failed to parse [${key}]: expected an object`, 'mapper_parsing_exception')
    }
  }
  return ctx.store.createIndex({ index, body: body as CreateIndexBody })
}

/**
 * The request's index expression (`fallback` when it names none) and resolve options, once the
 * caller holds the action on what they resolve to; `target` is both as the Store takes them.
 */
async function authorizedTarget(ctx: RequestContext, action: string, fallback?: string, defaults?: ResolveOptions) {
  const expression = ctx.indexExpression() ?? fallback
  const options = ctx.resolveOptions(defaults)
  await ctx.authorized(action, expression, options)
  return { expression, options, target: { ...(expression !== undefined ? { index: expression } : {}), ...options } }
}

async function deleteIndex(ctx: RequestContext) {
  const expression = ctx.indexExpression()!
  const options = ctx.resolveOptions()
  await ctx.authorized(INDEX_ACTIONS.delete, expression, { ...options, expand_wildcards: options.expand_wildcards ?? 'open' })
  return ctx.store.deleteIndex({ index: expression, ...options })
}

async function getIndex(ctx: RequestContext) {
  const { expression, options } = await authorizedTarget(ctx, INDEX_ACTIONS.get)
  const target = { index: expression!, ...options }
  if (ctx.request.method === 'HEAD') return (await ctx.store.existsIndex(target)) ? {} : new Reply(404, {})
  const got = await ctx.store.getIndex(target)
  if (ctx.flag('human', false)) for (const info of Object.values(got)) addHumanSettings(info.settings.index)
  if (!ctx.flag('flat_settings', false)) return got
  return Object.fromEntries(Object.entries(got).map(([name, info]) => [name, { ...info, settings: flatSettings(info.settings) }]))
}

/** `?human`: the creation date and the creating version in readable form, next to the raw values. */
function addHumanSettings(index: Record<string, unknown>): void {
  if (index.creation_date !== undefined) index.creation_date_string = new Date(Number(index.creation_date)).toISOString()
  const version = index.version as Record<string, unknown> | undefined
  if (version?.created !== undefined) version.created_string = COMPATIBLE_OPENSEARCH_VERSION
}

async function closeIndex(ctx: RequestContext) {
  const { expression, options } = await authorizedTarget(ctx, INDEX_ACTIONS.close)
  return ctx.store.closeIndex({ index: expression!, ...options })
}

async function openIndex(ctx: RequestContext) {
  const { expression, options } = await authorizedTarget(ctx, INDEX_ACTIONS.open, undefined, { expand_wildcards: 'closed' })
  return ctx.store.openIndex({ index: expression!, ...options })
}

async function getMapping(ctx: RequestContext) {
  const { target } = await authorizedTarget(ctx, INDEX_ACTIONS.getMapping)
  return ctx.store.getMapping(target)
}

async function putMapping(ctx: RequestContext) {
  const { expression, options } = await authorizedTarget(ctx, INDEX_ACTIONS.putMapping, '_all')
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: mapping source is missing;', 'action_request_validation_exception')
  if ('_doc' in body) throw badRequest('Types cannot be provided in put mapping requests')
  return ctx.store.putMapping({ index: expression!, body: body as Mappings, ...options })
}

async function getSettings(ctx: RequestContext) {
  const { target } = await authorizedTarget(ctx, INDEX_ACTIONS.getSettings)
  const names = ctx
    .part('name')
    ?.split(',')
    .map((n) => (n === '_all' ? '*' : n))
  const got = await ctx.store.getSettings(target)
  const out: Record<string, unknown> = {}
  for (const [index, { settings }] of Object.entries(got)) {
    if (!names) {
      out[index] = { settings: shapeSettings(ctx, settings) }
      continue
    }
    // Setting-name filters match the flat keys; the answer keeps the caller's shape.
    const matchers = names.map(globMatcher)
    const flat = flatSettings(settings)
    const kept = Object.fromEntries(Object.entries(flat).filter(([k]) => matchers.some((m) => m(k))))
    if (Object.keys(kept).length === 0) continue
    out[index] = { settings: ctx.flag('flat_settings', false) ? kept : nestKeys(kept) }
  }
  return out
}

async function putSettings(ctx: RequestContext) {
  const { expression, options } = await authorizedTarget(ctx, INDEX_ACTIONS.putSettings, '_all')
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: no settings to update;', 'action_request_validation_exception')
  const settings = (body.settings !== undefined && Object.keys(body).length === 1 ? body.settings : body) as IndexSettings
  const preserve = ctx.flag('preserve_existing', false)
  return ctx.store.putSettings({ index: expression!, body: settings, ...options, ...(preserve ? { preserve_existing: true } : {}) })
}

async function refresh(ctx: RequestContext) {
  const { target } = await authorizedTarget(ctx, INDEX_ACTIONS.refresh)
  return ctx.store.refresh(target)
}

async function flush(ctx: RequestContext) {
  const { target } = await authorizedTarget(ctx, INDEX_ACTIONS.flush)
  if (ctx.flag('force', false) && ctx.flag('wait_if_ongoing', true) === false) {
    throw badRequest('Validation Failed: 1: wait_if_ongoing must be true for a force flush;', 'action_request_validation_exception')
  }
  return ctx.store.flush(target)
}

/**
 * `_forcemerge`: the store has no segments to merge; what comes nearest is writing its log back
 * into the file, which a flush does (operators and lifecycle policies call this after rollover).
 */
async function forceMerge(ctx: RequestContext) {
  const { target } = await authorizedTarget(ctx, INDEX_ACTIONS.forceMerge)
  ctx.int('max_num_segments') // a number, or OpenSearch's 400
  return ctx.store.flush(target)
}

/**
 * `_cache/clear`: the store's only cache of answers is dropped by every write already; the
 * fields of pending documents are written (a refresh), so the next search reads no leftover.
 */
async function clearCache(ctx: RequestContext) {
  const { target } = await authorizedTarget(ctx, INDEX_ACTIONS.clearCache)
  return ctx.store.refresh(target)
}

/** Metric names OpenSearch's indices stats API knows (also the index metrics of `_nodes/stats`). */
export const STATS_METRICS = new Set([
  '_all',
  'docs',
  'store',
  'flush',
  'indexing',
  'get',
  'search',
  'merge',
  'refresh',
  'warmer',
  'query_cache',
  'fielddata',
  'completion',
  'segments',
  'translog',
  'request_cache',
  'recovery',
])

/** `GET [/<index>]/_stats[/<metric>]`: per index, primaries and total (replicas are never assigned on one node), and `_all`. */
async function indicesStats(ctx: RequestContext) {
  const expression = ctx.indexExpression()
  const options = ctx.resolveOptions()
  const metrics = (ctx.part('metric') ?? '_all').split(',').map((m) => m.trim())
  for (const m of metrics) if (!STATS_METRICS.has(m)) throw badRequest(unrecognized(ctx.url.pathname, 'metric', m, STATS_METRICS))
  const wanted = new Set([...(metrics.includes('_all') ? STATS_METRICS : metrics)].map(sectionOf))
  const level = ctx.str('level') ?? 'indices'
  if (!['cluster', 'indices', 'shards'].includes(level))
    throw badRequest(`level parameter must be one of [cluster] or [indices] or [shards] but was [${level}]`)
  const human = ctx.flag('human', false)
  const indices = await ctx.authorized(INDEX_ACTIONS.stats, expression, options)
  const stats = (indices.length === 0 ? [] : await ctx.store.stats({ index: indices, expand_wildcards: 'all' })).filter(
    (s) => s.status === 'open',
  )
  const shards = new Map(
    (stats.length === 0 ? [] : await indexShards(ctx.store, stats.map((s) => s.index).join(','))).map((s) => [s.index, s]),
  )
  const groupPatterns = ctx.list('groups')?.map(globMatcher)
  const groups = groupPatterns && ((g: string) => groupPatterns.some((matches) => matches(g)))
  const figures = (of: IndexStats[]) => statsFigures(indexFigures(of, wanted, groups), human)
  let total = 0
  let successful = 0
  const out: Record<string, unknown> = {}
  for (const s of stats) {
    const sh = shards.get(s.index)
    total += (sh?.shards ?? 1) * (1 + (sh?.replicas ?? 0))
    successful += sh?.shards ?? 1
    const own = figures([s])
    out[s.index] = {
      uuid: s.uuid,
      primaries: own,
      total: own,
      ...(level === 'shards' ? { shards: shardFigures(ctx, s, sh?.shards ?? 1, own, figures([])) } : {}),
    }
  }
  const sum = figures(stats)
  return {
    _shards: { total, successful, failed: 0 },
    _all: { primaries: sum, total: sum },
    ...(level === 'cluster' ? {} : { indices: out }),
  }
}

/**
 * `level=shards`: each primary of the index on this node, the index's figures on its first (the
 * documents are one table, not split by shard), with the routing and commit OpenSearch lists.
 */
function shardFigures(ctx: RequestContext, s: IndexStats, count: number, own: Record<string, unknown>, empty: Record<string, unknown>) {
  const node = nodeIdOf(ctx)
  const out: Record<string, unknown> = {}
  for (let shard = 0; shard < count; shard++) {
    const docs = shard === 0 ? s.docs_count : 0
    out[String(shard)] = [
      {
        routing: { state: 'STARTED', primary: true, node, relocating_node: null },
        ...(shard === 0 ? own : empty),
        commit: { id: commitId(s.uuid, shard, s.flush_total), generation: s.flush_total + 1, user_data: {}, num_docs: docs },
        seq_no: { max_seq_no: docs - 1, local_checkpoint: docs - 1, global_checkpoint: docs - 1 },
        shard_path: { state_path: '', data_path: '', is_custom_data_path: false },
      },
    ]
  }
  return out
}

/** A commit's id: base64 of 16 bytes, changing with each flush, as Lucene's commit ids do. */
const commitId = (uuid: string, shard: number, flushes: number) =>
  Buffer.from(new Bun.CryptoHasher('md5').update(`${uuid}/${shard}/${flushes}`).digest()).toString('base64')

/**
 * The sections as OpenSearch writes them: `get.getTime` always (OpenSearch 3 adds it), and with
 * `human` each `*_in_millis` and `*_in_bytes` figure also as text (`time`, `size`).
 */
function statsFigures(sections: Record<string, unknown>, human: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [name, section] of Object.entries(sections)) {
    const fields: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(section as Record<string, unknown>)) {
      if (human && typeof v === 'number' && k.endsWith('_in_millis')) fields[k.slice(0, -'_in_millis'.length)] = humanTime(v)
      if (human && typeof v === 'number' && k.endsWith('_in_bytes')) fields[k.slice(0, -'_in_bytes'.length)] = humanBytes(v)
      if (name === 'get' && k === 'time_in_millis') fields.getTime = humanTime(v as number)
      fields[k] = v
    }
    out[name] = fields
  }
  return out
}

export function indexRoutes(r: IndexRouter): void {
  r.on('GET', ['/_stats', '/_stats/:metric', '/:index/_stats', '/:index/_stats/:metric'], indicesStats)
  r.on('PUT', '/:index', createIndex)
  r.on('DELETE', '/:index', deleteIndex)
  r.on(['GET', 'HEAD'], '/:index', getIndex)
  r.on('GET', ['/_mapping', '/:index/_mapping'], getMapping)
  r.on(['PUT', 'POST'], ['/:index/_mapping', '/_mapping'], putMapping)
  r.on('GET', ['/_settings', '/:index/_settings', '/:index/_settings/:name', '/_settings/:name'], getSettings)
  r.on('PUT', ['/:index/_settings', '/_settings'], putSettings)
  r.on(['GET', 'POST'], ['/_refresh', '/:index/_refresh'], refresh)
  r.on(['GET', 'POST'], ['/_flush', '/:index/_flush'], flush)
  r.on('POST', ['/_forcemerge', '/:index/_forcemerge'], forceMerge)
  r.on('POST', ['/_cache/clear', '/:index/_cache/clear'], clearCache)
  r.on('POST', '/:index/_close', closeIndex)
  r.on('POST', '/:index/_open', openIndex)
}

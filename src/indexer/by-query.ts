/**
 * `_update_by_query`, `_delete_by_query` and `_reindex` (local source). Documents are read
 * through the document cursor, that is through the search gate (authorization, the caller's DLS:
 * a document the caller cannot read is neither changed nor copied), and written in batches with
 * `_bulk` under compare-and-set on the `_seq_no` each was read at: a document changed meanwhile
 * is a version conflict, which aborts the request or, with `conflicts=proceed`, is counted.
 * `wait_for_completion=false` runs the request as a task (`GET _tasks/<id>`).
 */
import type { BulkLine, SearchHit } from '../store/port'
import { badRequest, withoutSystemIndices, type RequestContext } from './context'
import { openCursor, nextPage } from './doc-cursor'
import { ACTIONS, refreshParam } from './documents'
import { requireNoPipeline } from './ingest'
import { compileScript, type SourceEdit } from './painless'
import { resolveStoredScript } from './stored-scripts'
import { errorAnswer } from '../http/errors'
import { Reply, type IndexRouter } from './router'
import { checkSearchBody, uriQuery, type SearchRequest } from './search'
import { startTask } from './tasks'

export const BY_QUERY_ACTIONS = {
  update: 'indices:data/write/update/byquery',
  delete: 'indices:data/write/delete/byquery',
  reindex: 'indices:data/write/reindex',
} as const

/** OpenSearch's default batch (scroll_size) of the by-query writes. */
const DEFAULT_BATCH = 1000

interface Counts {
  total: number
  updated: number
  created: number
  deleted: number
  batches: number
  version_conflicts: number
  noops: number
  failures: unknown[]
}

interface Plan {
  kind: 'update' | 'delete' | 'reindex'
  req: SearchRequest
  edit?: SourceEdit
  proceed: boolean
  maxDocs?: number
  batch: number
  dest?: { index: string; opType: 'index' | 'create' }
}

function conflictsParam(v: unknown): boolean {
  if (v === undefined || v === 'abort') return false
  if (v === 'proceed') return true
  throw badRequest(`conflicts may only be "proceed" or "abort" but was [${String(v)}]`)
}

function positive(v: unknown, name: string): number | undefined {
  if (v === undefined) return undefined
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw badRequest(`[${name}] parameter cannot be negative or zero, found [${String(v)}]`)
  return n
}

/** One batch: the bulk lines for the hits, sent, and the outcome counted. */
async function writeBatch(ctx: RequestContext, plan: Plan, hits: SearchHit[], counts: Counts): Promise<boolean> {
  const lines: BulkLine[] = []
  for (const h of hits) {
    if (plan.kind === 'delete') {
      lines.push({ delete: { _index: h._index, _id: h._id, if_seq_no: h._seq_no, if_primary_term: h._primary_term } })
      continue
    }
    // An index keeping no source (`_source: {enabled: false}`) has nothing to write back or copy.
    if (h._source === undefined) throw badRequest(`[${h._index}][${h._id}] didn't store _source`)
    const source = structuredClone(h._source) as Record<string, unknown>
    // The script's ctx.op: `noop` leaves the document (counted), `delete` deletes it (the copy, for a reindex).
    const op = plan.edit?.(source) ?? 'index'
    if (op === 'noop') {
      counts.noops++
      continue
    }
    const target =
      plan.kind === 'update'
        ? { _index: h._index, _id: h._id, if_seq_no: h._seq_no, if_primary_term: h._primary_term }
        : { _index: plan.dest!.index, _id: h._id }
    if (op === 'delete') lines.push({ delete: target })
    else lines.push({ [plan.kind === 'update' ? 'index' : plan.dest!.opType]: target }, source)
  }
  if (lines.length === 0) return true
  const refresh = refreshParam(ctx)
  const res = await ctx.store.bulk({ body: lines, ...(refresh !== undefined ? { refresh } : {}) })
  counts.batches++
  for (const item of res.items) {
    const r = Object.values(item)[0]!
    if (r.status === 409) {
      counts.version_conflicts++
      if (!plan.proceed) counts.failures.push({ index: r._index, id: r._id, cause: r.error, status: 409 })
    } else if (r.status >= 400) {
      counts.failures.push({ index: r._index, id: r._id, cause: r.error, status: r.status })
    } else if (r.result === 'created') counts.created++
    else if (r.result === 'deleted') counts.deleted++
    else if (r.result === 'noop') counts.noops++
    else counts.updated++
  }
  return counts.failures.length === 0
}

/** OpenSearch's answer lists the counts its kind of request can move: `created` for reindex only, `updated` not for a delete. */
function response(counts: Counts, started: number, kind: Plan['kind']): Record<string, unknown> {
  return {
    took: Math.round(performance.now() - started),
    timed_out: false,
    total: counts.total,
    ...(kind !== 'delete' ? { updated: counts.updated } : {}),
    ...(kind === 'reindex' ? { created: counts.created } : {}),
    deleted: counts.deleted,
    batches: counts.batches,
    version_conflicts: counts.version_conflicts,
    noops: counts.noops,
    retries: { bulk: 0, search: 0 },
    throttled_millis: 0,
    requests_per_second: -1.0,
    throttled_until_millis: 0,
    failures: counts.failures,
  }
}

/** Authorizes, opens the cursor, then runs now or as a task. */
async function execute(ctx: RequestContext, plan: Plan, action: string, description: string) {
  const started = performance.now()
  const { cursor } = await openCursor(ctx, plan.req)
  if (plan.kind === 'reindex' && cursor.indices.includes(plan.dest!.index))
    throw badRequest(`reindex cannot write into an index its reading from [${plan.dest!.index}]`, 'action_request_validation_exception')
  const counts: Counts = { total: 0, updated: 0, created: 0, deleted: 0, batches: 0, version_conflicts: 0, noops: 0, failures: [] }
  const want = plan.maxDocs === undefined ? cursor.total : Math.min(plan.maxDocs, cursor.total)
  counts.total = want
  const run = async () => {
    let done = 0
    while (done < want) {
      const hits = await nextPage(ctx, cursor, Math.min(plan.batch, want - done))
      if (hits.length === 0) break
      done += hits.length
      if (!(await writeBatch(ctx, plan, hits, counts))) break
    }
    return response(counts, started, plan.kind)
  }
  if (ctx.flag('wait_for_completion', true) === false) {
    const status = () => {
      const { took: _t, timed_out: _o, failures: _f, ...rest } = response(counts, started, plan.kind)
      return rest
    }
    const id = startTask(ctx, action, description, status, run, (e) => {
      const answer = errorAnswer(e, 'index')
      return answer.unexpected ? { type: 'exception', reason: String(e) } : answer.body
    })
    return { task: id }
  }
  const body = await run()
  // Like OpenSearch, a request that stopped on failures answers with their status.
  const statuses = counts.failures.map((f) => (f as { status: number }).status)
  return statuses.length > 0 ? new Reply(Math.max(...statuses), body) : body
}

async function byQueryBody(
  ctx: RequestContext,
): Promise<{ body: Record<string, unknown>; edit?: SourceEdit; maxDocs?: number; proceed: boolean }> {
  // _update_by_query rewrites documents through `?pipeline=` in OpenSearch.
  requireNoPipeline(ctx.str('pipeline'))
  const raw = (await ctx.json()) ?? {}
  const { script, max_docs, conflicts, ...search } = raw
  for (const key of Object.keys(search))
    if (key !== 'query' && key !== 'slice' && key !== 'sort') throw badRequest(`request does not support [${key}]`, 'parsing_exception')
  if (search.slice !== undefined) throw badRequest('[slice] is not supported by this server')
  const q = uriQuery(ctx)
  if (q !== undefined) search.query = q
  return {
    body: checkSearchBody(search),
    ...(script !== undefined ? { edit: compileScript(await resolveStoredScript(ctx.store, script)) } : {}),
    maxDocs: positive(ctx.str('max_docs') ?? max_docs, 'max_docs'),
    proceed: conflictsParam(ctx.str('conflicts') ?? conflicts),
  }
}

function slicesParam(ctx: RequestContext): void {
  const slices = ctx.str('slices')
  if (slices !== undefined && slices !== '1' && slices !== 'auto')
    throw badRequest('[slices] other than 1 or auto are not supported by this server')
}

async function updateOrDelete(ctx: RequestContext, kind: 'update' | 'delete') {
  slicesParam(ctx)
  const expression = ctx.indexExpression()!
  const options = ctx.resolveOptions()
  // The by-query action and the per-document write on every index, before anything is read.
  const indices = await ctx.authorized(BY_QUERY_ACTIONS[kind], expression, options)
  ctx.deps.security.authorizeIndices(ctx.caller, kind === 'update' ? ACTIONS.index : ACTIONS.delete, indices)
  const { body, edit, maxDocs, proceed } = await byQueryBody(ctx)
  if (kind === 'delete' && edit) throw badRequest('[script] is not supported by delete by query', 'parsing_exception')
  const plan: Plan = {
    kind,
    req: { expression, namedIndices: true, body, options },
    edit,
    proceed,
    maxDocs,
    batch: positive(ctx.str('scroll_size'), 'scroll_size') ?? DEFAULT_BATCH,
  }
  return execute(ctx, plan, BY_QUERY_ACTIONS[kind], `${kind}-by-query [${indices.join(', ')}]`)
}

const REINDEX_KEYS = new Set(['source', 'dest', 'script', 'max_docs', 'size', 'conflicts'])

async function reindex(ctx: RequestContext) {
  slicesParam(ctx)
  await ctx.authorizeCluster(BY_QUERY_ACTIONS.reindex)
  const raw = (await ctx.json()) ?? {}
  for (const key of Object.keys(raw))
    if (!REINDEX_KEYS.has(key)) throw badRequest(`[reindex] unknown field [${key}]`, 'x_content_parse_exception')
  const source = raw.source as Record<string, unknown> | undefined
  const dest = raw.dest as Record<string, unknown> | undefined
  const problems: string[] = []
  if (!source || typeof source !== 'object' || source.index === undefined)
    problems.push('use _all if you really want to copy from all existing indexes')
  if (!dest || typeof dest !== 'object' || typeof dest.index !== 'string') problems.push('index must be specified')
  if (problems.length > 0)
    throw badRequest(`Validation Failed: ${problems.map((p, i) => `${i + 1}: ${p};`).join('')}`, 'action_request_validation_exception')
  if (source!.remote !== undefined) throw badRequest('reindex from a remote cluster is not supported by this server')
  for (const key of Object.keys(source!))
    if (!['index', 'query', '_source', 'size', 'sort'].includes(key))
      throw badRequest(`[source] unknown field [${key}]`, 'x_content_parse_exception')
  for (const key of Object.keys(dest!))
    if (!['index', 'op_type', 'version_type', 'pipeline', 'routing'].includes(key))
      throw badRequest(`[dest] unknown field [${key}]`, 'x_content_parse_exception')
  requireNoPipeline(dest!.pipeline)
  const opType = dest!.op_type ?? 'index'
  if (opType !== 'index' && opType !== 'create') throw badRequest(`opType must be 'create' or 'index', found: [${String(opType)}]`)
  const destIndex = dest!.index as string
  // The destination: the same write permission a bulk item into it needs.
  await ctx.authorizeWrite(ACTIONS.index, destIndex)
  const expression = withoutSystemIndices([source!.index].flat().join(','))
  const body: Record<string, unknown> = {}
  if (source!.query !== undefined) body.query = source!.query
  if (source!._source !== undefined) body._source = source!._source
  if (source!.sort !== undefined) body.sort = source!.sort
  const plan: Plan = {
    kind: 'reindex',
    req: { expression, namedIndices: true, body: checkSearchBody(body), options: { expand_wildcards: 'open' } },
    ...(raw.script !== undefined ? { edit: compileScript(await resolveStoredScript(ctx.store, raw.script)) } : {}),
    proceed: conflictsParam(ctx.str('conflicts') ?? raw.conflicts),
    maxDocs: positive(ctx.str('max_docs') ?? raw.max_docs ?? raw.size, 'max_docs'),
    batch: positive(source!.size, 'size') ?? DEFAULT_BATCH,
    dest: { index: destIndex, opType },
  }
  return execute(ctx, plan, BY_QUERY_ACTIONS.reindex, `reindex from [${String(source!.index)}] to [${destIndex}]`)
}

export function byQueryRoutes(r: IndexRouter): void {
  r.on('POST', '/_reindex', reindex)
  r.on('POST', '/:index/_update_by_query', (ctx) => updateOrDelete(ctx, 'update'))
  r.on('POST', '/:index/_delete_by_query', (ctx) => updateOrDelete(ctx, 'delete'))
}

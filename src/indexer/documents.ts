/**
 * Single-document routes: `_doc` get/exists/index/delete, `_create`, `_update`, `_source`.
 */
import { suggestion } from './suggestion'
import { UpdateBody, type GetParams, type IndexParams, type Refresh, type Source, type WriteResponse } from '../store/port'
import { OpenSearchHttpError } from '../http/errors'
import { DocumentSourceMissing } from '../store/errors'
import { badRequest, type RequestContext } from './context'
import { requireNoPipeline } from './ingest'
import { echoesSource, GET_ACTION, guardUpdate, readDocument } from './read-gate'
import { compileScript, type SourceEdit } from './painless'
import { resolveStoredScript } from './stored-scripts'
import { Reply, type IndexRouter } from './router'

export const ACTIONS = {
  get: GET_ACTION,
  index: 'indices:data/write/index',
  update: 'indices:data/write/update',
  delete: 'indices:data/write/delete',
} as const

/** OpenSearch limits ids to 512 bytes of UTF-8. */
export function checkId(id: string): void {
  const bytes = Buffer.byteLength(id, 'utf8')
  if (bytes > 512)
    throw badRequest(`id [${id}] is too long, must be no longer than 512 bytes but was: ${bytes}`, 'action_request_validation_exception')
  if (id === '') throw badRequest('if _id is specified it must not be empty', 'action_request_validation_exception')
}

export function refreshParam(ctx: RequestContext): Refresh | undefined {
  const v = ctx.str('refresh')
  if (v === undefined) return undefined
  if (v === '' || v === 'true') return true
  if (v === 'false') return false
  if (v === 'wait_for') return 'wait_for'
  throw badRequest(`Unknown value for refresh: [${v}].`)
}

export function sourceParams(ctx: RequestContext): Pick<GetParams, '_source' | '_source_includes' | '_source_excludes'> {
  const out: Pick<GetParams, '_source' | '_source_includes' | '_source_excludes'> = {}
  const source = ctx.str('_source')
  if (source !== undefined) {
    out._source = source === '' || source === 'true' ? true : source === 'false' ? false : source.split(',')
  }
  const inc = ctx.list('_source_includes') ?? ctx.list('_source_include')
  if (inc) out._source_includes = inc
  const exc = ctx.list('_source_excludes') ?? ctx.list('_source_exclude')
  if (exc) out._source_excludes = exc
  return out
}

function casParams(ctx: RequestContext): { if_seq_no?: number; if_primary_term?: number } {
  const out: { if_seq_no?: number; if_primary_term?: number } = {}
  const seq = ctx.int('if_seq_no')
  const term = ctx.int('if_primary_term')
  if (seq !== undefined) out.if_seq_no = seq
  if (term !== undefined) out.if_primary_term = term
  if ((seq === undefined) !== (term === undefined) && seq !== undefined) {
    throw badRequest('Validation Failed: 1: ifSeqNo is set, but primary term is [0];', 'action_request_validation_exception')
  }
  return out
}

function versionParams(ctx: RequestContext): Pick<IndexParams, 'version' | 'version_type'> {
  const out: Pick<IndexParams, 'version' | 'version_type'> = {}
  const version = ctx.int('version')
  if (version !== undefined) out.version = version
  const vt = ctx.str('version_type')
  if (vt !== undefined) {
    if (vt !== 'internal' && vt !== 'external' && vt !== 'external_gte') throw badRequest(`No version type match [${vt}]`)
    out.version_type = vt
  }
  return out
}

/** 201 for a created document, 200 otherwise, like OpenSearch. */
function written(res: WriteResponse): Reply {
  return new Reply(res.result === 'created' ? 201 : res.result === 'not_found' ? 404 : 200, res)
}

async function getDoc(ctx: RequestContext, sourceOnly: boolean): Promise<unknown> {
  const name = ctx.part('index')!
  const id = ctx.part('id')!
  const params: GetParams = { index: name, id, ...sourceParams(ctx) }
  const stored = ctx.list('stored_fields')
  if (stored && !sourceOnly) params.stored_fields = stored
  const realtime = ctx.flag('realtime')
  if (realtime !== undefined) params.realtime = realtime
  const refresh = refreshParam(ctx)
  if (refresh !== undefined) params.refresh = refresh
  if (sourceOnly && params._source === false)
    throw badRequest('Validation Failed: 1: fetching source can not be disabled;', 'action_request_validation_exception')
  const res = await readDocument(ctx, params)
  if (sourceOnly) {
    if (!res.found) throw new OpenSearchHttpError(404, 'resource_not_found_exception', `Document not found [${name}]/[${id}]`)
    // An index keeping no source (`_source: {enabled: false}`).
    if (res._source === undefined) throw new OpenSearchHttpError(404, 'resource_not_found_exception', `Source not found [${name}]/[${id}]`)
    return res._source
  }
  return res.found ? res : new Reply(404, res)
}

async function indexDoc(ctx: RequestContext, opType: 'index' | 'create' | undefined): Promise<Reply> {
  const name = ctx.part('index')!
  const id = ctx.part('id')
  if (id !== undefined) checkId(id)
  await ctx.authorizeWrite(ACTIONS.index, name)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: source is missing;', 'action_request_validation_exception')
  // OpenSearch's auto-id handler: POST <index>/_doc without an op_type is op_type=create.
  const op = opType ?? ctx.str('op_type') ?? (id === undefined ? 'create' : undefined)
  if (op !== undefined && op !== 'index' && op !== 'create') throw badRequest(`opType must be 'create' or 'index', found: [${op}]`)
  if (op === 'create' && id === undefined && opType === 'create')
    throw badRequest(
      'Validation Failed: 1: an id must be provided if version type or value are set;',
      'action_request_validation_exception',
    )
  requireNoPipeline(ctx.str('pipeline'))
  const params: IndexParams = { index: name, body: body as Source, ...casParams(ctx), ...versionParams(ctx) }
  if (id !== undefined) params.id = id
  if (op !== undefined) params.op_type = op
  const refresh = refreshParam(ctx)
  if (refresh !== undefined) params.refresh = refresh
  const res = op === 'create' && id !== undefined ? await ctx.store.create({ ...params, id }) : await ctx.store.index(params)
  return written(res)
}

const UPDATE_FIELDS = Object.keys(UpdateBody.properties)

async function updateDoc(ctx: RequestContext): Promise<Reply> {
  const name = ctx.part('index')!
  const id = ctx.part('id')!
  checkId(id)
  const targets = await ctx.authorizeWrite(ACTIONS.update, name)
  const body = await ctx.json()
  if (body === undefined) throw badRequest('Validation Failed: 1: script or doc is missing;', 'action_request_validation_exception')
  for (const key of Object.keys(body)) {
    if (!UPDATE_FIELDS.includes(key)) {
      const near = suggestion(key, UPDATE_FIELDS)
      throw badRequest(`[UpdateRequest] unknown field [${key}]${near ? ` did you mean [${near}]?` : ''}`, 'x_content_parse_exception')
    }
  }
  if (body.script !== undefined) {
    if (body.doc !== undefined)
      throw badRequest("Validation Failed: 1: can't provide both script and doc;", 'action_request_validation_exception')
    if (body.upsert !== undefined && (body.upsert === null || typeof body.upsert !== 'object' || Array.isArray(body.upsert)))
      throw badRequest('[UpdateRequest] [upsert] must be an object', 'x_content_parse_exception')
    await guardUpdate(ctx, targets, echoesSource(body._source))
    const refresh = refreshParam(ctx)
    return written(
      await scriptedUpdate(ctx, name, id, body, {
        retries: ctx.int('retry_on_conflict') ?? 0,
        cas: casParams(ctx),
        ...(refresh !== undefined ? { refresh } : {}),
      }),
    )
  }
  for (const key of ['doc', 'upsert'] as const) {
    const v = body[key]
    if (v !== undefined && (v === null || typeof v !== 'object' || Array.isArray(v)))
      throw badRequest(`[UpdateRequest] [${key}] must be an object`, 'x_content_parse_exception')
  }
  if (body.doc === undefined && body.upsert === undefined)
    throw badRequest('Validation Failed: 1: script or doc is missing;', 'action_request_validation_exception')
  const source = sourceParams(ctx)
  if (body._source === undefined) {
    if (source._source_includes || source._source_excludes)
      body._source = { includes: [source._source_includes ?? []].flat(), excludes: [source._source_excludes ?? []].flat() }
    else if (source._source !== undefined) body._source = source._source
  }
  await guardUpdate(ctx, targets, echoesSource(body._source))
  const retry = ctx.int('retry_on_conflict')
  const refresh = refreshParam(ctx)
  const res = await ctx.store.update({
    index: name,
    id,
    body: body as never,
    ...casParams(ctx),
    ...(retry !== undefined ? { retry_on_conflict: retry } : {}),
    ...(refresh !== undefined ? { refresh } : {}),
  })
  return written(res)
}

/** How a scripted update writes: its retries on conflict, its own compare-and-set, its refresh. */
export interface ScriptedWrite {
  retries: number
  cas: { if_seq_no?: number; if_primary_term?: number }
  refresh?: Refresh
}

/**
 * A scripted update (`_update` and a `_bulk` update item): the document is read, the script edits
 * its source, and the result is written back conditionally on the read's sequence number (retried
 * `retries` times). A missing document takes `upsert` (run through the script with
 * `scripted_upsert`) or answers 404.
 */
export async function scriptedUpdate(
  ctx: RequestContext,
  name: string,
  id: string,
  body: Record<string, unknown>,
  { retries, cas, refresh }: ScriptedWrite,
): Promise<WriteResponse> {
  const edit = updateScript(await resolveStoredScript(ctx.store, body.script))
  const written = refresh !== undefined ? { refresh } : {}
  for (let attempt = 0; ; attempt++) {
    const cur = await ctx.store.get({ index: name, id })
    let res: WriteResponse
    try {
      if (!cur.found) {
        if (body.upsert === undefined) {
          throw new OpenSearchHttpError(404, 'document_missing_exception', `[${id}]: document missing`, {
            index: name,
            shard: '0',
            index_uuid: '_na_',
          })
        }
        const source = structuredClone(body.upsert) as Record<string, unknown>
        // An upsert the script leaves alone or deletes is not written (OpenSearch's noop).
        const op = body.scripted_upsert === true ? edit(source) : 'index'
        if (op !== 'index') return noop(name, id, 0, -2, 0)
        res = await ctx.store.create({ index: name, id, body: source, ...written })
      } else {
        // An index keeping no source (`_source: {enabled: false}`) answers none: nothing to edit.
        if (cur._source === undefined) throw new DocumentSourceMissing(name, id)
        const source = structuredClone(cur._source) as Record<string, unknown>
        const op = edit(source)
        if (op === 'noop') return noop(name, id, cur._version!, cur._seq_no!, cur._primary_term!)
        const expected = { if_seq_no: cas.if_seq_no ?? cur._seq_no!, if_primary_term: cas.if_primary_term ?? cur._primary_term! }
        res =
          op === 'delete'
            ? await ctx.store.delete({ index: name, id, ...expected, ...written })
            : await ctx.store.index({ index: name, id, body: source, ...expected, ...written })
      }
    } catch (e) {
      const conflict = (e as { status?: number }).status === 409
      if (conflict && attempt < retries && cas.if_seq_no === undefined) continue
      throw e
    }
    if (res.result !== 'deleted' && body._source !== undefined && body._source !== false) {
      const doc = await ctx.store.get({
        index: name,
        id,
        ...(body._source === true ? {} : { _source: body._source as never }),
      })
      if (doc.found) res = { ...res, get: { _seq_no: doc._seq_no!, _primary_term: doc._primary_term!, found: true, _source: doc._source } }
    }
    return res
  }
}

/** An update that writes nothing, as OpenSearch answers it (no shard was written). */
const noop = (index: string, id: string, version: number, seq: number, term: number): WriteResponse =>
  ({
    _index: index,
    _id: id,
    _version: version,
    result: 'noop',
    _shards: { total: 0, successful: 0, failed: 0 },
    _seq_no: seq,
    _primary_term: term,
  }) as WriteResponse

/**
 * An update's script, compiled: a failure to compile or run it is OpenSearch's UpdateHelper's
 * illegal_argument_exception "failed to execute script", the script_exception its cause.
 */
function updateScript(script: unknown): SourceEdit {
  const failed = (e: unknown) =>
    e instanceof OpenSearchHttpError && e.type === 'script_exception'
      ? new OpenSearchHttpError(400, 'illegal_argument_exception', 'failed to execute script', {
          caused_by: { type: e.type, reason: e.reason, ...e.details },
        })
      : e
  let compiled: SourceEdit
  try {
    compiled = compileScript(script)
  } catch (e) {
    throw failed(e)
  }
  return (source) => {
    try {
      return compiled(source)
    } catch (e) {
      throw failed(e)
    }
  }
}

async function deleteDoc(ctx: RequestContext): Promise<Reply> {
  const name = ctx.part('index')!
  const id = ctx.part('id')!
  checkId(id)
  await ctx.authorized(ACTIONS.delete, name, { expand_wildcards: 'all' })
  const refresh = refreshParam(ctx)
  const res = await ctx.store.delete({
    index: name,
    id,
    ...casParams(ctx),
    ...versionParams(ctx),
    ...(refresh !== undefined ? { refresh } : {}),
  })
  return written(res)
}

export function documentRoutes(r: IndexRouter): void {
  r.on(['GET', 'HEAD'], '/:index/_doc/:id', (ctx) => getDoc(ctx, false))
  r.on(['GET', 'HEAD'], '/:index/_source/:id', (ctx) => getDoc(ctx, true))
  r.on(['PUT', 'POST'], '/:index/_doc/:id', (ctx) => indexDoc(ctx, undefined), 'doc')
  r.on('POST', '/:index/_doc', (ctx) => indexDoc(ctx, undefined), 'doc')
  r.on(['PUT', 'POST'], '/:index/_create/:id', (ctx) => indexDoc(ctx, 'create'), 'doc')
  r.on('POST', '/:index/_update/:id', updateDoc, 'doc')
  r.on('DELETE', '/:index/_doc/:id', deleteDoc, 'doc')
}

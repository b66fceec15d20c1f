/**
 * `POST [/<index>]/_bulk`: NDJSON parsed with OpenSearch's line-numbered errors, every item
 * authorized on the concrete index it writes to (a refused item fails alone, with a 403 item
 * error), then one Store bulk for the rest, results merged back in request order.
 */
import { readBodyChunks } from '../http/body'
import { OpenSearchHttpError } from '../http/errors'
import type { BulkItemResult, BulkLine, BulkResponse } from '../store/port'
import { badRequest, forbidden, type RequestContext } from './context'
import { ACTIONS, refreshParam, scriptedUpdate } from './documents'
import { StoreError } from '../store/errors'
import { missingPipeline } from './ingest'
import { lines, terminated, text } from './ndjson'
import { parsedFrom } from '../store/source-text'
import { echoesSource, filteredUpdate, GET_ACTION, mayRead, readsFiltered } from './read-gate'
import type { IndexRouter } from './router'

type Op = 'index' | 'create' | 'update' | 'delete'
/** The shard-level bulk action OpenSearch's security plugin checks each bulk item under. */
const BULK_SHARD_ACTION = 'indices:data/write/bulk[s]'
const OPS: Op[] = ['index', 'create', 'update', 'delete']

/** Metadata every action line may carry; each action adds its own. */
const TARGET = ['_index', '_id', 'routing', 'if_seq_no', 'if_primary_term', 'version', 'version_type', '_type']
const META: Record<Op, string[]> = {
  index: [...TARGET, 'op_type', 'require_alias', 'pipeline'],
  create: [...TARGET, 'require_alias', 'pipeline'],
  update: [...TARGET, 'require_alias', 'retry_on_conflict', '_source'],
  delete: TARGET,
}

interface Item {
  /** The result key: `index` with op_type create answers under `create`. */
  op: Op
  meta: Record<string, unknown>
  source?: Record<string, unknown>
  index: string
  /** Bytes of its lines in the body. */
  bytes: number
}

/**
 * Bodies from which the request collects its garbage as it goes (see writeAll): below, a full
 * collection per batch cost more than the writes (a third of the time of 1,000-event bulks),
 * and the heap's growth is a few times a few MiB.
 */
const LARGE_BODY = 8 * 1024 * 1024
/** Items written per Store bulk: memory holds one batch of parsed sources, not the whole request. */
const BATCH_ITEMS = 500
const BATCH_BYTES = 2 * 1024 * 1024

function malformed(line: number, detail: string): OpenSearchHttpError {
  return badRequest(`Malformed action/metadata line [${line}], ${detail}`)
}

/** An action line's operation, the kind it answers under (`index` with op_type create is `create`), its metadata and target. */
interface Action {
  op: Op
  kind: Op
  meta: Record<string, unknown>
  index: string
}

/** Action lines up to this size are compared with the previous one before they are parsed again. */
const SHARED_ACTION_BYTES = 256

/** An action line, checked as OpenSearch checks it (line-numbered errors). */
function parseAction(raw: string, lineNo: number, defaultIndex: string | undefined, names: IndexNames): Action {
  let action: unknown
  try {
    action = JSON.parse(raw)
  } catch (e) {
    throw malformed(lineNo, `expected a JSON object: ${(e as Error).message}`)
  }
  if (action === null || typeof action !== 'object' || Array.isArray(action))
    throw malformed(lineNo, `expected START_OBJECT but found [${Array.isArray(action) ? 'START_ARRAY' : 'VALUE'}]`)
  const keys = Object.keys(action)
  if (keys.length === 0) throw malformed(lineNo, 'expected FIELD_NAME but found [END_OBJECT]')
  if (keys.length > 1) throw malformed(lineNo, `expected END_OBJECT but found [FIELD_NAME]`)
  const op = keys[0] as Op
  if (!OPS.includes(op)) throw malformed(lineNo, `expected field [create], [delete], [index] or [update] but found [${keys[0]}]`)
  const meta = (action as Record<string, unknown>)[op]
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw malformed(lineNo, `expected START_OBJECT but found [VALUE]`)
  const m = meta as Record<string, unknown>
  for (const key of Object.keys(m)) {
    if (!META[op].includes(key)) throw badRequest(`Action/metadata line [${lineNo}] contains an unknown parameter [${key}]`)
  }
  const index = m._index === undefined ? defaultIndex : names(String(m._index))
  if (index === undefined || index === '')
    throw badRequest('Validation Failed: 1: index is missing;', 'action_request_validation_exception')
  let kind: Op = op
  if (op === 'index' && m.op_type !== undefined) {
    if (m.op_type !== 'index' && m.op_type !== 'create')
      throw badRequest(`opType must be 'create' or 'index', found: [${String(m.op_type)}]`)
    if (m.op_type === 'create') kind = 'create'
  }
  return { op, kind, meta: m, index }
}

/** How an item's `_index` reads: RequestContext.indexNames (date math names) for a request's items. */
type IndexNames = (index: string) => string

/**
 * The items of an NDJSON body, parsed line by line; structural problems (a malformed source too)
 * fail the whole request. Without `keepSources` (the validating pass) parsed sources are dropped.
 */
export function* bulkItems(
  chunks: Uint8Array[],
  defaultIndex: string | undefined,
  keepSources = true,
  release = false,
  names: IndexNames = (index) => index,
): Generator<Item> {
  if (!terminated(chunks)) throw badRequest('The bulk request must be terminated by a newline [\\n]')
  const it = lines(chunks, release)
  let last: { raw: Uint8Array; action: Action } | undefined
  for (let next = it.next(); !next.done; next = it.next()) {
    const lineNo = next.value.no
    const bytes = next.value.raw
    // A client repeats one action line (`{"create":{}}`) for every item: parsed once, its metadata shared (read only).
    let action = last !== undefined && Buffer.compare(last.raw, bytes) === 0 ? last.action : undefined
    if (!action) {
      const raw = text(next.value).trim()
      if (raw === '') continue
      action = parseAction(raw, lineNo, defaultIndex, names)
      last = bytes.byteLength <= SHARED_ACTION_BYTES ? { raw: bytes.slice(), action } : undefined
    }
    const { op, kind, meta: m, index } = action
    const item: Item = { op: kind, meta: m, index, bytes: next.value.bytes }
    if (op !== 'delete') {
      const line = it.next()
      if (line.done)
        throw badRequest(
          `Validation Failed: 1: ${op === 'update' ? 'script or doc is missing' : 'source is missing'};`,
          'action_request_validation_exception',
        )
      let source: unknown
      const json = text(line.value)
      try {
        source = JSON.parse(json)
      } catch (e) {
        throw badRequest(`Failed to parse the source of line [${line.value.no}]: ${(e as Error).message}`, 'parse_exception')
      }
      if (source === null || typeof source !== 'object' || Array.isArray(source))
        throw badRequest(`The source of line [${line.value.no}] is not a JSON object`, 'parse_exception')
      // OpenSearch validates each update request as it parses the bulk: the whole request fails.
      if (op === 'update' && 'script' in source && 'doc' in source)
        throw badRequest("Validation Failed: 1: can't provide both script and doc;", 'action_request_validation_exception')
      if (keepSources) item.source = source as Record<string, unknown>
      // A document written as sent is stored as its line (an update's line is a request, not a source).
      if (keepSources && op !== 'update') parsedFrom(source, json)
      item.bytes += line.value.bytes
    }
    yield item
  }
}

/** The items of a whole NDJSON text (what a bulk request body parses to). */
export function parseBulk(text: string, defaultIndex: string | undefined): Item[] {
  const items = [...bulkItems([new TextEncoder().encode(text)], defaultIndex)]
  if (items.length === 0) throw badRequest('Validation Failed: 1: no requests added;', 'action_request_validation_exception')
  return items
}

function itemError(
  item: Item,
  status: number,
  type: string,
  reason: string,
  extra: Record<string, unknown> = {},
): Partial<Record<Op, BulkItemResult>> {
  // An item's failure is the exception alone, without the root_cause list of a request's error.
  return {
    [item.op]: {
      _index: item.index,
      _id: item.meta._id === undefined ? null : String(item.meta._id),
      status,
      error: { type, reason, ...extra },
    },
  }
}

const WRITE_ACTION: Record<Op, string> = { index: ACTIONS.index, create: ACTIONS.index, update: ACTIONS.update, delete: ACTIONS.delete }

/** The query parameters that apply to every item of a bulk request. */
interface BulkParams {
  requireAlias: boolean
  pipeline: string | undefined
  sourceParam: string | undefined
  includes: string[] | undefined
  excludes: string[] | undefined
  refresh: ReturnType<typeof refreshParam>
}

/** One bulk request being written: each item's answer and what is learned once for the whole request. */
interface BulkRun {
  ctx: RequestContext
  params: BulkParams
  /**
   * Each item's answer is kept as its JSON text: a fraction of the memory of the object, for
   * requests of tens of thousands of items; the response is joined from them.
   */
  results: Array<string | undefined>
  errors: boolean
  targets: Map<string, string[]>
  /** Indices where every update item is refused (see refusedIndices). */
  refused: Set<string>
  aliasCheck: Map<string, boolean>
}

async function bulk(ctx: RequestContext): Promise<BulkResponse | Response> {
  const started = ctx.deps.now()
  const defaultIndex = ctx.part('index')
  const limit = ctx.deps.node.values.get('http.max_body_bytes') as number
  const chunks = await readBodyChunks(ctx.request, { limit, status: 413, kind: 'ndjson' })
  const large = chunks.reduce((n, c) => n + c.byteLength, 0) >= LARGE_BODY
  const names = (index: string) => ctx.indexNames(index)
  const { count, updated, items: checked } = checkRequest(chunks, defaultIndex, large, names)
  const params: BulkParams = {
    requireAlias: ctx.flag('require_alias', false),
    pipeline: ctx.str('pipeline'),
    sourceParam: ctx.str('_source'),
    includes: ctx.list('_source_includes'),
    excludes: ctx.list('_source_excludes'),
    refresh: refreshParam(ctx),
  }
  const run: BulkRun = {
    ctx,
    params,
    results: new Array(count),
    errors: false,
    targets: new Map(),
    refused: new Set(),
    aliasCheck: new Map(),
  }
  run.refused = await refusedIndices(run, updated)
  const took = await writeAll(run, checked ?? bulkItems(chunks, defaultIndex, true, true, names), large)
  const tookAll = Math.max(took, ctx.deps.now() - started)
  const items = `[${run.results.map((r) => r ?? '{}').join(',')}]`
  run.results.length = 0
  if (/[?&]pretty(=true|=|&|$)/.test(ctx.request.url)) return { took: tookAll, errors: run.errors, items: JSON.parse(items) }
  return new Response(`{"took":${tookAll},"errors":${run.errors},"items":${items}}`, {
    headers: { 'content-type': 'application/json; charset=UTF-8' },
  })
}

/**
 * The whole request is checked before any item runs (OpenSearch refuses a malformed bulk as a
 * whole). A large request's pass keeps nothing (the second parses and writes one batch at a
 * time); a smaller one's keeps its items for the writes, each source parsed once. Answers the
 * number of items and the indices that updates name.
 */
function checkRequest(
  chunks: Uint8Array[],
  defaultIndex: string | undefined,
  large: boolean,
  names: IndexNames,
): { count: number; updated: Set<string>; items: Item[] | undefined } {
  let count = 0
  let parsed = 0
  const updated = new Set<string>()
  const items: Item[] | undefined = large ? undefined : []
  for (const item of bulkItems(chunks, defaultIndex, !large, false, names)) {
    count++
    items?.push(item)
    if (item.op === 'update') updated.add(item.index)
    parsed += item.bytes
    // See `flush`: collect the parsed-and-dropped sources as this pass goes.
    if (large && parsed >= 2 * BATCH_BYTES) {
      Bun.gc(true)
      parsed = 0
    }
  }
  if (count === 0) throw badRequest('Validation Failed: 1: no requests added;', 'action_request_validation_exception')
  return { count, updated, items }
}

function settle(run: BulkRun, r: Partial<Record<Op, BulkItemResult>>): string {
  if (Object.values(r).some((v) => v && (v.error !== undefined || v.status >= 400))) run.errors = true
  for (const v of Object.values(r)) if (v) run.ctx.deps.statusCounter?.note('doc', v.status)
  return JSON.stringify(r)
}

async function targetsOf(run: BulkRun, name: string): Promise<string[]> {
  if (!run.targets.has(name)) run.targets.set(name, await run.ctx.writeTargets(name))
  return run.targets.get(name)!
}

/**
 * As the platform's security plugin refuses a shard's bulk that holds an update where the
 * caller's reads are DLS-filtered: every item on such an index fails, nothing is applied there.
 */
async function refusedIndices(run: BulkRun, updated: Set<string>): Promise<Set<string>> {
  const refused = new Set<string>()
  const judged = new Set<string>()
  for (const name of updated) {
    for (const index of await targetsOf(run, name)) {
      if (judged.has(index)) continue
      judged.add(index)
      if (await readsFiltered(run.ctx, [index])) refused.add(index)
    }
  }
  return refused
}

/** The second pass lets go of each body chunk once read: the body leaves memory as it is written. Answers the Store's `took`. */
async function writeAll(run: BulkRun, items: Iterable<Item>, large: boolean): Promise<number> {
  let took = 0
  let batch: Item[] = []
  let batchBytes = 0
  let done = 0
  const flush = async () => {
    took += await writeBatch(run, batch, done)
    done += batch.length
    batch = []
    batchBytes = 0
    // A request of several batches: collect the written batch's documents now. JavaScriptCore
    // otherwise lets its heap grow to several times the request before collecting (peak RSS
    // ~9x the body before this streaming), and a full collection of a small heap costs
    // milliseconds against the seconds such a request takes.
    if (large) Bun.gc(true)
  }
  for (const item of items) {
    batch.push(item)
    batchBytes += item.bytes
    if (batch.length >= BATCH_ITEMS || batchBytes >= BATCH_BYTES) await flush()
  }
  if (batch.length > 0) await flush()
  return took
}

/** Authorizes and writes items `first`.. of the request; answers the Store's `took`. */
async function writeBatch(run: BulkRun, items: Item[], first: number): Promise<number> {
  let lines: BulkLine[] = []
  let sent: number[] = []
  let took = 0
  const send = async () => {
    if (lines.length === 0) return
    const { refresh } = run.params
    const res = await run.ctx.store.bulk({ body: lines, ...(refresh !== undefined ? { refresh } : {}) })
    res.items.forEach((r, k) => (run.results[sent[k]] = settle(run, r)))
    took += res.took
    lines = []
    sent = []
  }
  for (let k = 0; k < items.length; k++) {
    const item = items[k]
    const n = first + k
    const prepared = await prepareItem(run, item)
    if ('error' in prepared) {
      run.results[n] = settle(run, prepared.error)
      continue
    }
    if (item.op === 'update' && prepared.source?.script !== undefined) {
      // The items before it are written first: the script may edit a document they wrote.
      await send()
      run.results[n] = settle(run, await scriptedItem(run, item, prepared.meta, prepared.source))
      continue
    }
    lines.push({ [item.op]: prepared.meta })
    if (prepared.source !== undefined) lines.push(prepared.source)
    sent.push(n)
  }
  await send()
  return took
}

/** A scripted update item, written as `_update` writes one (read, edit, compare-and-set write). */
async function scriptedItem(
  run: BulkRun,
  item: Item,
  meta: Record<string, unknown>,
  body: Record<string, unknown>,
): Promise<Partial<Record<Op, BulkItemResult>>> {
  const cas = meta.if_seq_no === undefined ? {} : { if_seq_no: Number(meta.if_seq_no), if_primary_term: Number(meta.if_primary_term ?? 0) }
  try {
    const res = await scriptedUpdate(run.ctx, String(meta._index), String(meta._id), body, {
      retries: Number(meta.retry_on_conflict ?? 0),
      cas,
    })
    return { update: { ...res, status: res.result === 'created' ? 201 : 200 } as BulkItemResult }
  } catch (e) {
    if (e instanceof OpenSearchHttpError) return itemError(item, e.status, e.type, e.reason, e.details)
    if (e instanceof StoreError) return itemError(item, e.status, e.type, e.reason, e.metadata)
    throw e
  }
}

type Prepared =
  { error: Partial<Record<Op, BulkItemResult>> } | { meta: Record<string, unknown>; source: Record<string, unknown> | undefined }

/** An item's action line and source as the Store takes them, or the error that answers it. */
async function prepareItem(run: BulkRun, item: Item): Promise<Prepared> {
  const { ctx } = run
  const invalid = await invalidItem(run, item)
  if (invalid) return { error: invalid }
  const itemTargets = await targetsOf(run, item.index)
  try {
    ctx.deps.security.authorizeIndices(ctx.caller, WRITE_ACTION[item.op], itemTargets)
  } catch {
    // The security plugin checks a bulk item as part of the shard-level bulk and names both actions.
    const denied = forbidden(`${BULK_SHARD_ACTION}, ${WRITE_ACTION[item.op]}`, ctx.caller)
    return { error: itemError(item, 403, denied.type, denied.reason) }
  }
  if (itemTargets.some((index) => run.refused.has(index))) {
    const refused = filteredUpdate()
    return { error: itemError(item, 403, refused.type, refused.reason) }
  }
  const meta: Record<string, unknown> = { ...item.meta, _index: item.index }
  delete meta.require_alias
  delete meta.op_type
  delete meta.pipeline
  let source = item.source
  if (item.op === 'update') {
    const { sourceParam, includes, excludes } = run.params
    // Response source filtering travels in the update body, where the Store reads it.
    const wanted =
      meta._source ?? sourceParam ?? (includes || excludes ? { includes: includes ?? [], excludes: excludes ?? [] } : undefined)
    delete meta._source
    // The answer would carry the document: the caller must be allowed to read it.
    const echoed = source?._source ?? wanted
    if (echoesSource(echoed) && !mayRead(ctx, itemTargets)) {
      const denied = forbidden(GET_ACTION, ctx.caller)
      return { error: itemError(item, 403, denied.type, denied.reason) }
    }
    if (wanted !== undefined && source && source._source === undefined) {
      source = {
        ...source,
        _source: wanted === 'true' ? true : wanted === 'false' ? false : typeof wanted === 'string' ? wanted.split(',') : wanted,
      }
    }
  }
  return { meta, source }
}

/** The error of an item refused before authorization: a bad `_id`, a missing pipeline, a `require_alias` on no alias. */
async function invalidItem(run: BulkRun, item: Item): Promise<Partial<Record<Op, BulkItemResult>> | undefined> {
  const id = item.meta._id
  if (id !== undefined && String(id) === '')
    return itemError(item, 400, 'illegal_argument_exception', 'if _id is specified it must not be empty')
  if (id !== undefined && Buffer.byteLength(String(id)) > 512)
    return itemError(
      item,
      400,
      'illegal_argument_exception',
      `id [${String(id)}] is too long, must be no longer than 512 bytes but was: ${Buffer.byteLength(String(id))}`,
    )
  const noPipeline = item.op === 'index' || item.op === 'create' ? missingPipeline(item.meta.pipeline ?? run.params.pipeline) : undefined
  if (noPipeline) return itemError(item, noPipeline.status, noPipeline.type, noPipeline.reason)
  if (item.op === 'delete' || (item.meta.require_alias ?? run.params.requireAlias) !== true) return undefined
  if (!run.aliasCheck.has(item.index))
    run.aliasCheck.set(item.index, Object.keys(await run.ctx.store.getAlias({ name: item.index }).catch(() => ({}))).length > 0)
  if (run.aliasCheck.get(item.index)) return undefined
  return itemError(
    item,
    404,
    'index_not_found_exception',
    `no such index [${item.index}] and [require_alias] request flag is [true] and [${item.index}] is not an alias`,
    {
      'resource.type': 'index_expression',
      'resource.id': item.index,
      index_uuid: '_na_',
      index: item.index,
    },
  )
}

export function bulkRoutes(r: IndexRouter): void {
  r.on(['POST', 'PUT'], ['/_bulk', '/:index/_bulk'], bulk)
}

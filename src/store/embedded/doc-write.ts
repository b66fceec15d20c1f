/**
 * Writing one document: index, create, update (partial merge or upsert) and delete, with the
 * `if_seq_no` and version checks, auto-created targets, mapping growth and the field-value keys.
 */
import {
  DocumentMissing,
  DocumentSourceMissing,
  IllegalArgument,
  IndexNotFound,
  MapperParsing,
  ParsingError,
  StoreError,
  VersionConflict,
} from '../errors'
import type { DeleteParams, IndexParams, SourceFilter, UpdateParams, WriteParams, WriteResponse } from '../port'
import { MAX_JSON_DEPTH, nestingExceeds } from '../query/limits'
import { isObject } from '../query/doc'
import { own, setOwn } from '../own'
import { filterSource, sourceDisabled, sourceSpec } from '../source-filter'
import { shardCopies } from '../settings'
import type { IndexMeta } from './catalog'
import type { StoreCore } from './core'
import { type DocRow, getHead, getRow, type Op, storedSize, writeTarget } from './documents'
import { autoId } from './ids'
import { STORED_SIZE } from './stored-size'
import { setMappings } from './indices'
import { applyMapping, indexedKind, type IndexedValue, mappingLimits, ignoresMalformed } from './mapping'
import { isValueAndPathField } from '../query/flat-object'
import { keepForPits } from './pits'
import { ridRange } from './rids'
import { pendingRid } from './refresh'
import { isLengthsField } from './text-fields'
import { heldLengths, insertValues, type Key, textKeys } from './text-index'
import { countValues, diffKeys, forgetRow, KEEP_FROM, type KeptRow, keepRow, keptRow, keysText } from './kept-keys'
import { DocView } from '../query/doc'
import { noteFailedWrite, noteLogged, noteWrite } from './activity'
import { ROOM_FROM, withRoom } from './row-room'
import { hasText, sourceJson } from '../source-text'
import { bigSource, forgetParsed, keepParsed } from './search-rows'

export async function indexDocument(core: StoreCore, params: IndexParams): Promise<WriteResponse> {
  // Like OpenSearch's auto-id handler, a write without an id defaults to op_type=create (so it
  // is accepted by a data stream); an explicit op_type=index keeps its meaning.
  const op: Op = params.op_type === 'create' || (params.op_type === undefined && params.id === undefined) ? 'create' : 'index'
  return core.groupWrite(params.index, () => write(core, op, params.index, params.id, params.body as Record<string, unknown>, params))
}

export async function createDocument(core: StoreCore, params: IndexParams & { id: string }): Promise<WriteResponse> {
  return core.groupWrite(params.index, () => write(core, 'create', params.index, params.id, params.body as Record<string, unknown>, params))
}

export async function updateDocument(core: StoreCore, params: UpdateParams): Promise<WriteResponse> {
  try {
    return await core.groupWrite(params.index, () =>
      write(core, 'update', params.index, params.id, params.body as unknown as Record<string, unknown>, params),
    )
  } catch (e) {
    if (!(e instanceof IndexNotFound)) throw e
    throw await core.groupWrite(params.index, () => missedUpdate(core, params.index, String(params.id)))
  }
}

/**
 * An update of a missing index, as OpenSearch answers it: its update (single or in a bulk)
 * auto-creates the index like any write, then misses the document (document_missing_exception
 * 404, the new empty index left in place). Must run inside a transaction.
 */
export function missedUpdate(core: StoreCore, index: string, id: string): DocumentMissing {
  let meta: IndexMeta
  try {
    meta = writeTarget(core, index, 'update', false, true)
  } catch {
    return new DocumentMissing(index, id)
  }
  return new DocumentMissing(meta.name, id, meta.uuid)
}

export async function deleteDocument(core: StoreCore, params: DeleteParams): Promise<WriteResponse> {
  return core.groupWrite(params.index, () => write(core, 'delete', params.index, params.id, undefined, params))
}

/** One document write; must run inside a transaction. All checks precede all changes. */
export function write(
  core: StoreCore,
  op: Op,
  index: string,
  id: string | undefined,
  body: Record<string, unknown> | undefined,
  p: WriteParams,
): WriteResponse {
  const started = performance.now()
  id = checkWrite(op, id, body, p)
  const upsert = op === 'update' && isObject(body) && (body.doc_as_upsert === true || body.upsert !== undefined)
  const meta = writeTarget(core, index, op, p.if_seq_no !== undefined, upsert)
  try {
    const r = writeTo(core, meta, op, id, body, p)
    noteWrite(meta, r.result, performance.now() - started)
    return r
  } catch (e) {
    // As OpenSearch's engine counts them: a version conflict fails in the engine, a document its
    // mapping refuses before it.
    if (e instanceof VersionConflict) noteFailedWrite(meta)
    throw e
  }
}

/** The write once its index is known. */
function writeTo(
  core: StoreCore,
  meta: IndexMeta,
  op: Op,
  id: string | undefined,
  body: Record<string, unknown> | undefined,
  p: WriteParams,
): WriteResponse {
  // The source is read only when an update has to merge into it; the keys only when none are kept.
  const head =
    id === undefined
      ? null
      : op === 'update'
        ? getRow(core, meta, id)
        : op === 'delete'
          ? getHead(core, meta, id)
          : keptHead(core, meta, id)
  const existing = head && 'row' in head ? head.row : head
  checkSeqNo(meta, op, id, existing, p)
  if (op === 'delete') return deleteRow(core, meta, id!, existing, p)

  let source = body!
  let result: 'created' | 'updated' = existing ? 'updated' : 'created'
  if (op === 'update') {
    const merged = updatedSource(meta, id!, body as Record<string, unknown>, existing, p)
    if ('noop' in merged) return merged.noop
    source = merged.source
    if (!existing) result = 'created'
  } else if (op === 'create' && existing) {
    throw new VersionConflict(
      `[${id}]: version conflict, document already exists (current version [${existing.ver}])`,
      meta.name,
      meta.uuid,
    )
  }

  if (id === undefined) id = autoId()
  checkDataStream(core, meta, source)
  const values: IndexedValue[] = []
  const grown = applyMapping(meta.mappings, source, id, values, mappingLimits(meta.settings), ignoresMalformed(meta.settings))
  const version = existing
    ? nextVersion(existing, p, id, meta)
    : p.version_type === 'external' || p.version_type === 'external_gte'
      ? Number(p.version)
      : 1

  // --- changes from here on
  if (grown) setMappings(core, meta, grown)
  const seq = storeRow(core, meta, id, source, values, version, existing, head && 'row' in head ? head.kept : undefined)
  if (refreshes(p)) core.refreshAtCommit(meta)
  const written = response(meta, id, version, result, seq, p)
  return op === 'update' ? withGet(written, (body as Record<string, unknown>)._source, source) : written
}

/** The request's own checks (id, body, compare-and-write parameters); answers the id as a string. */
function checkWrite(op: Op, id: string | undefined, body: Record<string, unknown> | undefined, p: WriteParams): string | undefined {
  if (id !== undefined) {
    id = String(id)
    if (id === '')
      throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: if _id is specified it must not be empty;')
    if (Buffer.byteLength(id) > 512)
      throw new StoreError(
        'action_request_validation_exception',
        400,
        `Validation Failed: 1: id [${id}] is too long, must be no longer than 512 bytes but was: ${Buffer.byteLength(id)};`,
      )
  }
  if ((op === 'update' || op === 'delete') && id === undefined)
    throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: id is missing;')
  if (op !== 'delete' && !isObject(body)) throw new MapperParsing('failed to parse, document is empty')
  // Deeper than OpenSearch's parser reads: refused before anything recurses over it.
  if (op !== 'delete' && nestingExceeds(body, MAX_JSON_DEPTH) !== undefined)
    throw new MapperParsing(`failed to parse: Document nesting depth exceeds the maximum allowed (${MAX_JSON_DEPTH})`)
  if (p.if_seq_no !== undefined && p.if_primary_term === undefined)
    throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: ifSeqNo is set, but primary term is [0];`)
  if (p.if_seq_no !== undefined && p.version_type !== undefined && p.version_type !== 'internal')
    throw new StoreError(
      'action_request_validation_exception',
      400,
      'Validation Failed: 1: compare and write operations can not be used with version type [EXTERNAL];',
    )
  return id
}

/** `if_seq_no` / `if_primary_term`: the document must be at that point (an update may also find none). */
function checkSeqNo(meta: IndexMeta, op: Op, id: string | undefined, existing: DocRow | null, p: WriteParams): void {
  if (p.if_seq_no === undefined) return
  const want = `required seqNo [${p.if_seq_no}], primary term [${p.if_primary_term}]`
  if (!existing) {
    if (op !== 'update') throw new VersionConflict(`[${id}]: version conflict, ${want}. but no document was found`, meta.name, meta.uuid)
  } else if (existing.seq !== Number(p.if_seq_no) || Number(p.if_primary_term) !== 1)
    throw new VersionConflict(
      `[${id}]: version conflict, ${want}. current document has seqNo [${existing.seq}] and primary term [1]`,
      meta.name,
      meta.uuid,
    )
}

function deleteRow(core: StoreCore, meta: IndexMeta, id: string, existing: DocRow | null, p: WriteParams): WriteResponse {
  if (!existing) {
    // OpenSearch spends a sequence number on a delete that finds nothing, too.
    const seq = core.nextSeq(meta)
    return response(meta, id, 1, 'not_found', seq, p)
  }
  const version = nextVersion(existing, p, id, meta)
  core.rewrote(meta)
  keepForPits(core, meta, existing)
  removeKeys(core, existing)
  removeText(core, meta, existing.rid)
  core.db.query('DELETE FROM docs WHERE rid = ?').run(existing.rid)
  adjustCount(core, meta, -1, -(existing.len ?? storedSize(existing.src, existing.keys)))
  noteLogged(meta, id.length)
  return response(meta, id, version, 'deleted', core.nextSeq(meta), p)
}

/** An update's new source (its upsert, or its doc merged into the stored one), or the answer of a no-op. */
function updatedSource(
  meta: IndexMeta,
  id: string,
  u: Record<string, unknown>,
  existing: DocRow | null,
  p: WriteParams,
): { source: Record<string, unknown> } | { noop: WriteResponse } {
  for (const k of Object.keys(u))
    if (!['doc', 'upsert', 'doc_as_upsert', 'detect_noop', '_source', 'script', 'scripted_upsert'].includes(k))
      throw new ParsingError(`[UpdateRequest] unknown field [${k}]`)
  if (u.script !== undefined) throw new IllegalArgument('scripted updates are not supported by the embedded store; send a partial doc')
  if (u.doc !== undefined && !isObject(u.doc)) throw new ParsingError('[UpdateRequest] doc must be an object')
  if (!existing) {
    const upsert = u.doc_as_upsert === true ? u.doc : u.upsert
    if (!isObject(upsert)) throw new DocumentMissing(meta.name, id, meta.uuid)
    return { source: upsert }
  }
  if (u.doc === undefined)
    throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: script or doc is missing;')
  if (sourceDisabled(meta.mappings)) throw new DocumentSourceMissing(meta.name, id, meta.uuid)
  const old = JSON.parse(existing.src) as Record<string, unknown>
  const merged = deepMerge(old, u.doc as Record<string, unknown>)
  if (u.detect_noop !== false && deepEqual(merged.value, old) && !merged.changed)
    return {
      noop: withGet(
        { ...response(meta, id, existing.ver, 'noop', existing.seq, p), _shards: { total: 0, successful: 0, failed: 0 } },
        u._source,
        old,
      ),
    }
  return { source: merged.value }
}

function checkDataStream(core: StoreCore, meta: IndexMeta, source: Record<string, unknown>): void {
  if (!meta.dataStream) return
  const ds = core.cat.streams.get(meta.dataStream)
  const ts = ds?.tsField ?? '@timestamp'
  const v = source[ts]
  if (v === undefined || v === null || Array.isArray(v))
    throw new MapperParsing(`documents must contain a single-valued timestamp field '${ts}' of date type`)
}

/** Writes the document's row and its keys (a new row, or the changed keys of the existing one); answers its seq_no. */
function storeRow(
  core: StoreCore,
  meta: IndexMeta,
  id: string,
  source: Record<string, unknown>,
  values: IndexedValue[],
  version: number,
  existing: DocRow | null,
  kept?: KeptRow,
): number {
  const keys: Array<[number, string | number]> = []
  // A list's values come one field after another: its id is looked up once per run, not per value.
  let field: string | undefined
  let f: number | undefined
  for (const [name, v] of values) {
    if (name !== field) ((field = name), (f = fieldId(core, meta, name)))
    if (f !== undefined) keys.push([f, v])
  }
  if (keys.length > 1) noteMultiValued(core, meta, keys)
  const text = textKeys(meta.specs, new DocView(source, id, meta.name), (name) => textFieldId(core, meta, name))
  const seq = core.nextSeq(meta)
  let src = sourceJson(source)
  const written = keysText(keys, kept?.text, existing !== null)
  let keysJson = written.json
  let rid: number
  let toInsert = keys
  if (existing) {
    if (src.length >= ROOM_FROM / 3 || keysJson.length >= ROOM_FROM / 3) {
      // A large row keeps its size where it can (row-room.ts).
      const had = core.db.query('SELECT octet_length(src) AS s, octet_length(keys) AS k FROM docs WHERE rid = ?').get(existing.rid) as {
        s: number
        k: number
      }
      src = withRoom(src, had.s)
      keysJson = withRoom(keysJson, had.k)
    }
    core.rewrote(meta)
    keepForPits(core, meta, existing, seq)
    // Only the keys that changed: a document holding a long list (an integration's 10,000 rule
    // ids) rewritten to add one would otherwise delete and insert every key of the list.
    const { fresh, counts } = kept ? keptKeys(core, existing, kept, keys) : replaceKeys(core, existing, keys)
    const old = heldLengths(core.db, meta, core.pendingText, existing.rid)
    if (old.length > 0 || text.lengths.length > 0)
      core.pendingText.set(existing.rid, text.lengths.length > 0 ? text : null, old.length > 0, onUndo(core))
    toInsert = fresh
    core.pendingStats.move(meta.lengthIds, old, text.listed, onUndo(core))
    core.db.query('UPDATE docs SET seq = ?, ver = ?, src = ?, keys = ? WHERE rid = ?').run(seq, version, src, keysJson, existing.rid)
    rid = existing.rid
    const len = storedSize(src, keysJson)
    adjustCount(core, meta, 0, len - (existing.len ?? storedSize(existing.src, existing.keys)))
    noteLogged(meta, len)
    if (counts) {
      const keysBytes = (core.db.query('SELECT octet_length(keys) AS n FROM docs WHERE rid = ?').get(rid) as { n: number }).n
      keepRow(core, rid, { uuid: meta.uuid, seq, keysBytes, len, values: keys, counts, text: written })
    }
  } else {
    rid = meta.nextRid++
    if (rid > ridRange(meta.ix)[1]) throw new IllegalArgument(`index [${meta.name}] is full`)
    core.onUndo(() => (meta.nextRid = Math.min(meta.nextRid, rid)))
    core.db
      .query('INSERT INTO docs (rid, ix, id, seq, ver, src, keys) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(rid, meta.ix, id, seq, version, src, keysJson)
    core.pendingStats.move(meta.lengthIds, undefined, text.listed, onUndo(core))
    if (text.lengths.length > 0) core.pendingText.set(rid, text, false, onUndo(core))
    const len = storedSize(src, keysJson)
    adjustCount(core, meta, 1, len)
    noteLogged(meta, len)
  }
  // A new document's values wait for the refresh; so do an updated one's while it is pending (refresh.ts).
  if (!pendingRid(meta, rid)) insertValues(core.db, toInsert, rid)
  // A large source that does not change is kept as written: the next search reading it (an
  // integration just given a rule is read by the next creation) would read and parse it again.
  if (hasText(source) && bigSource(src.length)) {
    keepParsed(core, rid, seq, source, src.length)
    core.onUndo(() => forgetParsed(core, rid, seq))
  }
  return seq
}

function nextVersion(existing: DocRow, p: WriteParams, id: string, meta: IndexMeta): number {
  if (p.version_type === 'external' || p.version_type === 'external_gte') {
    const v = Number(p.version)
    const ok = p.version_type === 'external' ? v > existing.ver : v >= existing.ver
    if (!ok)
      throw new VersionConflict(
        `[${id}]: version conflict, current version [${existing.ver}] is higher or equal to the one provided [${v}]`,
        meta.name,
        meta.uuid,
      )
    return v
  }
  return existing.ver + 1
}

function response(
  meta: IndexMeta,
  id: string,
  version: number,
  result: WriteResponse['result'],
  seq: number,
  p: WriteParams,
): WriteResponse {
  const r: WriteResponse = {
    _index: meta.name,
    _id: id,
    _version: version,
    result,
    // One primary is written; its replicas count in `total` but are never assigned on one node.
    _shards: { total: 1 + shardCopies(meta.settings).replicas, successful: 1, failed: 0 },
    _seq_no: seq,
    _primary_term: 1,
  }
  if (refreshes(p)) r.forced_refresh = true
  return r
}

const refreshes = (p: WriteParams) => p.refresh === true || p.refresh === 'true' || p.refresh === ''

function adjustCount(core: StoreCore, meta: IndexMeta, by: number, chars: number): void {
  meta.docCount += by
  if (meta.sourceChars !== undefined) meta.sourceChars += chars
  core.onUndo(() => {
    meta.docCount -= by
    if (meta.sourceChars !== undefined) meta.sourceChars -= chars
  })
}

function fieldId(core: StoreCore, meta: IndexMeta, field: string): number | undefined {
  const known = meta.fieldIds.get(field)
  if (known !== undefined) return known
  const spec = meta.specs.get(field)
  if (spec ? !indexedKind(spec) : !isValueAndPathField(meta.specs, field)) return undefined
  return newFieldId(core, meta, field, 0)
}

/** A text field's terms id (its tokens' prefix in `tx`) or lengths id (see text-index.ts). */
function textFieldId(core: StoreCore, meta: IndexMeta, name: string): number {
  const known = meta.fieldIds.get(name)
  if (known !== undefined) return known
  const f = newFieldId(core, meta, name, 0)
  if (isLengthsField(name)) {
    meta.lengthIds.add(f)
    core.onUndo(() => meta.lengthIds.delete(f))
  }
  return f
}

function newFieldId(core: StoreCore, meta: IndexMeta, name: string, multi: number): number {
  const r = core.db.query('INSERT INTO fields (ix, name, multi) VALUES (?, ?, ?)').run(meta.ix, name, multi)
  const f = Number(r.lastInsertRowid)
  meta.fieldIds.set(name, f)
  core.onUndo(() => meta.fieldIds.delete(name))
  return f
}

/**
 * The document each field id was last seen in (see noteMultiValued): an array indexed by field
 * id and one number per call, not a set built for every document of a bulk.
 */
let seenIn = new Uint32Array(1024)
let seenDoc = 0

/** Fields this document holds several values of are marked so (their counts then need DISTINCT). */
function noteMultiValued(core: StoreCore, meta: IndexMeta, keys: Array<[number, string | number]>): void {
  if (++seenDoc === 0xffffffff) {
    seenIn.fill(0)
    seenDoc = 1
  }
  for (const [f] of keys) {
    if (f >= seenIn.length) {
      const grown = new Uint32Array(Math.max(f + 1, seenIn.length * 2))
      grown.set(seenIn)
      seenIn = grown
    }
    if (seenIn[f] !== seenDoc) {
      seenIn[f] = seenDoc
      continue
    }
    if (meta.multiValued.has(f)) continue
    core.db.query('UPDATE fields SET multi = 1 WHERE f = ?').run(f)
    meta.multiValued.add(f)
    core.onUndo(() => meta.multiValued.delete(f))
  }
}

/** Removes a document's fv rows. */
function removeKeys(core: StoreCore, row: DocRow): void {
  const del = core.db.query('DELETE FROM fv WHERE f = ? AND v = ? AND rid = ?')
  for (const [f, v] of JSON.parse(row.keys) as Key[]) del.run(f, v, row.rid)
}

/** Removes a document's text rows: its lengths leave the BM25 counters. */
function removeText(core: StoreCore, meta: IndexMeta, rid: number): void {
  const old = heldLengths(core.db, meta, core.pendingText, rid)
  if (old.length === 0) return
  core.pendingText.set(rid, null, true, onUndo(core))
  core.pendingStats.move(meta.lengthIds, old, undefined, onUndo(core))
}

const onUndo =
  (core: StoreCore) =>
  (f: () => void): void =>
    core.onUndo(f)

/** Keys by field: a key's value is looked up in its field's set, no `field/type/value` string built per key. */
function byField(keys: readonly Key[]): Map<number, Set<string | number>> {
  const out = new Map<number, Set<string | number>>()
  for (const [f, v] of keys) {
    let values = out.get(f)
    if (!values) out.set(f, (values = new Set()))
    values.add(v)
  }
  return out
}

/**
 * Removes the fv rows of `row` a rewrite to `next` does not keep: the value keys `next` lacks.
 * Answers the value keys still to insert. Linear in the keys with one set lookup each: an
 * integration listing 10,000 rules is rewritten once per rule created.
 */
function replaceKeys(core: StoreCore, row: DocRow, next: Key[]): RewrittenKeys {
  const del = core.db.query('DELETE FROM fv WHERE f = ? AND v = ? AND rid = ?')
  const wanted = byField(next)
  const kept: Key[] = []
  for (const key of JSON.parse(row.keys) as Key[]) {
    if (wanted.get(key[0])?.has(key[1])) kept.push(key)
    else del.run(key[0], key[1], row.rid)
  }
  // A long list is kept for the next rewrite (kept-keys.ts).
  const counts = next.length >= KEEP_FROM ? countValues(next) : undefined
  if (kept.length === 0) return { fresh: next, counts }
  const keep = byField(kept)
  return { fresh: next.filter(([f, v]) => !keep.get(f)?.has(v)), counts }
}

/** What a rewrite does to a row's keys: the fv keys to insert, and the counts to keep. */
interface RewrittenKeys {
  fresh: Key[]
  counts?: KeptRow['counts']
}

/** replaceKeys from the keys kept of the row's version: the changed positions only. */
function keptKeys(core: StoreCore, row: DocRow, kept: KeptRow, next: Key[]): RewrittenKeys {
  // Taken out while its counts change: a write that fails leaves nothing half-changed behind.
  forgetRow(core, row.rid)
  const { removed, added } = diffKeys(kept, next)
  const del = core.db.query('DELETE FROM fv WHERE f = ? AND v = ? AND rid = ?')
  for (const [f, v] of removed) del.run(f, v, row.rid)
  return { fresh: added, counts: next.length >= KEEP_FROM ? kept.counts : undefined }
}

/**
 * The row of a document an index or create request replaces, without its keys when they are
 * kept for its version (kept-keys.ts): reading a long `keys` column back costs what parsing it does.
 */
function keptHead(core: StoreCore, meta: IndexMeta, id: string): { row: DocRow; kept: KeptRow } | DocRow | null {
  // One read, as getHead's, for a row with short keys (none kept: KEEP_FROM keys take more bytes).
  const head = core.db
    .query(
      `SELECT rid, id, seq, ver, '' AS src, octet_length(keys) AS kb, CASE WHEN octet_length(keys) < ${SHORT_KEYS} THEN keys END AS keys,
        CASE WHEN octet_length(keys) < ${SHORT_KEYS} THEN ${STORED_SIZE} END AS len FROM docs WHERE ix = ? AND id = ?`,
    )
    .get(meta.ix, id) as (Omit<DocRow, 'keys' | 'len'> & { kb: number; keys: string | null; len: number | null }) | null
  if (!head) return null
  const { kb, keys, len, ...row } = head
  if (keys !== null) return { ...row, keys, len: len! }
  const kept = keptRow(core, row.rid, meta.uuid, row.seq, kb)
  return kept ? { row: { ...row, keys: '', len: kept.len }, kept } : getHead(core, meta, id)
}

/** Bytes of `keys` below which a row is never kept: KEEP_FROM (256) keys take at least 6 bytes each (`[1,0],`). */
const SHORT_KEYS = 1024

/** An update answers the document it left under `get` when `_source` was asked for. */
function withGet(r: WriteResponse, wanted: unknown, source: Record<string, unknown>): WriteResponse {
  if (wanted === undefined || wanted === false || wanted === 'false') return r
  const filtered = filterSource(source, sourceSpec(wanted as SourceFilter))
  return {
    ...r,
    get: { _seq_no: r._seq_no, _primary_term: r._primary_term, found: true, ...(filtered !== undefined ? { _source: filtered } : {}) },
  }
}

/** Partial-update merge: objects merge recursively, everything else (arrays too) is replaced. */
function deepMerge(target: Record<string, unknown>, patch: Record<string, unknown>): { value: Record<string, unknown>; changed: boolean } {
  const out: Record<string, unknown> = { ...target }
  let changed = false
  for (const [k, v] of Object.entries(patch)) {
    const cur = own(out, k)
    if (isObject(v) && isObject(cur)) {
      const r = deepMerge(cur, v)
      setOwn(out, k, r.value)
      changed ||= r.changed
    } else {
      if (!deepEqual(cur, v) || !Object.hasOwn(out, k)) changed = true
      setOwn(out, k, v)
    }
  }
  return { value: out, changed }
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]))
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]))
  }
  return false
}

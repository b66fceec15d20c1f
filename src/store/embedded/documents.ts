/** Reading documents, and the one index a document operation reads or writes. */
import { ignoredFields } from '../query/malformed'
import { noteGet } from './activity'
import { STORED_SIZE } from './stored-size'
import { IllegalArgument, IndexClosed, IndexNotFound } from '../errors'
import type { GetParams, GetResponse } from '../port'
import { filterSource, sourceDisabled, sourceSpec } from '../source-filter'
import type { IndexMeta } from './catalog'
import type { StoreCore } from './core'
import { createDataStreamNow } from './data-streams'
import { createIndexNow } from './indices'
import { listOf, storedValues } from './stored-fields'
import type { Row } from './search'
import { matchTemplate } from './templates/match'

export type Op = 'index' | 'create' | 'update' | 'delete'

export interface DocRow extends Row {
  keys: string
  /** The document's stored size (see storedSize), read where the source itself is not. */
  len?: number
}

export function getRow(core: StoreCore, meta: IndexMeta, id: string): DocRow | null {
  return core.db.query('SELECT rid, id, seq, ver, src, keys FROM docs WHERE ix = ? AND id = ?').get(meta.ix, id) as DocRow | null
}

export const storedSize = (src: string, keys: string): number => src.length + 2 * keys.length

export function getHead(core: StoreCore, meta: IndexMeta, id: string): DocRow | null {
  return core.db
    .query(`SELECT rid, id, seq, ver, '' AS src, keys, ${STORED_SIZE} AS len FROM docs WHERE ix = ? AND id = ?`)
    .get(meta.ix, id) as DocRow | null
}

export async function getDocument(core: StoreCore, params: GetParams): Promise<GetResponse> {
  core.assertOpen()
  const started = performance.now()
  const meta = readTarget(core, params.index)
  if (!meta) throw new IndexNotFound(params.index)
  if (meta.closed) throw new IndexClosed(meta.name, meta.uuid)
  const row = getRow(core, meta, String(params.id))
  noteGet(meta, row !== null, performance.now() - started)
  if (!row) return { _index: meta.name, _id: String(params.id), found: false }
  const stored = params.stored_fields === undefined ? [] : listOf(params.stored_fields)
  const sourceAsked = params._source !== undefined || params._source_includes !== undefined || params._source_excludes !== undefined
  const spec =
    stored.length > 0 && !sourceAsked && !stored.includes('_source')
      ? null
      : sourceSpec(params._source, params._source_includes, params._source_excludes)
  const full = JSON.parse(row.src) as Record<string, unknown>
  const source = sourceDisabled(meta.mappings) ? undefined : filterSource(full, spec)
  const fields = stored.length > 0 ? storedValues(meta, full, stored) : undefined
  const ignored = ignoredFields(full, meta.specs)
  return {
    _index: meta.name,
    _id: row.id,
    _version: row.ver,
    _seq_no: row.seq,
    _primary_term: 1,
    ...(ignored.length > 0 ? { _ignored: ignored } : {}),
    found: true,
    ...(source !== undefined ? { _source: source } : {}),
    ...(fields !== undefined && Object.keys(fields).length > 0 ? { fields } : {}),
  }
}

/** The one index a document operation addresses (index, alias with one index or a write index, data stream). */
export function readTarget(core: StoreCore, name: string): IndexMeta | undefined {
  const direct = core.cat.byName.get(name)
  if (direct) return direct
  const alias = core.cat.aliasMap.get(name)
  if (alias) {
    if (alias.size === 1) return core.cat.byName.get([...alias.keys()][0])
    const w = [...alias.entries()].find(([, d]) => d.is_write_index === true)
    if (w) return core.cat.byName.get(w[0])
    throw new IllegalArgument(
      `alias [${name}] has more than one index associated with it [${[...alias.keys()].sort().join(', ')}], can't execute a single index op`,
    )
  }
  const ds = core.cat.streams.get(name)
  if (ds) return core.writeIndexOf(ds)
  return undefined
}

/** Where a write goes; creates the index (or data stream) on first write like OpenSearch's auto-create. */
export function writeTarget(core: StoreCore, name: string, op: Op, cas: boolean, upsert: boolean): IndexMeta {
  const meta = writeTargetOf(core, name, op, cas, upsert)
  if (meta.closed) throw new IndexClosed(meta.name, meta.uuid)
  return meta
}

function writeTargetOf(core: StoreCore, name: string, op: Op, cas: boolean, upsert: boolean): IndexMeta {
  const direct = core.cat.byName.get(name)
  if (direct) {
    if (direct.dataStream && op === 'index' && !cas)
      throw new IllegalArgument(
        `index request with op_type=index and no if_primary_term and if_seq_no set targeting backing indices is disallowed, target corresponding data stream [${direct.dataStream}] instead`,
      )
    return direct
  }
  const alias = core.cat.aliasMap.get(name)
  if (alias) {
    const w = [...alias.entries()].find(([, d]) => d.is_write_index === true)
    if (w) return core.indexMeta(w[0])
    if (alias.size === 1 && [...alias.values()][0].is_write_index !== false) return core.indexMeta([...alias.keys()][0])
    throw new IllegalArgument(
      `no write index is defined for alias [${name}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index`,
    )
  }
  const ds = core.cat.streams.get(name)
  if (ds) {
    if (op !== 'create') throw new IllegalArgument('only write ops with an op_type of create are allowed in data streams')
    return core.writeIndexOf(ds)
  }
  // Deletes never create indices; updates only when they may upsert.
  if (op === 'delete' || (op === 'update' && !upsert)) throw new IndexNotFound(name)
  const template = matchTemplate(core, name)
  if (template?.body.data_stream) {
    if (op !== 'create') throw new IllegalArgument('only write ops with an op_type of create are allowed in data streams')
    return core.writeIndexOf(createDataStreamNow(core, name))
  }
  return createIndexNow(core, name, {})
}

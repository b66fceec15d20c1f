/** Indices: create, delete, open/close, and their mappings, settings, stats, refresh and flush. */
import { activityFigures, noteFlush, noteRefresh } from './activity'
import { AlreadyExists, IllegalArgument, IndexNotFound, InvalidIndexName, ParsingError } from '../errors'
import { hasWildcard, validateIndexName } from '../names'
import type {
  Acknowledged,
  AliasDefinition,
  CloseIndexResponse,
  CreateIndexBody,
  CreateIndexResponse,
  IndexInfo,
  IndexSettings,
  IndexStats,
  Mappings,
  OpenIndexResponse,
  ResolveOptions,
  ShardsInfo,
} from '../port'
import { isObject } from '../query/doc'
import { nestKeys } from '../flat-keys'
import { flattenSettings, shardsOf, validateSettings } from '../settings'
import { aliasesOf, checkWriteIndices, putAlias, validateAliasName } from './alias-entries'
import type { IndexMeta } from './catalog'
import type { StoreCore } from './core'
import { STORED_SIZE } from './stored-size'
import { randomId } from './ids'
import {
  checkFieldAliases,
  checkMappingLimits,
  fieldSpecs,
  mappingLimits,
  mergeMappings,
  validateMappings,
  ignoresMalformed,
} from './mapping'
import { MAX_IX, ridRange } from './rids'
import { composeIndex } from './templates/compose'
import { matchTemplate } from './templates/match'
import { removeTextRange } from './text-index'

/** The OpenSearch version whose behaviour and version id we report. */
export const OPENSEARCH_VERSION_ID = '137277827' // 3.6.0

export async function createIndex(core: StoreCore, params: { index: string; body?: CreateIndexBody }): Promise<CreateIndexResponse> {
  const name = params.index
  core.tx(() => {
    const template = matchTemplate(core, name)
    if (template?.body.data_stream)
      throw new IllegalArgument(
        `cannot create index with name [${name}], because it matches with template [${template.name}] that creates data streams only, use create data stream api instead`,
      )
    createIndexNow(core, name, params.body ?? {})
  })
  return { acknowledged: true, shards_acknowledged: true, index: name }
}

export function createIndexNow(core: StoreCore, name: string, body: CreateIndexBody, dataStream?: string): IndexMeta {
  validateIndexName(name)
  const existing = core.cat.byName.get(name)
  if (existing) throw new AlreadyExists(`index [${name}/${existing.uuid}] already exists`, name, existing.uuid)
  if (core.cat.aliasMap.has(name)) throw new InvalidIndexName(name, 'already exists as alias')
  if (core.cat.streams.has(name)) throw new InvalidIndexName(name, 'already exists as data stream')
  if (!isObject(body)) throw new ParsingError('request body must be an object')
  for (const k of Object.keys(body))
    if (k !== 'settings' && k !== 'mappings' && k !== 'aliases') throw new ParsingError(`unknown key [${k}] for create index`)

  const composed = composeIndex(core, name, body, dataStream)
  let mappings: Mappings = composed.mappings
  if (dataStream) mappings = mergeMappings(mappings, { properties: { '@timestamp': { type: 'date' } } })
  const requested = composed.settings
  validateSettings(requested)
  // 22 base64url characters: 128 random bits, the shape of OpenSearch's index uuids.
  const uuid = randomId(22)
  const created = core.now()
  const settings: Record<string, string | string[]> = {
    'index.number_of_shards': '1',
    'index.number_of_replicas': '1',
  }
  for (const [k, v] of Object.entries(requested)) if (v !== null) settings[k] = v
  if (dataStream) settings['index.hidden'] = 'true'
  Object.assign(settings, {
    'index.uuid': uuid,
    'index.creation_date': String(created),
    'index.provided_name': name,
    'index.version.created': OPENSEARCH_VERSION_ID,
  })
  const aliases = composed.aliases
  for (const a of Object.keys(aliases)) {
    validateAliasName(a)
    if (a === name) throw new InvalidIndexName(a, 'an index or data stream exists with the same name as the alias')
  }

  checkMappingLimits(mappings, mappingLimits(settings))
  checkFieldAliases(mappings)
  const ix = freeIx(core)
  core.db
    .query(
      'INSERT INTO indices (ix, name, uuid, created, settings, mappings, seq, data_stream, indexed_rid) VALUES (?, ?, ?, ?, ?, ?, -1, ?, ?)',
    )
    .run(ix, name, uuid, created, JSON.stringify(settings), JSON.stringify(mappings), dataStream ?? null, ridRange(ix)[0])
  const meta: IndexMeta = {
    ix,
    name,
    uuid,
    created,
    settings,
    mappings,
    seq: -1,
    dataStream,
    closed: false,
    docCount: 0,
    nextRid: ridRange(ix)[0],
    indexedRid: ridRange(ix)[0],
    specs: fieldSpecs(mappings, ignoresMalformed(settings)),
    fieldIds: new Map(),
    multiValued: new Set(),
    lengthIds: new Set(),
  }
  core.cat.byName.set(name, meta)
  core.cat.byIx.set(meta.ix, meta)
  core.onUndo(() => {
    core.cat.byName.delete(name)
    core.cat.byIx.delete(meta.ix)
  })
  for (const [alias, def] of Object.entries(aliases)) putAlias(core, alias, meta, def ?? {})
  checkWriteIndices(core)
  return meta
}

/** Index ids stay below MAX_IX so that every rowid range fits in a safe integer. */
function freeIx(core: StoreCore): number {
  const { m } = core.db.query('SELECT coalesce(max(ix), 0) AS m FROM indices').get() as { m: number }
  if (m + 1 <= MAX_IX) return m + 1
  const gap = core.db.query('SELECT min(ix) + 1 AS g FROM indices WHERE ix + 1 NOT IN (SELECT ix FROM indices)').get() as {
    g: number | null
  }
  if (gap.g === null || gap.g > MAX_IX) throw new IllegalArgument('too many indices')
  return gap.g
}

export async function deleteIndex(core: StoreCore, params: { index: string | string[] } & ResolveOptions): Promise<Acknowledged> {
  const names = namesForIndexOp(core, params.index, params, 'open,closed')
  core.tx(() => {
    for (const name of names) {
      const meta = core.indexMeta(name)
      if (meta.dataStream) {
        const ds = core.cat.streams.get(meta.dataStream)
        if (ds && core.writeIndexOf(ds).name === name)
          throw new IllegalArgument(`index [${name}] is the write index for data stream [${ds.name}] and cannot be deleted`)
      }
      dropIndex(core, meta)
    }
  })
  return { acknowledged: true }
}

/** Concrete names for index-level operations: aliases are not accepted as delete targets. */
export function namesForIndexOp(core: StoreCore, expression: string | string[], opts: ResolveOptions, defaultExpand = 'open'): string[] {
  const parts = (Array.isArray(expression) ? expression : [expression]).flatMap((e) => e.split(','))
  // With ignore_unavailable an alias name is just not a concrete index: skipped, not refused.
  if (opts.ignore_unavailable !== true)
    for (const p of parts)
      if (
        !hasWildcard(p) &&
        !p.startsWith('-') &&
        p !== '_all' &&
        (core.cat.aliasMap.has(p) || core.cat.streams.has(p)) &&
        !core.cat.byName.has(p)
      )
        throw new IllegalArgument(`The provided expression [${p}] matches an alias, specify the corresponding concrete indices instead.`)
  return [
    ...core
      .resolveTargets(expression, {
        ...opts,
        includeAliases: false,
        includeDataStreams: false,
        defaultExpand,
      })
      .keys(),
  ]
}

export function dropIndex(core: StoreCore, meta: IndexMeta): void {
  // Counter changes still pending in this transaction go first, so that none outlives its index.
  core.pendingStats.flush(core.db)
  core.db.query('DELETE FROM fv WHERE f IN (SELECT f FROM fields WHERE ix = ?)').run(meta.ix)
  core.textVisible()
  if (meta.lengthIds.size > 0) removeTextRange(core.db, ridRange(meta.ix))
  core.db.query('DELETE FROM fields WHERE ix = ?').run(meta.ix)
  core.db.query('DELETE FROM docs WHERE rid BETWEEN ? AND ?').run(...ridRange(meta.ix))
  core.db.query('DELETE FROM pit_history WHERE rid BETWEEN ? AND ?').run(...ridRange(meta.ix))
  core.clearSourceCache()
  core.db.query('DELETE FROM aliases WHERE ix = ?').run(meta.ix)
  core.db.query('DELETE FROM indices WHERE ix = ?').run(meta.ix)
  core.cat.byName.delete(meta.name)
  core.cat.byIx.delete(meta.ix)
  const removed: Array<[string, AliasDefinition]> = []
  for (const [alias, m] of core.cat.aliasMap) {
    const def = m.get(meta.name)
    if (def) {
      removed.push([alias, def])
      m.delete(meta.name)
      if (m.size === 0) core.cat.aliasMap.delete(alias)
    }
  }
  core.onUndo(() => {
    core.cat.byName.set(meta.name, meta)
    core.cat.byIx.set(meta.ix, meta)
    for (const [alias, def] of removed) {
      let m = core.cat.aliasMap.get(alias)
      if (!m) core.cat.aliasMap.set(alias, (m = new Map()))
      m.set(meta.name, def)
    }
  })
}

export async function closeIndex(core: StoreCore, params: { index: string | string[] } & ResolveOptions): Promise<CloseIndexResponse> {
  const names = [...core.resolveTargets(params.index, { ...params, includeDataStreams: false }).keys()]
  core.tx(() => {
    for (const name of names) {
      const meta = core.indexMeta(name)
      const ds = meta.dataStream ? core.cat.streams.get(meta.dataStream) : undefined
      if (ds && core.writeIndexOf(ds).name === name)
        throw new IllegalArgument(`cannot close the following data stream write indices [${name}]`)
      setClosed(core, meta, true)
    }
  })
  return { acknowledged: true, shards_acknowledged: true, indices: Object.fromEntries(names.map((n) => [n, { closed: true }])) }
}

export async function openIndex(core: StoreCore, params: { index: string | string[] } & ResolveOptions): Promise<OpenIndexResponse> {
  const names = [...core.resolveTargets(params.index, { defaultExpand: 'closed', ...params }).keys()]
  core.tx(() => {
    for (const name of names) setClosed(core, core.indexMeta(name), false)
  })
  return { acknowledged: true, shards_acknowledged: true }
}

function setClosed(core: StoreCore, meta: IndexMeta, closed: boolean): void {
  if (meta.closed === closed) return
  core.db.query('UPDATE indices SET closed = ? WHERE ix = ?').run(closed ? 1 : 0, meta.ix)
  meta.closed = closed
  core.onUndo(() => (meta.closed = !closed))
}

export async function existsIndex(core: StoreCore, params: { index: string | string[] } & ResolveOptions): Promise<boolean> {
  try {
    const found = core.resolveTargets(params.index, { ...params, allow_no_indices: params.allow_no_indices ?? false })
    return found.size > 0
  } catch (e) {
    if (e instanceof IndexNotFound) return false
    throw e
  }
}

export async function getIndex(core: StoreCore, params: { index: string | string[] } & ResolveOptions): Promise<Record<string, IndexInfo>> {
  const out: Record<string, IndexInfo> = {}
  for (const name of core.resolveTargets(params.index, params).keys()) {
    const meta = core.indexMeta(name)
    out[name] = {
      aliases: aliasesOf(core, name),
      mappings: structuredClone(meta.mappings),
      settings: { index: nestKeys(stripIndexPrefix(meta.settings)) },
      ...(meta.dataStream ? { data_stream: meta.dataStream } : {}),
    }
  }
  return out
}

export async function putMapping(
  core: StoreCore,
  params: { index: string | string[]; body: Mappings } & ResolveOptions,
): Promise<Acknowledged> {
  const update = validateMappings(params.body, { put: true })
  const names = [...core.resolveTargets(params.index, params).keys()]
  core.tx(() => {
    for (const name of names) {
      const meta = core.indexMeta(name)
      setMappings(core, meta, mergeMappings(meta.mappings, update, { put: true }))
    }
  })
  return { acknowledged: true }
}

export function setMappings(core: StoreCore, meta: IndexMeta, mappings: Mappings): void {
  checkMappingLimits(mappings, mappingLimits(meta.settings))
  checkFieldAliases(mappings)
  const before = { mappings: meta.mappings, specs: meta.specs }
  core.db.query('UPDATE indices SET mappings = ? WHERE ix = ?').run(JSON.stringify(mappings), meta.ix)
  meta.mappings = mappings
  meta.specs = fieldSpecs(mappings, ignoresMalformed(meta.settings))
  core.onUndo(() => Object.assign(meta, before))
}

export async function getMapping(
  core: StoreCore,
  params: { index?: string | string[] } & ResolveOptions = {},
): Promise<Record<string, { mappings: Mappings }>> {
  const out: Record<string, { mappings: Mappings }> = {}
  for (const name of core.resolveTargets(params.index, params).keys())
    out[name] = { mappings: structuredClone(core.indexMeta(name).mappings) }
  return out
}

export async function getSettings(
  core: StoreCore,
  params: { index?: string | string[] } & ResolveOptions = {},
): Promise<Record<string, { settings: { index: Record<string, unknown> } }>> {
  const out: Record<string, { settings: { index: Record<string, unknown> } }> = {}
  for (const name of core.resolveTargets(params.index, params).keys())
    out[name] = { settings: { index: nestKeys(stripIndexPrefix(core.indexMeta(name).settings)) } }
  return out
}

export async function putSettings(
  core: StoreCore,
  params: { index: string | string[]; body: IndexSettings; preserve_existing?: boolean } & ResolveOptions,
): Promise<Acknowledged> {
  const body = isObject(params.body) && isObject(params.body.settings) ? params.body.settings : params.body
  const update = flattenSettings(body as Record<string, unknown>)
  validateSettings(update)
  const frozen = Object.keys(update).filter((k) =>
    [
      'index.number_of_shards',
      'index.uuid',
      'index.creation_date',
      'index.provided_name',
      'index.version.created',
      'index.number_of_routing_shards',
    ].includes(k),
  )
  const names = [...core.resolveTargets(params.index, params).keys()]
  if (frozen.length > 0)
    throw new IllegalArgument(
      `Can't update non dynamic settings [[${frozen.join(', ')}]] for open indices [${names.map((n) => `[${n}/${core.indexMeta(n).uuid}]`).join(', ')}]`,
    )
  core.tx(() => {
    for (const name of names) {
      const meta = core.indexMeta(name)
      const before = meta.settings
      const next = { ...before }
      for (const [k, v] of Object.entries(update)) {
        if (params.preserve_existing && Object.hasOwn(before, k)) continue
        if (v === null) delete next[k]
        else next[k] = v
      }
      core.db.query('UPDATE indices SET settings = ? WHERE ix = ?').run(JSON.stringify(next), meta.ix)
      meta.settings = next
      core.onUndo(() => (meta.settings = before))
    }
  })
  return { acknowledged: true }
}

export async function stats(core: StoreCore, params: { index?: string | string[] } & ResolveOptions = {}): Promise<IndexStats[]> {
  return [...core.resolveTargets(params.index, params).keys()].map((name) => {
    const m = core.indexMeta(name)
    m.sourceChars ??= (
      core.db.query(`SELECT coalesce(sum(${STORED_SIZE}), 0) AS n FROM docs WHERE rid BETWEEN ? AND ?`).get(...ridRange(m.ix)) as {
        n: number
      }
    ).n
    return {
      index: name,
      uuid: m.uuid,
      hidden: core.cat.hidden(m),
      status: m.closed ? 'close' : 'open',
      docs_count: m.docCount,
      store_size_in_bytes: m.sourceChars,
      flush_total: m.flushes ?? 0,
      creation_date: m.created,
      activity: activityFigures(m),
      ...(m.dataStream ? { data_stream: m.dataStream } : {}),
    }
  })
}

export async function refresh(
  core: StoreCore,
  params: { index?: string | string[] } & ResolveOptions = {},
): Promise<{ _shards: ShardsInfo }> {
  const names = [...core.resolveTargets(params.index, { ...params, forbidClosed: true }).keys()]
  const started = performance.now()
  core.refresh(names.map((n) => core.indexMeta(n)))
  for (const n of names) noteRefresh(core.indexMeta(n), performance.now() - started, true)
  return { _shards: shardsOf(names.map((n) => core.indexMeta(n).settings)) }
}

export async function flush(
  core: StoreCore,
  params: { index?: string | string[] } & ResolveOptions = {},
): Promise<{ _shards: ShardsInfo }> {
  const names = [...core.resolveTargets(params.index, { ...params, forbidClosed: true }).keys()]
  core.db.run('PRAGMA wal_checkpoint(PASSIVE)')
  for (const n of names) {
    const m = core.indexMeta(n)
    m.flushes = (m.flushes ?? 0) + 1
    noteFlush(m)
  }
  return { _shards: shardsOf(names.map((n) => core.indexMeta(n).settings)) }
}

function stripIndexPrefix(settings: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(settings)) out[k.startsWith('index.') ? k.slice(6) : k] = v
  return out
}

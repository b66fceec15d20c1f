/**
 * The embedded Store: a single-node index store on bun:sqlite (WAL). Documents are rows of
 * `docs`; keyword/numeric/date/boolean values also go to the `fv` B-tree so selective queries
 * read only candidate rows, which the one evaluator then checks (results are exact).
 * bun:sqlite is synchronous, so every write (including its `if_seq_no` / create-only check) is
 * one atomic transaction; in-memory catalog changes are undone if that transaction fails.
 */
import { Database } from 'bun:sqlite'
import {
  AlreadyExists,
  AliasesNotFound,
  DocumentMissing,
  IllegalArgument,
  IndexClosed,
  IndexNotFound,
  InvalidIndexName,
  MapperParsing,
  ParsingError,
  ResourceNotFound,
  SearchContextMissing,
  StoreError,
  VersionConflict,
} from '../errors'
import { hasWildcard, resolveExpression, type ResolveRequest, validateIndexName, wildcardToRegExp } from '../names'
import type {
  Acknowledged,
  AliasDefinition,
  BulkItemResult,
  BulkParams,
  BulkResponse,
  CloseIndexResponse,
  CountParams,
  CountResponse,
  CreateIndexBody,
  CreateIndexResponse,
  CreatePitParams,
  CreatePitResponse,
  DataStreamInfo,
  DeleteParams,
  DeletePitResponse,
  GetParams,
  GetResponse,
  IndexInfo,
  IndexParams,
  IndexSettings,
  IndexStats,
  IndexTemplateBody,
  IndexTemplateEntry,
  IsmPoliciesResponse,
  IsmPolicyResponse,
  Mappings,
  OpenIndexResponse,
  PitInfo,
  PutIsmPolicyResponse,
  PutLifecyclePolicyParams,
  ResolveOptions,
  SearchBody,
  SearchParams,
  SearchResponse,
  ShardsInfo,
  SourceFilter,
  Store,
  UpdateAliasesBody,
  UpdateParams,
  WriteParams,
  WriteResponse,
} from '../port'
import { type FieldSpec } from '../query/compile'
import { DEFAULT_MAX_TERMS_COUNT, rewriteTerms } from '../query/terms'
import { checkJsonDepth, DEFAULT_QUERY_LIMITS, indexLimits, MAX_JSON_DEPTH, nestingExceeds } from '../query/limits'
import { fieldPath, isObject } from '../query/doc'
import { own, setOwn } from '../own'
import { filterSource, sourceSpec } from '../source-filter'
import { nestKeys } from '../../config/flat-keys'
import { flattenSettings, parseTimeValue, shardCopies, shardsOf, validateSettings } from '../settings'
import { Catalog, type DataStreamMeta, type IndexMeta } from './catalog'
import {
  applyMapping,
  checkMappingLimits,
  fieldSpecs,
  mappingLimits,
  indexedKind,
  type IndexedValue,
  mergeMappings,
  storedFields,
  storedValue,
  validateMappings,
} from './mapping'
import { type Plan, planQuery } from './plan'
import { deletePolicy, getPolicies, getPolicy, putPolicy } from './ism'
import { openStoreFile } from './integrity'
import type { Migration, MigrationResult } from './migrations'
import { MAX_IX, ridRange, type Synchronous } from './schema'
import { type Row, runCount, runSearch, type SearchTarget } from './search'
import type { Columns } from './aggs-columnar'

export interface EmbeddedStoreOptions {
  /** See schema.ts: FULL (default) survives power loss, NORMAL survives kill -9 only. */
  synchronous?: Synchronous
  /** Milliseconds since the epoch; injectable for date math and PIT expiry in tests. */
  clock?: () => number
  /** Schema steps (tests simulate a schema change with their own list); see migrations.ts. */
  migrations?: readonly Migration[]
  /** How often a running store records written progress beside it (integrity.ts); 0: open and close only. */
  progressIntervalMs?: number
  /** Node-level search limits, read at each search so that dynamic settings apply at once. */
  searchLimits?: () => Partial<SearchLimits>
}

/** OpenSearch's node-level bounds on searches and points in time (setting names in comments). */
export interface SearchLimits {
  /** `indices.query.bool.max_clause_count` */
  maxClauseCount: number
  /** `search.max_buckets` */
  maxBuckets: number
  /** `search.default_search_timeout` in milliseconds; -1: none */
  defaultSearchTimeoutMs: number
  /** `search.max_open_pit_context` */
  maxOpenPitContext: number
  /** `point_in_time.max_keep_alive` in milliseconds */
  maxPitKeepAliveMs: number
}

export const DEFAULT_SEARCH_LIMITS: SearchLimits = {
  maxClauseCount: DEFAULT_QUERY_LIMITS.maxClauseCount,
  maxBuckets: 65_535,
  defaultSearchTimeoutMs: -1,
  maxOpenPitContext: 300,
  maxPitKeepAliveMs: 86_400_000,
}

/** Rows read per statement: no SQLite cursor stays open while a search yields the event loop. */
const PAGE = 256
/**
 * Sources longer than this (characters) are not read with their page: each is read when the
 * search reaches its row, so that a page holding a 4 MiB transcript does not keep it alive in
 * every concurrent search while they take turns.
 */
const INLINE_SOURCE = 65_536
/** Characters of large sources kept parsed (see withSources). */
const BIG_SOURCE_CACHE = 32 * 1024 * 1024
const ROW_COLS = `rid, id, seq, ver, CASE WHEN length(src) > ${INLINE_SOURCE} THEN NULL ELSE src END AS src`

/** The OpenSearch version whose behaviour and version id we report. */
export const OPENSEARCH_VERSION_ID = '137277827' // 3.6.0

const SHARDS_ONE: ShardsInfo = { total: 1, successful: 1, skipped: 0, failed: 0 }

interface DocRow extends Row {
  keys: string
  /** length(src), read where the source itself is not. */
  len?: number
}

/**
 * A point in time is a `_seq_no` watermark per index, not a copy: it sees the rows written at or
 * before its watermark, and the older versions kept in `pit_history` of rows replaced or deleted
 * after it. Disk grows with the writes made while PITs are open, never with the number of PITs.
 */
interface PitMeta {
  id: string
  created: number
  keepAlive: number
  expires: number
  targets: Array<{ ix: number; uuid: string; name: string; specs: Map<string, FieldSpec>; seq: number }>
}

type Op = 'index' | 'create' | 'update' | 'delete'

export class EmbeddedStore implements Store {
  private readonly db: Database
  private cat: Catalog
  private readonly now: () => number
  private readonly pits = new Map<string, PitMeta>()
  /** Undo actions for in-memory changes of the running transaction. */
  private undo: Array<() => void> | undefined
  /** Indices whose seq_no counter moved in the running transaction (persisted once, at its end). */
  private seqDirty = new Set<IndexMeta>()
  private closed = false

  /** The configured durability; `index.translog.durability: async` indices commit with NORMAL instead. */
  private readonly synchronous: Synchronous

  /** Records a clean close in the store file and its marker (integrity.ts). */
  private readonly seal: () => void
  /** What opening did to the schema (for the start-up log). */
  readonly migration: MigrationResult

  constructor(path: string, options: EmbeddedStoreOptions = {}) {
    this.synchronous = options.synchronous ?? 'FULL'
    const opened = openStoreFile(path, {
      synchronous: this.synchronous,
      migrations: options.migrations,
      progressIntervalMs: options.progressIntervalMs,
    })
    this.db = opened.db
    this.seal = opened.seal
    this.migration = opened.migration
    this.cat = Catalog.load(this.db)
    this.now = options.clock ?? Date.now
    this.searchLimits = options.searchLimits ?? (() => ({}))
  }

  private readonly searchLimits: () => Partial<SearchLimits>

  private limits(): SearchLimits {
    return { ...DEFAULT_SEARCH_LIMITS, ...this.searchLimits() }
  }

  /**
   * The SQLite query plan of the candidate lookup for `query` on `index` (for tests and
   * diagnostics); with `afterSeq`, of the `_seq_no`-ordered read after that seq_no.
   */
  explain(index: string, query: unknown, afterSeq?: number): string[] {
    const meta = this.indexMeta(index)
    const { sql, params } = afterSeq === undefined ? this.rowsSql(meta, query) : this.seqSql(meta, query, 1, afterSeq)
    try {
      return (this.db.query(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail)
    } finally {
      this.lastPlan = undefined
    }
  }

  // -------------------------------------------------------------------------------------------
  // Transactions

  private tx<T>(fn: () => T): T {
    this.assertOpen()
    if (this.undo) return fn() // nested: part of the outer transaction
    const undo: Array<() => void> = []
    this.undo = undo
    this.seqDirty.clear()
    try {
      return this.db
        .transaction(() => {
          const out = fn()
          const save = this.db.query('UPDATE indices SET seq = ? WHERE ix = ?')
          for (const meta of this.seqDirty) if (this.cat.byIx.get(meta.ix) === meta) save.run(meta.seq, meta.ix)
          return out
        })
        .immediate()
    } catch (e) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]()
      throw e
    } finally {
      this.undo = undefined
    }
  }

  private onUndo(f: () => void): void {
    this.undo?.push(f)
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError('illegal_state_exception', 400, 'store is closed')
  }

  // -------------------------------------------------------------------------------------------
  // Resolution

  private resolveTargets(expression: string | string[] | undefined, req: ResolveRequest = {}) {
    return resolveExpression(this.cat, expression, req)
  }

  async resolve(expression: string | string[] | undefined, options?: ResolveOptions): Promise<string[]> {
    return [...this.resolveTargets(expression, options).keys()]
  }

  private indexMeta(name: string): IndexMeta {
    const meta = this.cat.byName.get(name)
    if (!meta) throw new IndexNotFound(name)
    return meta
  }

  /** The one index a document operation addresses (index, alias with one index or a write index, data stream). */
  private readTarget(name: string): IndexMeta | undefined {
    const direct = this.cat.byName.get(name)
    if (direct) return direct
    const alias = this.cat.aliasMap.get(name)
    if (alias) {
      if (alias.size === 1) return this.cat.byName.get([...alias.keys()][0])
      const w = [...alias.entries()].find(([, d]) => d.is_write_index === true)
      if (w) return this.cat.byName.get(w[0])
      throw new IllegalArgument(
        `alias [${name}] has more than one index associated with it [${[...alias.keys()].sort().join(', ')}], can't execute a single index op`,
      )
    }
    const ds = this.cat.streams.get(name)
    if (ds) return this.writeIndexOf(ds)
    return undefined
  }

  private writeIndexOf(ds: DataStreamMeta): IndexMeta {
    const backing = this.cat.backingIndices(ds)
    return this.indexMeta(backing[backing.length - 1])
  }

  /** Where a write goes; creates the index (or data stream) on first write like OpenSearch's auto-create. */
  private writeTarget(name: string, op: Op, cas: boolean, upsert: boolean): IndexMeta {
    const meta = this.writeTargetOf(name, op, cas, upsert)
    if (meta.closed) throw new IndexClosed(meta.name, meta.uuid)
    return meta
  }

  private writeTargetOf(name: string, op: Op, cas: boolean, upsert: boolean): IndexMeta {
    const direct = this.cat.byName.get(name)
    if (direct) {
      if (direct.dataStream && op === 'index' && !cas)
        throw new IllegalArgument(
          `index request with op_type=index and no if_primary_term and if_seq_no set targeting backing indices is disallowed, target corresponding data stream [${direct.dataStream}] instead`,
        )
      return direct
    }
    const alias = this.cat.aliasMap.get(name)
    if (alias) {
      const w = [...alias.entries()].find(([, d]) => d.is_write_index === true)
      if (w) return this.indexMeta(w[0])
      if (alias.size === 1 && [...alias.values()][0].is_write_index !== false) return this.indexMeta([...alias.keys()][0])
      throw new IllegalArgument(
        `no write index is defined for alias [${name}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index`,
      )
    }
    const ds = this.cat.streams.get(name)
    if (ds) {
      if (op !== 'create') throw new IllegalArgument('only write ops with an op_type of create are allowed in data streams')
      return this.writeIndexOf(ds)
    }
    // Deletes never create indices; updates only when they may upsert.
    if (op === 'delete' || (op === 'update' && !upsert)) throw new IndexNotFound(name)
    const template = this.matchTemplate(name)
    if (template?.body.data_stream) {
      if (op !== 'create') throw new IllegalArgument('only write ops with an op_type of create are allowed in data streams')
      return this.writeIndexOf(this.createDataStreamNow(name))
    }
    return this.createIndexNow(name, {})
  }

  // -------------------------------------------------------------------------------------------
  // Indices

  async createIndex(params: { index: string; body?: CreateIndexBody }): Promise<CreateIndexResponse> {
    const name = params.index
    this.tx(() => {
      const template = this.matchTemplate(name)
      if (template?.body.data_stream)
        throw new IllegalArgument(
          `cannot create index with name [${name}], because it matches with template [${template.name}] that creates data streams only, use create data stream api instead`,
        )
      this.createIndexNow(name, params.body ?? {})
    })
    return { acknowledged: true, shards_acknowledged: true, index: name }
  }

  private createIndexNow(name: string, body: CreateIndexBody, dataStream?: string): IndexMeta {
    validateIndexName(name)
    const existing = this.cat.byName.get(name)
    if (existing) throw new AlreadyExists(`index [${name}/${existing.uuid}] already exists`, name, existing.uuid)
    if (this.cat.aliasMap.has(name)) throw new InvalidIndexName(name, 'already exists as alias')
    if (this.cat.streams.has(name)) throw new InvalidIndexName(name, 'already exists as data stream')
    if (!isObject(body)) throw new ParsingError('request body must be an object')
    for (const k of Object.keys(body))
      if (k !== 'settings' && k !== 'mappings' && k !== 'aliases') throw new ParsingError(`unknown key [${k}] for create index`)

    // A backing index takes its data stream's template (its own `.ds-` name matches none).
    const template = this.matchTemplate(dataStream ?? name)?.body.template
    let mappings: Mappings = {}
    if (template?.mappings) mappings = mergeMappings(mappings, validateMappings(template.mappings))
    if (body.mappings) mappings = mergeMappings(mappings, validateMappings(body.mappings))
    if (dataStream) mappings = mergeMappings(mappings, { properties: { '@timestamp': { type: 'date' } } })
    const requested = { ...flattenSettings(template?.settings), ...flattenSettings(body.settings) }
    validateSettings(requested)
    // 22 base64url characters: 128 random bits, the shape of OpenSearch's index uuids.
    const uuid = randomId(22)
    const created = this.now()
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
    const aliases = { ...(template?.aliases ?? {}), ...(body.aliases ?? {}) }
    for (const a of Object.keys(aliases)) {
      validateAliasName(a)
      if (a === name) throw new InvalidIndexName(a, 'an index or data stream exists with the same name as the alias')
    }

    checkMappingLimits(mappings, mappingLimits(settings))
    const ix = this.freeIx()
    this.db
      .query('INSERT INTO indices (ix, name, uuid, created, settings, mappings, seq, data_stream) VALUES (?, ?, ?, ?, ?, ?, -1, ?)')
      .run(ix, name, uuid, created, JSON.stringify(settings), JSON.stringify(mappings), dataStream ?? null)
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
      specs: fieldSpecs(mappings),
      fieldIds: new Map(),
    }
    this.cat.byName.set(name, meta)
    this.cat.byIx.set(meta.ix, meta)
    this.onUndo(() => {
      this.cat.byName.delete(name)
      this.cat.byIx.delete(meta.ix)
    })
    for (const [alias, def] of Object.entries(aliases)) this.putAlias(alias, meta, def ?? {})
    this.checkWriteIndices()
    return meta
  }

  /** Index ids stay below MAX_IX so that every rowid range fits in a safe integer. */
  private freeIx(): number {
    const { m } = this.db.query('SELECT coalesce(max(ix), 0) AS m FROM indices').get() as { m: number }
    if (m + 1 <= MAX_IX) return m + 1
    const gap = this.db.query('SELECT min(ix) + 1 AS g FROM indices WHERE ix + 1 NOT IN (SELECT ix FROM indices)').get() as {
      g: number | null
    }
    if (gap.g === null || gap.g > MAX_IX) throw new IllegalArgument('too many indices')
    return gap.g
  }

  async deleteIndex(params: { index: string | string[] } & ResolveOptions): Promise<Acknowledged> {
    const names = this.namesForIndexOp(params.index, params, 'open,closed')
    this.tx(() => {
      for (const name of names) {
        const meta = this.indexMeta(name)
        if (meta.dataStream) {
          const ds = this.cat.streams.get(meta.dataStream)
          if (ds && this.writeIndexOf(ds).name === name)
            throw new IllegalArgument(`index [${name}] is the write index for data stream [${ds.name}] and cannot be deleted`)
        }
        this.dropIndex(meta)
      }
    })
    return { acknowledged: true }
  }

  /** Concrete names for index-level operations: aliases are not accepted as delete targets. */
  private namesForIndexOp(expression: string | string[], opts: ResolveOptions, defaultExpand = 'open'): string[] {
    const parts = (Array.isArray(expression) ? expression : [expression]).flatMap((e) => e.split(','))
    // With ignore_unavailable an alias name is just not a concrete index: skipped, not refused.
    if (opts.ignore_unavailable !== true)
      for (const p of parts)
        if (
          !hasWildcard(p) &&
          !p.startsWith('-') &&
          p !== '_all' &&
          (this.cat.aliasMap.has(p) || this.cat.streams.has(p)) &&
          !this.cat.byName.has(p)
        )
          throw new IllegalArgument(`The provided expression [${p}] matches an alias, specify the corresponding concrete indices instead.`)
    return [
      ...this.resolveTargets(expression, {
        ...opts,
        includeAliases: false,
        includeDataStreams: false,
        defaultExpand,
      }).keys(),
    ]
  }

  private dropIndex(meta: IndexMeta): void {
    this.db.query('DELETE FROM fv WHERE f IN (SELECT f FROM fields WHERE ix = ?)').run(meta.ix)
    this.db.query('DELETE FROM fields WHERE ix = ?').run(meta.ix)
    this.db.query('DELETE FROM docs WHERE rid BETWEEN ? AND ?').run(...ridRange(meta.ix))
    this.db.query('DELETE FROM pit_history WHERE rid BETWEEN ? AND ?').run(...ridRange(meta.ix))
    // Its index id (so its rids) may be given to the next index created: no parsed source may outlive it.
    this.bigSources.clear()
    this.bigSourceChars = 0
    this.db.query('DELETE FROM aliases WHERE ix = ?').run(meta.ix)
    this.db.query('DELETE FROM indices WHERE ix = ?').run(meta.ix)
    this.cat.byName.delete(meta.name)
    this.cat.byIx.delete(meta.ix)
    const removed: Array<[string, AliasDefinition]> = []
    for (const [alias, m] of this.cat.aliasMap) {
      const def = m.get(meta.name)
      if (def) {
        removed.push([alias, def])
        m.delete(meta.name)
        if (m.size === 0) this.cat.aliasMap.delete(alias)
      }
    }
    this.onUndo(() => {
      this.cat.byName.set(meta.name, meta)
      this.cat.byIx.set(meta.ix, meta)
      for (const [alias, def] of removed) {
        let m = this.cat.aliasMap.get(alias)
        if (!m) this.cat.aliasMap.set(alias, (m = new Map()))
        m.set(meta.name, def)
      }
    })
  }

  async closeIndex(params: { index: string | string[] } & ResolveOptions): Promise<CloseIndexResponse> {
    const names = [...this.resolveTargets(params.index, { ...params, includeDataStreams: false }).keys()]
    this.tx(() => {
      for (const name of names) {
        const meta = this.indexMeta(name)
        const ds = meta.dataStream ? this.cat.streams.get(meta.dataStream) : undefined
        if (ds && this.writeIndexOf(ds).name === name)
          throw new IllegalArgument(`cannot close the following data stream write indices [${name}]`)
        this.setClosed(meta, true)
      }
    })
    return { acknowledged: true, shards_acknowledged: true, indices: Object.fromEntries(names.map((n) => [n, { closed: true }])) }
  }

  async openIndex(params: { index: string | string[] } & ResolveOptions): Promise<OpenIndexResponse> {
    const names = [...this.resolveTargets(params.index, { defaultExpand: 'closed', ...params }).keys()]
    this.tx(() => {
      for (const name of names) this.setClosed(this.indexMeta(name), false)
    })
    return { acknowledged: true, shards_acknowledged: true }
  }

  private setClosed(meta: IndexMeta, closed: boolean): void {
    if (meta.closed === closed) return
    this.db.query('UPDATE indices SET closed = ? WHERE ix = ?').run(closed ? 1 : 0, meta.ix)
    meta.closed = closed
    this.onUndo(() => (meta.closed = !closed))
  }

  async existsIndex(params: { index: string | string[] } & ResolveOptions): Promise<boolean> {
    try {
      const found = this.resolveTargets(params.index, { ...params, allow_no_indices: params.allow_no_indices ?? false })
      return found.size > 0
    } catch (e) {
      if (e instanceof IndexNotFound) return false
      throw e
    }
  }

  async getIndex(params: { index: string | string[] } & ResolveOptions): Promise<Record<string, IndexInfo>> {
    const out: Record<string, IndexInfo> = {}
    for (const name of this.resolveTargets(params.index, params).keys()) {
      const meta = this.indexMeta(name)
      out[name] = {
        aliases: this.aliasesOf(name),
        mappings: structuredClone(meta.mappings),
        settings: { index: nestKeys(stripIndexPrefix(meta.settings)) },
        ...(meta.dataStream ? { data_stream: meta.dataStream } : {}),
      }
    }
    return out
  }

  private aliasesOf(index: string): Record<string, AliasDefinition> {
    const out: Record<string, AliasDefinition> = {}
    for (const [alias, m] of [...this.cat.aliasMap].sort(([a], [b]) => (a < b ? -1 : 1))) {
      const def = m.get(index)
      if (def) out[alias] = structuredClone(def)
    }
    return out
  }

  async putMapping(params: { index: string | string[]; body: Mappings } & ResolveOptions): Promise<Acknowledged> {
    const update = validateMappings(params.body)
    const names = [...this.resolveTargets(params.index, params).keys()]
    this.tx(() => {
      for (const name of names) {
        const meta = this.indexMeta(name)
        this.setMappings(meta, mergeMappings(meta.mappings, update))
      }
    })
    return { acknowledged: true }
  }

  private setMappings(meta: IndexMeta, mappings: Mappings): void {
    checkMappingLimits(mappings, mappingLimits(meta.settings))
    const before = { mappings: meta.mappings, specs: meta.specs }
    this.db.query('UPDATE indices SET mappings = ? WHERE ix = ?').run(JSON.stringify(mappings), meta.ix)
    meta.mappings = mappings
    meta.specs = fieldSpecs(mappings)
    this.onUndo(() => Object.assign(meta, before))
  }

  async getMapping(params: { index?: string | string[] } & ResolveOptions = {}): Promise<Record<string, { mappings: Mappings }>> {
    const out: Record<string, { mappings: Mappings }> = {}
    for (const name of this.resolveTargets(params.index, params).keys())
      out[name] = { mappings: structuredClone(this.indexMeta(name).mappings) }
    return out
  }

  async getSettings(
    params: { index?: string | string[] } & ResolveOptions = {},
  ): Promise<Record<string, { settings: { index: Record<string, unknown> } }>> {
    const out: Record<string, { settings: { index: Record<string, unknown> } }> = {}
    for (const name of this.resolveTargets(params.index, params).keys())
      out[name] = { settings: { index: nestKeys(stripIndexPrefix(this.indexMeta(name).settings)) } }
    return out
  }

  async putSettings(params: { index: string | string[]; body: IndexSettings } & ResolveOptions): Promise<Acknowledged> {
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
    const names = [...this.resolveTargets(params.index, params).keys()]
    if (frozen.length > 0)
      throw new IllegalArgument(
        `Can't update non dynamic settings [[${frozen.join(', ')}]] for open indices [${names.map((n) => `[${n}/${this.indexMeta(n).uuid}]`).join(', ')}]`,
      )
    this.tx(() => {
      for (const name of names) {
        const meta = this.indexMeta(name)
        const before = meta.settings
        const next = { ...before }
        for (const [k, v] of Object.entries(update)) {
          if (v === null) delete next[k]
          else next[k] = v
        }
        this.db.query('UPDATE indices SET settings = ? WHERE ix = ?').run(JSON.stringify(next), meta.ix)
        meta.settings = next
        this.onUndo(() => (meta.settings = before))
      }
    })
    return { acknowledged: true }
  }

  async stats(params: { index?: string | string[] } & ResolveOptions = {}): Promise<IndexStats[]> {
    return [...this.resolveTargets(params.index, params).keys()].map((name) => {
      const m = this.indexMeta(name)
      m.sourceChars ??= (
        this.db.query('SELECT coalesce(sum(length(src)), 0) AS n FROM docs WHERE rid BETWEEN ? AND ?').get(...ridRange(m.ix)) as {
          n: number
        }
      ).n
      return {
        index: name,
        uuid: m.uuid,
        hidden: this.cat.hidden(m),
        status: m.closed ? 'close' : 'open',
        docs_count: m.docCount,
        store_size_in_bytes: m.sourceChars,
        flush_total: m.flushes ?? 0,
        creation_date: m.created,
        ...(m.dataStream ? { data_stream: m.dataStream } : {}),
      }
    })
  }

  async refresh(params: { index?: string | string[] } & ResolveOptions = {}): Promise<{ _shards: ShardsInfo }> {
    const names = [...this.resolveTargets(params.index, { ...params, forbidClosed: true }).keys()]
    return { _shards: shardsOf(names.map((n) => this.indexMeta(n).settings)) }
  }

  async flush(params: { index?: string | string[] } & ResolveOptions = {}): Promise<{ _shards: ShardsInfo }> {
    const names = [...this.resolveTargets(params.index, { ...params, forbidClosed: true }).keys()]
    this.db.run('PRAGMA wal_checkpoint(PASSIVE)')
    for (const n of names) {
      const m = this.indexMeta(n)
      m.flushes = (m.flushes ?? 0) + 1
    }
    return { _shards: shardsOf(names.map((n) => this.indexMeta(n).settings)) }
  }

  // -------------------------------------------------------------------------------------------
  // Templates

  private matchTemplate(index: string): { name: string; body: IndexTemplateBody } | undefined {
    let best: { name: string; body: IndexTemplateBody } | undefined
    for (const [name, body] of this.cat.templates) {
      const patterns = Array.isArray(body.index_patterns) ? body.index_patterns : [body.index_patterns]
      if (!patterns.some((p) => wildcardToRegExp(p).test(index))) continue
      if (!best || (body.priority ?? 0) > (best.body.priority ?? 0)) best = { name, body }
    }
    return best
  }

  async putIndexTemplate(params: { name: string; body: IndexTemplateBody; create?: boolean }): Promise<Acknowledged> {
    const { name, body } = params
    if (!isObject(body) || body.index_patterns === undefined)
      throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: index patterns are missing;')
    if (name !== name.toLowerCase() || name.includes(' ') || name.startsWith('_')) throw new InvalidIndexName(name, 'must be lowercase')
    if (params.create && this.cat.templates.has(name)) throw new IllegalArgument(`index template [${name}] already exists`)
    const patterns = Array.isArray(body.index_patterns) ? body.index_patterns : [body.index_patterns]
    if (body.template?.mappings) validateMappings(body.template.mappings)
    if (body.template?.settings) validateSettings(flattenSettings(body.template.settings))
    const priority = body.priority ?? 0
    for (const [other, ob] of this.cat.templates) {
      if (other === name || (ob.priority ?? 0) !== priority) continue
      const op = Array.isArray(ob.index_patterns) ? ob.index_patterns : [ob.index_patterns]
      const overlap = patterns.some((p) => op.some((q) => wildcardToRegExp(p).test(q) || wildcardToRegExp(q).test(p)))
      if (overlap)
        throw new IllegalArgument(
          `index template [${name}] has index patterns [${patterns.join(', ')}] matching patterns from existing templates [${other}] with patterns (${other} => [${op.join(', ')}]) that have the same priority [${priority}], multiple index templates may not match during index creation, please use a different priority`,
        )
    }
    const stored: IndexTemplateBody = { ...body, index_patterns: patterns }
    this.tx(() => {
      const before = this.cat.templates.get(name)
      this.db.query('INSERT OR REPLACE INTO templates (name, body) VALUES (?, ?)').run(name, JSON.stringify(stored))
      this.cat.templates.set(name, stored)
      this.onUndo(() => (before ? this.cat.templates.set(name, before) : this.cat.templates.delete(name)))
    })
    return { acknowledged: true }
  }

  async getIndexTemplate(params: { name?: string } = {}): Promise<{ index_templates: IndexTemplateEntry[] }> {
    const names = (params.name ?? '*').split(',')
    const out: IndexTemplateEntry[] = []
    for (const n of names) {
      const re = wildcardToRegExp(n)
      const found = [...this.cat.templates].filter(([k]) => re.test(k))
      if (found.length === 0 && !hasWildcard(n)) throw new ResourceNotFound(`index template matching [${n}] not found`)
      for (const [k, v] of found) if (!out.some((e) => e.name === k)) out.push({ name: k, index_template: structuredClone(v) })
    }
    return { index_templates: out.sort((a, b) => (a.name < b.name ? -1 : 1)) }
  }

  async deleteIndexTemplate(params: { name: string }): Promise<Acknowledged> {
    const names = params.name.split(',').flatMap((n) => {
      const found = [...this.cat.templates.keys()].filter((k) => wildcardToRegExp(n).test(k))
      if (found.length === 0 && !hasWildcard(n)) throw new ResourceNotFound(`index_template [${n}] missing`)
      return found
    })
    for (const n of names) {
      const user = [...this.cat.streams.values()].find((ds) => ds.template === n)
      if (user)
        throw new IllegalArgument(`unable to remove composable templates [${n}] as they are in use by a data streams [${user.name}]`)
    }
    this.tx(() => {
      for (const n of names) {
        const before = this.cat.templates.get(n)!
        this.db.query('DELETE FROM templates WHERE name = ?').run(n)
        this.cat.templates.delete(n)
        this.onUndo(() => this.cat.templates.set(n, before))
      }
    })
    return { acknowledged: true }
  }

  // -------------------------------------------------------------------------------------------
  // Aliases

  private putAlias(alias: string, meta: IndexMeta, def: AliasDefinition): void {
    const clean: AliasDefinition = {}
    if (def.filter !== undefined) clean.filter = def.filter
    if (def.routing !== undefined) {
      clean.index_routing = def.routing
      clean.search_routing = def.routing
    }
    if (def.index_routing !== undefined) clean.index_routing = def.index_routing
    if (def.search_routing !== undefined) clean.search_routing = def.search_routing
    if (def.is_write_index !== undefined) clean.is_write_index = def.is_write_index
    if (def.is_hidden !== undefined) clean.is_hidden = def.is_hidden
    this.db.query('INSERT OR REPLACE INTO aliases (alias, ix, def) VALUES (?, ?, ?)').run(alias, meta.ix, JSON.stringify(clean))
    let m = this.cat.aliasMap.get(alias)
    if (!m) this.cat.aliasMap.set(alias, (m = new Map()))
    const before = m.get(meta.name)
    m.set(meta.name, clean)
    const map = m
    this.onUndo(() => {
      if (before) map.set(meta.name, before)
      else map.delete(meta.name)
      if (map.size === 0) this.cat.aliasMap.delete(alias)
    })
  }

  private removeAlias(alias: string, meta: IndexMeta): void {
    const m = this.cat.aliasMap.get(alias)
    const before = m?.get(meta.name)
    if (!m || !before) return
    this.db.query('DELETE FROM aliases WHERE alias = ? AND ix = ?').run(alias, meta.ix)
    m.delete(meta.name)
    if (m.size === 0) this.cat.aliasMap.delete(alias)
    this.onUndo(() => {
      let mm = this.cat.aliasMap.get(alias)
      if (!mm) this.cat.aliasMap.set(alias, (mm = new Map()))
      mm.set(meta.name, before)
    })
  }

  /** OpenSearch allows at most one write index per alias. */
  private checkWriteIndices(): void {
    for (const [alias, m] of this.cat.aliasMap) {
      const writers = [...m.entries()].filter(([, d]) => d.is_write_index === true).map(([i]) => i)
      if (writers.length > 1) throw new IllegalArgument(`alias [${alias}] has more than one write index [${writers.sort().join(',')}]`)
    }
  }

  async updateAliases(params: { body: UpdateAliasesBody }): Promise<Acknowledged> {
    const actions = params.body?.actions
    if (!Array.isArray(actions) || actions.length === 0)
      throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: No action specified;')
    const parsed = actions.map((action) => {
      const [type] = Object.keys(action)
      const a = (action as Record<string, Record<string, unknown>>)[type]
      if (!isObject(a) || Object.keys(action).length !== 1) throw new ParsingError(`[aliases] failed to parse field [actions]`)
      const indexExprs = [...(a.index !== undefined ? [String(a.index)] : []), ...((a.indices as string[]) ?? [])]
      if (indexExprs.length === 0)
        throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: One of [index] or [indices] is required;`)
      return { type, a, indexExprs }
    })
    this.tx(() => {
      // Like OpenSearch, every remove_index goes first, so that an index can be replaced by an
      // alias of the same name in one request; the other actions then see the state without it.
      const doomed = parsed.filter((p) => p.type === 'remove_index').flatMap((p) => this.namesForIndexOp(p.indexExprs, {}))
      for (const name of new Set(doomed)) this.dropIndex(this.indexMeta(name))
      for (const { type, a, indexExprs } of parsed) {
        if (type === 'remove_index') continue
        const aliasNames = [...(a.alias !== undefined ? [String(a.alias)] : []), ...((a.aliases as string[]) ?? [])]
        if (aliasNames.length === 0)
          throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: One of [alias] or [aliases] is required;`)
        const targets = [...this.resolveTargets(indexExprs, { includeAliases: false, expand_wildcards: 'all' }).keys()]
        if (type === 'add') {
          for (const alias of aliasNames) {
            validateAliasName(alias)
            if (this.cat.byName.has(alias) || this.cat.streams.has(alias))
              throw new StoreError(
                'invalid_alias_name_exception',
                400,
                `Invalid alias name [${alias}]: an index or data stream exists with the same name as the alias`,
                {
                  index: alias,
                },
              )
            for (const t of targets) this.putAlias(alias, this.indexMeta(t), a as AliasDefinition)
          }
        } else if (type === 'remove') {
          let removed = 0
          for (const pattern of aliasNames) {
            const re = wildcardToRegExp(pattern)
            for (const alias of [...this.cat.aliasMap.keys()])
              if (re.test(alias))
                for (const t of targets)
                  if (this.cat.aliasMap.get(alias)?.has(t)) {
                    this.removeAlias(alias, this.indexMeta(t))
                    removed++
                  }
          }
          if (removed === 0 && a.must_exist !== false) throw new AliasesNotFound(aliasNames)
        } else throw new ParsingError(`[aliases] unknown action [${type}]`)
      }
      this.checkWriteIndices()
    })
    return { acknowledged: true }
  }

  async getAlias(
    params: { index?: string | string[]; name?: string | string[] } & ResolveOptions = {},
  ): Promise<Record<string, { aliases: Record<string, AliasDefinition> }>> {
    const names =
      params.name === undefined ? undefined : (Array.isArray(params.name) ? params.name : params.name.split(',')).filter(Boolean)
    const wantsAll = names === undefined || names.includes('_all') || names.includes('*')
    const indices = this.resolveTargets(params.index, { ...params, defaultExpand: params.index === undefined && names ? 'all' : 'open' })
    const out: Record<string, { aliases: Record<string, AliasDefinition> }> = {}
    const found = new Set<string>()
    for (const index of indices.keys()) {
      const all = this.aliasesOf(index)
      const picked: Record<string, AliasDefinition> = {}
      for (const [alias, def] of Object.entries(all)) {
        if (!wantsAll && !matchesAliasPatterns(alias, names!)) continue
        picked[alias] = def
        found.add(alias)
      }
      if (Object.keys(picked).length > 0 || names === undefined) out[index] = { aliases: picked }
    }
    if (names && !wantsAll) {
      const missing = names.filter((n) => !hasWildcard(n) && !n.startsWith('-') && !found.has(n))
      if (missing.length > 0) throw new AliasesNotFound(missing)
    }
    return out
  }

  // -------------------------------------------------------------------------------------------
  // Data streams

  async createDataStream(params: { name: string }): Promise<Acknowledged> {
    this.tx(() => this.createDataStreamNow(params.name))
    return { acknowledged: true }
  }

  private createDataStreamNow(name: string): DataStreamMeta {
    validateIndexName(name)
    if (name.startsWith('.ds-')) throw new InvalidIndexName(name, "data_stream [.ds-] must not start with '.ds-'")
    if (this.cat.streams.has(name)) throw new AlreadyExists(`data_stream [${name}] already exists`)
    if (this.cat.byName.has(name) || this.cat.aliasMap.has(name))
      throw new AlreadyExists(`data_stream [${name}] conflicts with existing index or alias`)
    const template = this.matchTemplate(name)
    if (!template?.body.data_stream) throw new IllegalArgument(`no matching index template found for data stream [${name}]`)
    const tsField = template.body.data_stream.timestamp_field?.name ?? '@timestamp'
    const ds: DataStreamMeta = { name, template: template.name, generation: 1, tsField }
    this.db.query('INSERT INTO data_streams (name, template, generation, ts_field) VALUES (?, ?, 1, ?)').run(name, template.name, tsField)
    this.cat.streams.set(name, ds)
    this.onUndo(() => this.cat.streams.delete(name))
    const backing = this.createIndexNow(backingIndexName(name, 1), {}, name)
    if (tsField !== '@timestamp')
      this.setMappings(backing, mergeMappings(backing.mappings, { properties: { [tsField]: { type: 'date' } } }))
    return ds
  }

  async getDataStream(params: { name?: string | string[] } = {}): Promise<{ data_streams: DataStreamInfo[] }> {
    const names = params.name === undefined ? ['*'] : Array.isArray(params.name) ? params.name : params.name.split(',')
    const out: DataStreamInfo[] = []
    for (const n of names) {
      const re = wildcardToRegExp(n === '_all' ? '*' : n)
      const found = [...this.cat.streams.values()].filter((d) => re.test(d.name))
      if (found.length === 0 && !hasWildcard(n) && n !== '_all') throw new IndexNotFound(n)
      for (const ds of found)
        if (!out.some((o) => o.name === ds.name))
          out.push({
            name: ds.name,
            timestamp_field: { name: ds.tsField },
            indices: this.cat.backingIndices(ds).map((i) => ({ index_name: i, index_uuid: this.indexMeta(i).uuid })),
            generation: ds.generation,
            status: 'GREEN',
            template: ds.template,
          })
    }
    return { data_streams: out.sort((a, b) => (a.name < b.name ? -1 : 1)) }
  }

  async deleteDataStream(params: { name: string | string[] }): Promise<Acknowledged> {
    const names = (Array.isArray(params.name) ? params.name : params.name.split(',')).flatMap((n) => {
      const re = wildcardToRegExp(n === '_all' ? '*' : n)
      const found = [...this.cat.streams.keys()].filter((k) => re.test(k))
      if (found.length === 0 && !hasWildcard(n) && n !== '_all') throw new ResourceNotFound(`data_stream matching [${n}] not found`)
      return found
    })
    this.tx(() => {
      for (const n of names) {
        const ds = this.cat.streams.get(n)!
        for (const i of this.cat.backingIndices(ds)) this.dropIndex(this.indexMeta(i))
        this.db.query('DELETE FROM data_streams WHERE name = ?').run(n)
        this.cat.streams.delete(n)
        this.onUndo(() => this.cat.streams.set(n, ds))
      }
    })
    return { acknowledged: true }
  }

  // -------------------------------------------------------------------------------------------
  // Documents

  private getRow(meta: IndexMeta, id: string): DocRow | null {
    return this.db.query('SELECT rid, id, seq, ver, src, keys FROM docs WHERE ix = ? AND id = ?').get(meta.ix, id) as DocRow | null
  }

  private getHead(meta: IndexMeta, id: string): DocRow | null {
    return this.db
      .query("SELECT rid, id, seq, ver, '' AS src, keys, length(src) AS len FROM docs WHERE ix = ? AND id = ?")
      .get(meta.ix, id) as DocRow | null
  }

  async get(params: GetParams): Promise<GetResponse> {
    this.assertOpen()
    const meta = this.readTarget(params.index)
    if (!meta) throw new IndexNotFound(params.index)
    if (meta.closed) throw new IndexClosed(meta.name, meta.uuid)
    const row = this.getRow(meta, String(params.id))
    if (!row) return { _index: meta.name, _id: String(params.id), found: false }
    const stored = params.stored_fields === undefined ? [] : listOf(params.stored_fields)
    const sourceAsked = params._source !== undefined || params._source_includes !== undefined || params._source_excludes !== undefined
    const spec =
      stored.length > 0 && !sourceAsked && !stored.includes('_source')
        ? null
        : sourceSpec(params._source, params._source_includes, params._source_excludes)
    const full = JSON.parse(row.src) as Record<string, unknown>
    const source = filterSource(full, spec)
    const fields = stored.length > 0 ? this.storedValues(meta, full, stored) : undefined
    return {
      _index: meta.name,
      _id: row.id,
      _version: row.ver,
      _seq_no: row.seq,
      _primary_term: 1,
      found: true,
      ...(source !== undefined ? { _source: source } : {}),
      ...(fields !== undefined && Object.keys(fields).length > 0 ? { fields } : {}),
    }
  }

  /** `stored_fields` (names or wildcards) answered from the source for fields mapped `store: true`. */
  private storedValues(meta: IndexMeta, source: Record<string, unknown>, wanted: string[]): Record<string, unknown[]> {
    const out: Record<string, unknown[]> = {}
    for (const [path, type] of storedFields(meta.mappings)) {
      if (!wanted.some((w) => wildcardToRegExp(w).test(path))) continue
      const values = fieldPath(path).collect(source)
      if (values.length > 0) out[path] = values.map((v) => storedValue(v, type, meta.specs.get(path)?.format))
    }
    return out
  }

  async index(params: IndexParams): Promise<WriteResponse> {
    // Like OpenSearch's auto-id handler, a write without an id defaults to op_type=create (so it
    // is accepted by a data stream); an explicit op_type=index keeps its meaning.
    const op: Op = params.op_type === 'create' || (params.op_type === undefined && params.id === undefined) ? 'create' : 'index'
    return this.durableAs(params.index, () =>
      this.tx(() => this.write(op, params.index, params.id, params.body as Record<string, unknown>, params)),
    )
  }

  async create(params: IndexParams & { id: string }): Promise<WriteResponse> {
    return this.durableAs(params.index, () =>
      this.tx(() => this.write('create', params.index, params.id, params.body as Record<string, unknown>, params)),
    )
  }

  async update(params: UpdateParams): Promise<WriteResponse> {
    return this.durableAs(params.index, () =>
      this.tx(() => this.write('update', params.index, params.id, params.body as unknown as Record<string, unknown>, params)),
    )
  }

  async delete(params: DeleteParams): Promise<WriteResponse> {
    return this.durableAs(params.index, () => this.tx(() => this.write('delete', params.index, params.id, undefined, params)))
  }

  /**
   * OpenSearch's `index.translog.durability: async` (acknowledge before the fsync) on an index
   * that exists under this exact name: its single-document writes commit with synchronous
   * NORMAL, which survives a killed process but not a power loss. Lock and lease documents use it,
   * since a lock lost with the machine is released, not corrupted. Everything else keeps FULL.
   */
  private durableAs<T>(index: string, write: () => T): T {
    const meta = this.cat.byName.get(index)
    if (this.synchronous !== 'FULL' || meta?.settings['index.translog.durability'] !== 'async') return write()
    this.db.run('PRAGMA synchronous = NORMAL')
    try {
      return write()
    } finally {
      this.db.run('PRAGMA synchronous = FULL')
    }
  }

  /** One document write; must run inside a transaction. All checks precede all changes. */
  private write(op: Op, index: string, id: string | undefined, body: Record<string, unknown> | undefined, p: WriteParams): WriteResponse {
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
    const upsert = op === 'update' && isObject(body) && (body.doc_as_upsert === true || body.upsert !== undefined)
    const meta = this.writeTarget(index, op, p.if_seq_no !== undefined, upsert)
    // The source is read only when an update has to merge into it.
    const existing = id === undefined ? null : op === 'update' ? this.getRow(meta, id) : this.getHead(meta, id)

    if (p.if_seq_no !== undefined) {
      const want = `required seqNo [${p.if_seq_no}], primary term [${p.if_primary_term}]`
      if (!existing) {
        if (op !== 'update')
          throw new VersionConflict(`[${id}]: version conflict, ${want}. but no document was found`, meta.name, meta.uuid)
      } else if (existing.seq !== Number(p.if_seq_no) || Number(p.if_primary_term) !== 1)
        throw new VersionConflict(
          `[${id}]: version conflict, ${want}. current document has seqNo [${existing.seq}] and primary term [1]`,
          meta.name,
          meta.uuid,
        )
    }

    if (op === 'delete') {
      if (!existing) {
        // OpenSearch spends a sequence number on a delete that finds nothing, too.
        const seq = this.nextSeq(meta)
        return this.response(meta, id!, 1, 'not_found', seq, p)
      }
      const version = this.nextVersion(existing, p, id!, meta)
      this.keepForPits(meta, existing)
      this.removeKeys(existing)
      this.db.query('DELETE FROM docs WHERE rid = ?').run(existing.rid)
      this.adjustCount(meta, -1, -(existing.len ?? existing.src.length))
      return this.response(meta, id!, version, 'deleted', this.nextSeq(meta), p)
    }

    let source = body!
    let result: 'created' | 'updated' = existing ? 'updated' : 'created'
    if (op === 'update') {
      const u = body as Record<string, unknown>
      for (const k of Object.keys(u))
        if (!['doc', 'upsert', 'doc_as_upsert', 'detect_noop', '_source', 'script', 'scripted_upsert'].includes(k))
          throw new ParsingError(`[UpdateRequest] unknown field [${k}]`)
      if (u.script !== undefined) throw new IllegalArgument('scripted updates are not supported by the embedded store; send a partial doc')
      if (u.doc !== undefined && !isObject(u.doc)) throw new ParsingError('[UpdateRequest] doc must be an object')
      if (!existing) {
        const upsert = u.doc_as_upsert === true ? u.doc : u.upsert
        if (!isObject(upsert)) throw new DocumentMissing(meta.name, id!, meta.uuid)
        source = upsert
        result = 'created'
      } else {
        if (u.doc === undefined)
          throw new StoreError('action_request_validation_exception', 400, 'Validation Failed: 1: script or doc is missing;')
        const old = JSON.parse(existing.src) as Record<string, unknown>
        const merged = deepMerge(old, u.doc as Record<string, unknown>)
        if (u.detect_noop !== false && deepEqual(merged.value, old) && !merged.changed)
          return withGet(
            { ...this.response(meta, id!, existing.ver, 'noop', existing.seq, p), _shards: { total: 0, successful: 0, failed: 0 } },
            u._source,
            old,
          )
        source = merged.value
      }
    } else if (op === 'create' && existing) {
      throw new VersionConflict(
        `[${id}]: version conflict, document already exists (current version [${existing.ver}])`,
        meta.name,
        meta.uuid,
      )
    }

    if (id === undefined) id = autoId()
    if (meta.dataStream) {
      const ds = this.cat.streams.get(meta.dataStream)
      const ts = ds?.tsField ?? '@timestamp'
      const v = source[ts]
      if (v === undefined || v === null || Array.isArray(v))
        throw new MapperParsing(`documents must contain a single-valued timestamp field '${ts}' of date type`)
    }
    const values: IndexedValue[] = []
    const grown = applyMapping(meta.mappings, source, id, values, mappingLimits(meta.settings))
    const version = existing
      ? this.nextVersion(existing, p, id, meta)
      : p.version_type === 'external' || p.version_type === 'external_gte'
        ? Number(p.version)
        : 1

    // --- changes from here on
    if (grown) this.setMappings(meta, grown)
    const keys: Array<[number, string | number]> = []
    for (const [field, v] of values) {
      const f = this.fieldId(meta, field)
      if (f !== undefined) keys.push([f, v])
    }
    const seq = this.nextSeq(meta)
    const src = JSON.stringify(source)
    const keysJson = JSON.stringify(keys)
    let rid: number
    if (existing) {
      this.keepForPits(meta, existing, seq)
      this.removeKeys(existing)
      this.db.query('UPDATE docs SET seq = ?, ver = ?, src = ?, keys = ? WHERE rid = ?').run(seq, version, src, keysJson, existing.rid)
      rid = existing.rid
      this.adjustCount(meta, 0, src.length - (existing.len ?? existing.src.length))
    } else {
      rid = meta.nextRid++
      if (rid > ridRange(meta.ix)[1]) throw new IllegalArgument(`index [${meta.name}] is full`)
      this.onUndo(() => (meta.nextRid = Math.min(meta.nextRid, rid)))
      this.db
        .query('INSERT INTO docs (rid, ix, id, seq, ver, src, keys) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(rid, meta.ix, id, seq, version, src, keysJson)
      this.adjustCount(meta, 1, src.length)
    }
    this.insertKeys(keys, rid)
    const written = this.response(meta, id, version, result, seq, p)
    return op === 'update' ? withGet(written, (body as Record<string, unknown>)._source, source) : written
  }

  /** Before a row is replaced or deleted: keep the version an open PIT still sees. */
  private keepForPits(meta: IndexMeta, existing: DocRow, gone = meta.seq + 1): void {
    if (this.pits.size === 0) return
    let needed = false
    for (const p of this.pits.values())
      for (const t of p.targets) if (t.ix === meta.ix && t.uuid === meta.uuid && t.seq >= existing.seq) needed = true
    if (!needed) return
    this.db
      .query('INSERT OR IGNORE INTO pit_history (rid, gone, id, seq, ver, src) SELECT rid, ?, id, seq, ver, src FROM docs WHERE rid = ?')
      .run(gone, existing.rid)
  }

  private nextVersion(existing: DocRow, p: WriteParams, id: string, meta: IndexMeta): number {
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

  private response(
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
    if (p.refresh === true || p.refresh === 'true' || p.refresh === '') r.forced_refresh = true
    return r
  }

  private nextSeq(meta: IndexMeta): number {
    const seq = ++meta.seq
    this.seqDirty.add(meta)
    this.onUndo(() => (meta.seq = Math.min(meta.seq, seq - 1)))
    return seq
  }

  private adjustCount(meta: IndexMeta, by: number, chars: number): void {
    meta.docCount += by
    if (meta.sourceChars !== undefined) meta.sourceChars += chars
    this.onUndo(() => {
      meta.docCount -= by
      if (meta.sourceChars !== undefined) meta.sourceChars -= chars
    })
  }

  private fieldId(meta: IndexMeta, field: string): number | undefined {
    const known = meta.fieldIds.get(field)
    if (known !== undefined) return known
    const spec = meta.specs.get(field)
    if (!spec || !indexedKind(spec)) return undefined
    const r = this.db.query('INSERT INTO fields (ix, name) VALUES (?, ?)').run(meta.ix, field)
    const f = Number(r.lastInsertRowid)
    meta.fieldIds.set(field, f)
    this.onUndo(() => meta.fieldIds.delete(field))
    return f
  }

  /** One multi-row INSERT per document: one statement step instead of one per value. */
  private insertKeys(keys: Array<[number, string | number]>, rid: number): void {
    for (let at = 0; at < keys.length; at += 100) {
      const chunk = keys.slice(at, at + 100)
      const binds: Array<string | number> = []
      for (const [f, v] of chunk) binds.push(f, v, rid)
      this.db.query(`INSERT OR IGNORE INTO fv (f, v, rid) VALUES ${VALUES3[chunk.length]}`).run(...binds)
    }
  }

  private removeKeys(row: DocRow): void {
    const del = this.db.query('DELETE FROM fv WHERE f = ? AND v = ? AND rid = ?')
    for (const [f, v] of JSON.parse(row.keys) as Array<[number, string | number]>) del.run(f, v, row.rid)
  }

  async bulk(params: BulkParams): Promise<BulkResponse> {
    const started = performance.now()
    const lines = params.body
    if (!Array.isArray(lines)) throw new IllegalArgument('bulk body must be a list of action and source lines')
    const items: BulkResponse['items'] = []
    let errors = false
    this.tx(() => {
      for (let i = 0; i < lines.length; i++) {
        const action = lines[i]
        const keys = isObject(action) ? Object.keys(action) : []
        if (keys.length !== 1 || !['index', 'create', 'update', 'delete'].includes(keys[0]))
          throw new IllegalArgument(
            `Malformed action/metadata line [${i + 1}], expected one of [create, delete, index, update] but found [${keys[0] ?? String(action)}]`,
          )
        const op = keys[0] as Op
        const meta = (action as Record<string, unknown>)[op]
        if (!isObject(meta)) throw new IllegalArgument(`Malformed action/metadata line [${i + 1}], expected START_OBJECT`)
        for (const k of Object.keys(meta))
          if (
            ![
              '_index',
              '_id',
              'if_seq_no',
              'if_primary_term',
              'version',
              'version_type',
              'routing',
              'require_alias',
              'retry_on_conflict',
              'pipeline',
              '_source',
              'dynamic_templates',
              '_type',
            ].includes(k)
          )
            throw new IllegalArgument(`Action/metadata line [${i + 1}] contains an unknown parameter [${k}]`)
        let doc: Record<string, unknown> | undefined
        if (op !== 'delete') {
          const next = lines[++i]
          if (next === undefined) throw new IllegalArgument('The bulk request must be terminated by a newline [\\n]')
          if (!isObject(next)) throw new MapperParsing('failed to parse, document is empty')
          doc = next
          // `_source` on an update's action line asks for the updated document, like in its body.
          if (op === 'update' && meta._source !== undefined && doc._source === undefined) doc = { ...doc, _source: meta._source }
        }
        const index = (meta._index as string | undefined) ?? params.index
        const id = meta._id === undefined || meta._id === null ? undefined : String(meta._id)
        if (index === undefined) throw new StoreError('action_request_validation_exception', 400, `Validation Failed: 1: index is missing;`)
        try {
          const r = this.write(op, index, id, doc, {
            index,
            if_seq_no: meta.if_seq_no as number | undefined,
            if_primary_term: meta.if_primary_term as number | undefined,
            version: meta.version as number | undefined,
            version_type: meta.version_type as WriteParams['version_type'],
            refresh: params.refresh,
          })
          const status = r.result === 'created' ? 201 : r.result === 'not_found' ? 404 : 200
          const { forced_refresh: _, ...rest } = r
          items.push({ [op]: { ...rest, status } })
        } catch (caught) {
          if (!(caught instanceof StoreError)) throw caught
          // OpenSearch's bulk auto-creates the index of an update and then misses the document;
          // the answer is the same without leaving an empty index behind.
          const e = op === 'update' && caught instanceof IndexNotFound && id !== undefined ? new DocumentMissing(index, id) : caught
          errors = true
          const item: BulkItemResult = { _index: this.displayIndex(index), _id: id ?? null, status: e.status, error: bulkError(e) }
          items.push({ [op]: item })
        }
      }
    })
    return { took: Math.round(performance.now() - started), errors, items }
  }

  private displayIndex(name: string): string {
    try {
      return this.readTarget(name)?.name ?? name
    } catch {
      return name
    }
  }

  // -------------------------------------------------------------------------------------------
  // Search

  /** The last plan, so that counting and reading the same query plans it once. */
  private lastPlan: { meta: IndexMeta; query: unknown; plan: Plan | null } | undefined

  private plan(meta: IndexMeta, query: unknown): Plan | null {
    const last = this.lastPlan
    if (last && last.meta === meta && last.query === query) return last.plan
    const plan = planQuery(query, meta, this.now())
    this.lastPlan = { meta, query, plan }
    return plan
  }

  private rowsSql(meta: IndexMeta, query: unknown, limit?: number, afterRid?: number): { sql: string; params: Array<string | number> } {
    const cols = ROW_COLS
    const plan = this.plan(meta, query)
    const tail = limit === undefined ? '' : ` LIMIT ${Math.max(0, Math.floor(limit))}`
    const [lo, hi] = ridRange(meta.ix)
    if (plan) {
      // fv field ids belong to one index, so the candidate rids need no further ix filter.
      const after = afterRid === undefined ? '' : ' AND rid > ?'
      return {
        sql: `SELECT ${cols} FROM docs WHERE rid IN (${plan.sql})${after} ORDER BY rid${tail}`,
        params: afterRid === undefined ? plan.params : [...plan.params, afterRid],
      }
    }
    return {
      sql: `SELECT ${cols} FROM docs WHERE rid BETWEEN ? AND ? ORDER BY rid${tail}`,
      params: [Math.max(lo, (afterRid ?? lo - 1) + 1), hi],
    }
  }

  /** Candidate rows in `_seq_no` order after a seq_no: a range of the `docs_seq` index. */
  private seqSql(meta: IndexMeta, query: unknown, order: 1 | -1, after?: number): { sql: string; params: Array<string | number> } {
    const plan = this.plan(meta, query)
    let sql = `SELECT ${ROW_COLS} FROM docs WHERE ix = ?`
    const params: Array<string | number> = [meta.ix]
    if (after !== undefined && Number.isFinite(after)) {
      sql += order === 1 ? ' AND seq > ?' : ' AND seq < ?'
      params.push(after)
    }
    if (plan) {
      sql += ` AND rid IN (${plan.sql})`
      params.push(...plan.params)
    }
    return { sql: `${sql} ORDER BY seq ${order === 1 ? 'ASC' : 'DESC'}`, params }
  }

  /**
   * Rows page by page (`PAGE` per statement, keyed on the ordering column), so that a search can
   * yield the event loop between rows without a SQLite cursor left open under concurrent writes.
   */
  private *paged(sqlAfter: (after: number | undefined) => { sql: string; params: Array<string | number> }, key: (r: Row) => number) {
    let after: number | undefined
    for (;;) {
      const { sql, params } = sqlAfter(after)
      const page = this.withSources(this.db.query(`${sql} LIMIT ${PAGE}`).all(...params) as Row[])
      yield* page
      if (page.length < PAGE) return
      after = key(page[page.length - 1])
    }
  }

  /**
   * Large sources (left out of the page, see INLINE_SOURCE) are read when the row is used, and
   * parsed once per version for every search that needs them at about the same time (a bounded
   * cache): 100 concurrent searches over a 4 MiB transcript do not hold 100 parsed copies.
   */
  private withSources(rows: Row[]): Row[] {
    for (const row of rows) {
      if (row.src !== null) continue
      const { rid, seq } = row
      const read = () =>
        (
          this.db
            .query('SELECT src FROM docs WHERE rid = ? AND seq = ? UNION ALL SELECT src FROM pit_history WHERE rid = ? AND seq = ? LIMIT 1')
            .get(rid, seq, rid, seq) as { src: string } | null
        )?.src ?? '{}'
      Object.defineProperty(row, 'src', { get: read })
      row.parsed = () => {
        const key = `${rid}:${seq}`
        const hit = this.bigSources.get(key)
        if (hit) {
          this.bigSources.delete(key)
          this.bigSources.set(key, hit) // most recently used last
          return hit.source
        }
        const text = read()
        const source = JSON.parse(text) as Record<string, unknown>
        this.bigSources.set(key, { source, size: text.length })
        this.bigSourceChars += text.length
        for (const [k, v] of this.bigSources) {
          if (this.bigSourceChars <= BIG_SOURCE_CACHE || k === key) break
          this.bigSources.delete(k)
          this.bigSourceChars -= v.size
        }
        return source
      }
    }
    return rows
  }

  /**
   * Columns of single-valued fields over every document of an index, read from the field-value
   * index (one range per field); undefined as soon as a document has two values of one field.
   */
  private columns(meta: IndexMeta, fields: Array<{ field: string; path: string; boolean: boolean }>): Columns | undefined {
    const [lo, hi] = ridRange(meta.ix)
    // Without deletions the documents hold every rid from the first: the position is rid - lo.
    const dense = meta.nextRid - lo === meta.docCount
    let count = meta.docCount
    let position: Int32Array | undefined
    if (!dense) {
      const rids = this.db.query('SELECT rid FROM docs WHERE rid BETWEEN ? AND ? ORDER BY rid').values(lo, hi) as number[][]
      count = rids.length
      position = new Int32Array(rids.length === 0 ? 0 : rids[rids.length - 1][0] - lo + 1).fill(-1)
      rids.forEach(([rid], i) => (position![rid - lo] = i))
    }
    const byPath = new Map<string, unknown[]>()
    for (const { field, path, boolean } of fields) {
      const column: unknown[] = new Array(count)
      byPath.set(path, column)
      const f = meta.fieldIds.get(field)
      if (f === undefined) continue // no document ever had a value
      const put = (rid: number, v: unknown): boolean => {
        const at = position ? (rid - lo < position.length ? position[rid - lo] : -1) : rid - lo
        if (at < 0 || at >= count) return true
        if (column[at] !== undefined) return false
        column[at] = v
        return true
      }
      // Few distinct values (hosts, levels): one string per value, then only rids are read.
      const distinct = this.db.query('SELECT v FROM fv WHERE f = ? GROUP BY v LIMIT 1001').values(f) as Array<[string | number]>
      if (distinct.length <= 1000) {
        const ridsOf = this.db.query('SELECT rid FROM fv WHERE f = ? AND v = ?')
        for (const [v] of distinct) {
          const value = boolean ? v === 1 : v
          for (const [rid] of ridsOf.values(f, v) as Array<[number]>) if (!put(rid, value)) return undefined
        }
        continue
      }
      for (const [rid, v] of this.db.query('SELECT rid, v FROM fv WHERE f = ?').values(f) as Array<[number, string | number]>)
        if (!put(rid, boolean ? v === 1 : v)) return undefined
    }
    return { count, byPath }
  }
  private readonly bigSources = new Map<string, { source: Record<string, unknown>; size: number }>()
  private bigSourceChars = 0

  private exactCount(meta: IndexMeta, query: unknown): number | undefined {
    if (query === undefined || (isObject(query) && isObject(query.match_all) && Object.keys(query).length === 1)) return meta.docCount
    const plan = this.plan(meta, query)
    if (!plan?.exact) return undefined
    return (this.db.query(`SELECT count(*) AS n FROM (${plan.sql})`).get(...plan.params) as { n: number }).n
  }

  private targets(expression: string | string[] | undefined, opts: ResolveOptions, maxClauseCount?: number): SearchTarget[] {
    const resolved = this.resolveTargets(expression, { ...opts, forbidClosed: true })
    return [...resolved].map(([name, filters]) => {
      const meta = this.indexMeta(name)
      return {
        name,
        specs: meta.specs,
        filters,
        limits: maxClauseCount === undefined ? undefined : indexLimits(meta.settings, maxClauseCount),
        rows: (query: unknown, limit?: number) => {
          // A bounded page is fetched in one call; open-ended reads go page by page.
          if (limit !== undefined) {
            const { sql, params } = this.rowsSql(meta, query, limit)
            return this.withSources(this.db.query(sql).all(...params) as Row[])
          }
          return this.paged(
            (after) => this.rowsSql(meta, query, undefined, after),
            (r) => r.rid,
          )
        },
        exactCount: filters ? undefined : (query: unknown) => this.exactCount(meta, query),
        columns: filters ? undefined : (fields: Array<{ field: string; path: string; boolean: boolean }>) => this.columns(meta, fields),
        rowsBySeq: (query: unknown, order: 1 | -1, after: number | undefined) =>
          this.paged(
            (next) => this.seqSql(meta, query, order, next ?? after),
            (r) => r.seq,
          ),
      }
    })
  }

  /** `index.max_result_window` (10,000): each index checks its own, so the smallest applies. */
  private maxResultWindow(targets: SearchTarget[]): number {
    let max: number | undefined
    for (const t of targets) {
      const v = Number(this.cat.byName.get(t.name)?.settings['index.max_result_window'] ?? 10_000)
      if (Number.isFinite(v)) max = max === undefined ? v : Math.min(max, v)
    }
    return max ?? 10_000
  }

  /** Terms lookups resolved and `index.max_terms_count` enforced (see query/terms.ts). */
  private rewriteQuery(query: unknown, indices: string[]): unknown {
    if (query === undefined) return query
    let maxTerms = DEFAULT_MAX_TERMS_COUNT
    for (const name of indices) {
      const v = this.cat.byName.get(name)?.settings['index.max_terms_count']
      if (typeof v === 'string') maxTerms = Math.min(maxTerms, Number(v))
    }
    return rewriteTerms(query, {
      maxTerms,
      lookup: (index, id) => {
        const meta = this.readTarget(index)
        if (!meta) throw new IndexNotFound(index)
        const row = this.getRow(meta, id)
        return row ? (JSON.parse(row.src) as Record<string, unknown>) : undefined
      },
    })
  }

  /** The request's `timeout`, else `search.default_search_timeout`; -1: none. */
  private timeoutOf(body: SearchBody, limits: SearchLimits): number {
    const t = (body as Record<string, unknown>).timeout
    if (t === undefined || t === null) return limits.defaultSearchTimeoutMs
    if (t === -1 || t === '-1') return -1
    return parseTimeValue(String(t), 'timeout')
  }

  async search(params: SearchParams): Promise<SearchResponse> {
    this.assertOpen()
    let body = params.body ?? {}
    if (!isObject(body)) throw new ParsingError('request body must be an object')
    // Before anything walks it: the query rewrite and the evaluator recurse.
    checkJsonDepth(body)
    const limits = this.limits()
    const timeoutMs = this.timeoutOf(body, limits)
    if (body.pit) {
      if (params.index !== undefined && params.index !== '' && !(Array.isArray(params.index) && params.index.length === 0))
        throw new StoreError(
          'action_request_validation_exception',
          400,
          'Validation Failed: 1: [indices] cannot be used with point in time;',
        )
      const pit = this.pit(body.pit.id)
      if (body.pit.keep_alive) {
        // Like OpenSearch's reader contexts: the keep-alive only grows, and counts from this use.
        const keepAlive = this.pitKeepAlive(body.pit.keep_alive, limits)
        pit.keepAlive = Math.max(pit.keepAlive, keepAlive)
        pit.expires = this.now() + pit.keepAlive
      }
      if (body.query !== undefined)
        body = {
          ...body,
          query: this.rewriteQuery(
            body.query,
            pit.targets.map((t) => t.name),
          ) as SearchBody['query'],
        }
      const targets: SearchTarget[] = pit.targets.map((t) => ({
        name: t.name,
        specs: t.specs,
        filters: null,
        limits: indexLimits(this.cat.byIx.get(t.ix)?.settings, limits.maxClauseCount),
        rows: () => this.pitRows(t),
      }))
      return runSearch(targets, body, {
        now: this.now(),
        maxResultWindow: 10_000,
        restTotalHitsAsInt: params.rest_total_hits_as_int,
        pitId: pit.id,
        timeoutMs,
        maxBuckets: limits.maxBuckets,
      })
    }
    const targets = this.targets(params.index, params, limits.maxClauseCount)
    if (body.query !== undefined)
      body = {
        ...body,
        query: this.rewriteQuery(
          body.query,
          targets.map((t) => t.name),
        ) as SearchBody['query'],
      }
    try {
      return await runSearch(targets, body, {
        now: this.now(),
        maxResultWindow: this.maxResultWindow(targets),
        restTotalHitsAsInt: params.rest_total_hits_as_int,
        timeoutMs,
        maxBuckets: limits.maxBuckets,
      })
    } finally {
      this.lastPlan = undefined // plans embed field ids and `now`: valid for this call only
    }
  }

  async count(params: CountParams): Promise<CountResponse> {
    this.assertOpen()
    const body = params.body ?? {}
    if (!isObject(body)) throw new ParsingError('request body must be an object')
    for (const k of Object.keys(body)) if (k !== 'query') throw new ParsingError(`request does not support [${k}]`)
    checkJsonDepth(body)
    const limits = this.limits()
    const targets = this.targets(params.index, params, limits.maxClauseCount)
    let n: number
    try {
      n = await runCount(
        targets,
        this.rewriteQuery(
          body.query,
          targets.map((t) => t.name),
        ),
        this.now(),
        limits.defaultSearchTimeoutMs,
      )
    } finally {
      this.lastPlan = undefined
    }
    return { count: n, _shards: { total: Math.max(1, targets.length), successful: Math.max(1, targets.length), skipped: 0, failed: 0 } }
  }

  // -------------------------------------------------------------------------------------------
  // Point in time

  /** What a PIT sees of one index: rows at or before its watermark, and kept older versions. */
  private pitRows(t: PitMeta['targets'][number]): Iterable<Row> {
    // An index deleted (or replaced under the same name) since: nothing left to see.
    if (this.cat.byIx.get(t.ix)?.uuid !== t.uuid) return []
    const [lo, hi] = ridRange(t.ix)
    return this.paged(
      (after) => {
        const from = Math.max(lo, (after ?? lo - 1) + 1)
        return {
          sql:
            `SELECT ${ROW_COLS} FROM docs WHERE rid BETWEEN ? AND ? AND seq <= ? ` +
            `UNION ALL SELECT ${ROW_COLS} FROM pit_history WHERE rid BETWEEN ? AND ? AND seq <= ? AND gone > ? ORDER BY rid`,
          params: [from, hi, t.seq, from, hi, t.seq, t.seq],
        }
      },
      (r) => r.rid,
    )
  }

  /** `keep_alive` within `point_in_time.max_keep_alive`, with OpenSearch's error. */
  private pitKeepAlive(value: string, limits: SearchLimits): number {
    const ms = parseTimeValue(value, 'keep_alive')
    if (ms > limits.maxPitKeepAliveMs)
      throw new IllegalArgument(
        `Keep alive for request (${value}) is too large. It must be less than (${formatTime(limits.maxPitKeepAliveMs)}). This limit can be set by changing the [point_in_time.max_keep_alive] cluster level setting.`,
      )
    return ms
  }

  private expirePits(): void {
    const now = this.now()
    let removed = false
    for (const [id, p] of this.pits)
      if (p.expires <= now) {
        this.pits.delete(id)
        removed = true
      }
    if (removed) this.pruneHistory()
  }

  /** Drop the kept versions no open PIT can see any more. */
  private pruneHistory(): void {
    if (this.pits.size === 0) {
      this.db.run('DELETE FROM pit_history')
      return
    }
    const windows = [...this.pits.values()].flatMap((p) =>
      p.targets.map((t) => {
        const [lo, hi] = ridRange(t.ix)
        return { lo, hi, seq: t.seq }
      }),
    )
    this.db
      .query(
        `DELETE FROM pit_history WHERE NOT EXISTS (SELECT 1 FROM json_each(?) w WHERE pit_history.rid BETWEEN w.value ->> 'lo' AND w.value ->> 'hi' AND pit_history.seq <= w.value ->> 'seq' AND pit_history.gone > w.value ->> 'seq')`,
      )
      .run(JSON.stringify(windows))
  }

  private pit(id: string): PitMeta {
    this.expirePits()
    const p = this.pits.get(id)
    if (!p) throw new SearchContextMissing(id)
    return p
  }

  async createPit(params: CreatePitParams): Promise<CreatePitResponse> {
    this.assertOpen()
    this.expirePits()
    const limits = this.limits()
    const keepAlive = this.pitKeepAlive(params.keep_alive ?? '', limits)
    if (this.pits.size >= limits.maxOpenPitContext)
      throw new StoreError(
        'rejected_execution_exception',
        429,
        `Trying to create too many Point In Time contexts. Must be less than or equal to: [${limits.maxOpenPitContext}]. This limit can be set by changing the [search.max_open_pit_context] setting.`,
      )
    const names = [...this.resolveTargets(params.index, { ...params, forbidClosed: true }).keys()]
    const id = randomId(48)
    const created = this.now()
    const pit: PitMeta = {
      id,
      created,
      keepAlive,
      expires: created + keepAlive,
      targets: names.map((n) => {
        const m = this.indexMeta(n)
        return { ix: m.ix, uuid: m.uuid, name: n, specs: new Map(m.specs), seq: m.seq }
      }),
    }
    this.pits.set(id, pit)
    return { pit_id: id, _shards: { ...SHARDS_ONE, total: names.length, successful: names.length }, creation_time: created }
  }

  async deletePit(params: { body: { pit_id: string | string[] } }): Promise<DeletePitResponse> {
    this.assertOpen()
    this.expirePits()
    const ids = Array.isArray(params.body?.pit_id) ? params.body.pit_id : [params.body?.pit_id]
    const pits = ids.map((id) => ({ pit_id: String(id), successful: typeof id === 'string' && this.pits.delete(id) }))
    if (pits.every((p) => !p.successful)) throw new SearchContextMissing(ids.join(','))
    this.pruneHistory()
    return { pits }
  }

  async deleteAllPits(): Promise<DeletePitResponse> {
    this.assertOpen()
    const pits = [...this.pits.keys()].map((pit_id) => ({ pit_id, successful: true }))
    this.pits.clear()
    this.pruneHistory()
    return { pits }
  }

  async getAllPits(): Promise<{ pits: PitInfo[] }> {
    this.assertOpen()
    this.expirePits()
    return {
      pits: [...this.pits.values()].map((p) => ({
        pit_id: p.id,
        creation_time: p.created,
        keep_alive: p.keepAlive,
        indices: p.targets.map((t) => t.name),
      })),
    }
  }

  // -------------------------------------------------------------------------------------------
  // Lifecycle (ISM) policies: documents of a hidden service index (./ism.ts)

  async putLifecyclePolicy(params: PutLifecyclePolicyParams): Promise<PutIsmPolicyResponse> {
    return putPolicy(this, params, this.now())
  }

  async getLifecyclePolicy(params: { id: string }): Promise<IsmPolicyResponse> {
    return getPolicy(this, params.id)
  }

  async getLifecyclePolicies(params: { from?: number; size?: number } = {}): Promise<IsmPoliciesResponse> {
    return getPolicies(this, params)
  }

  async deleteLifecyclePolicy(params: { id: string }): Promise<WriteResponse> {
    return deletePolicy(this, params.id)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.db.run('DELETE FROM pit_history')
    this.seal()
    this.db.close()
  }
}

// ---------------------------------------------------------------------------------------------

export function backingIndexName(stream: string, generation: number): string {
  return `.ds-${stream}-${String(generation).padStart(6, '0')}`
}

/** An update answers the document it left under `get` when `_source` was asked for. */
function withGet(r: WriteResponse, wanted: unknown, source: Record<string, unknown>): WriteResponse {
  if (wanted === undefined || wanted === false || wanted === 'false') return r
  const filtered = filterSource(source, sourceSpec(wanted as SourceFilter))
  return {
    ...r,
    get: { _seq_no: r._seq_no, _primary_term: r._primary_term, found: true, ...(filtered !== undefined ? { _source: filtered } : {}) },
  }
}

const listOf = (v: string | string[]): string[] => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean)

function validateAliasName(alias: string): void {
  if (alias === '' || hasWildcard(alias) || alias.startsWith('_'))
    throw new StoreError(
      'invalid_alias_name_exception',
      400,
      `Invalid alias name [${alias}]: must not contain wildcards or start with '_'`,
      { index: alias },
    )
}

function matchesAliasPatterns(alias: string, patterns: string[]): boolean {
  let included = false
  for (const p of patterns) {
    if (p.startsWith('-')) {
      if (wildcardToRegExp(p.slice(1)).test(alias)) included = false
    } else if (wildcardToRegExp(p).test(alias)) included = true
  }
  return included
}

function stripIndexPrefix(settings: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(settings)) out[k.startsWith('index.') ? k.slice(6) : k] = v
  return out
}

function bulkError(e: StoreError): BulkItemResult['error'] {
  const { root_cause: _, ...rest } = e.toOpenSearch()
  return rest as BulkItemResult['error']
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

const VALUES3 = Array.from({ length: 101 }, (_, n) => Array(n).fill('(?, ?, ?)').join(', '))

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** Milliseconds as OpenSearch prints a TimeValue (`24h`, `5m`, `1.5s`). */
function formatTime(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1000],
  ] as const)
    if (ms >= size) return `${Number((ms / size).toFixed(1))}${unit}`
  return `${ms}ms`
}

function randomId(chars: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(chars))
  let s = ''
  for (const b of bytes) s += B64[b & 63]
  return s
}

let lastMs = 0
let counter = 0
const pool = new Uint8Array(4096)
let poolAt = pool.length

/**
 * 20-character base64url ids like OpenSearch's auto-generated ones: 48 bits of time, a 24-bit
 * sequence and 48 random bits, so ids from one process are unique and roughly time-ordered.
 */
export function autoId(): string {
  const ms = Date.now()
  if (ms !== lastMs) {
    lastMs = ms
    counter = 0
  } else counter = (counter + 1) & 0xffffff
  if (poolAt + 6 > pool.length) {
    crypto.getRandomValues(pool)
    poolAt = 0
  }
  const b = new Uint8Array(15)
  let t = ms
  for (let i = 5; i >= 0; i--) {
    b[i] = t % 256
    t = Math.floor(t / 256)
  }
  b[6] = counter >> 16
  b[7] = (counter >> 8) & 255
  b[8] = counter & 255
  b.set(pool.subarray(poolAt, poolAt + 6), 9)
  poolAt += 6
  return Buffer.from(b).toString('base64url')
}

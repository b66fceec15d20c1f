/**
 * The embedded Store: a single-node index store on bun:sqlite (WAL). Documents are rows of
 * `docs`; keyword/numeric/date/boolean values also go to the `fv` B-tree so selective queries
 * read only candidate rows, which the one evaluator then checks (results are exact).
 *
 * This class is the `Store` facade: each method hands the transaction core (core.ts) to the
 * module of its concern, where the work is done:
 *   indices.ts        create/delete/open/close/get, mappings, settings, stats, refresh, flush
 *   aliases.ts        `_aliases` and `_alias` (alias-entries.ts: one alias on one index)
 *   templates/        the three kinds of templates and what a new index takes from them
 *   data-streams.ts   data streams
 *   documents.ts      get, and which index a document operation addresses
 *   doc-write.ts      index/create/update/delete of one document    bulk.ts   `_bulk`
 *   search-request.ts search, count, explain (search-rows.ts: how rows are read; plan.ts: which;
 *                     index-caches.ts: what is kept until an index's next write; request-cache.ts)
 *   pits.ts           points in time         ism.ts            lifecycle policies
 */
import type { Database } from 'bun:sqlite'
import type {
  Acknowledged,
  AliasDefinition,
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
  ComponentTemplateBody,
  ComponentTemplateEntry,
  LegacyTemplateBody,
  SimulatedTemplate,
  IsmPoliciesResponse,
  IsmPolicyResponse,
  Mappings,
  OpenIndexResponse,
  PitInfo,
  PutIsmPolicyResponse,
  PutLifecyclePolicyParams,
  ResolveOptions,
  SearchParams,
  SearchResponse,
  ShardsInfo,
  Store,
  SeqSource,
  StoredBatch,
  UpdateAliasesBody,
  UpdateParams,
  WriteResponse,
} from '../port'
import { IndexClosed } from '../errors'
import { getAlias, updateAliases } from './aliases'
import { bulk } from './bulk'
import { type EmbeddedStoreOptions, StoreCore } from './core'
import { createDataStream, deleteDataStream, getDataStream, nextBackingIndex, rolloverDataStream } from './data-streams'
import { createDocument, deleteDocument, indexDocument, updateDocument } from './doc-write'
import { getDocument } from './documents'
import * as indices from './indices'
import { deletePolicy, getPolicies, getPolicy, putPolicy } from '../lifecycle-policies'
import type { MigrationResult } from './migrations'
import { createPit, deleteAllPits, deletePit, getAllPits } from './pits'
import { idOf } from './request-cache'
import { count, explain, search } from './search-request'
import { readStored } from './seq-read'
import { deleteComponentTemplate, getComponentTemplate, putComponentTemplate } from './templates/component-templates'
import { deleteIndexTemplate, getIndexTemplate, putIndexTemplate } from './templates/index-templates'
import { deleteTemplate, getTemplate, putTemplate } from './templates/legacy-templates'
import { simulateIndexTemplate, simulateTemplate } from './templates/simulate'

export { type EmbeddedStoreOptions } from './core'
export { autoId } from './ids'
export { OPENSEARCH_VERSION_ID } from './indices'
export { backingIndexName } from './data-streams'
export { DEFAULT_SEARCH_LIMITS, type SearchLimits } from './search-limits'

type IndexParamsOf = { index: string | string[] } & ResolveOptions
type IndexFilter = { index?: string | string[] } & ResolveOptions
/** What a write mark covers: every index the expression names, hidden or closed, none required. */
const MARK_RESOLVE: ResolveOptions = { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true }

export class EmbeddedStore implements Store {
  private readonly core: StoreCore
  /** The SQLite handle (tests inspect and break it). */
  private readonly db: Database
  /** What opening did to the schema (for the start-up log). */
  readonly migration: MigrationResult

  constructor(path: string, options: EmbeddedStoreOptions = {}) {
    this.core = new StoreCore(path, options)
    this.db = this.core.db
    this.migration = this.core.migration
  }

  async clusterUuid(): Promise<string> {
    return this.core.clusterUuid
  }

  /**
   * The SQLite query plan of the candidate lookup for `query` on `index` (for tests and
   * diagnostics); with `afterSeq`, of the `_seq_no`-ordered read after that seq_no.
   */
  explain(index: string, query: unknown, afterSeq?: number): string[] {
    return explain(this.core, index, query, afterSeq)
  }

  async resolve(expression: string | string[] | undefined, options?: ResolveOptions): Promise<string[]> {
    return [...this.core.resolveTargets(expression, options).keys()]
  }

  writeMark(expression: string | string[]): string {
    // IndexMeta.writes moves with every document write, never back (a rolled-back one included);
    // it counts from the index object's load, so the object is part of the mark (an index
    // deleted and made again, or loaded again, is another object).
    const marks: string[] = []
    for (const name of this.core.resolveTargets(expression, MARK_RESOLVE).keys()) {
      const meta = this.core.indexMeta(name)
      marks.push(`${idOf(meta)}:${meta.writes ?? 0}${meta.closed ? ':closed' : ''}`)
    }
    return marks.join(',')
  }

  // Indices

  async createIndex(params: { index: string; body?: CreateIndexBody }): Promise<CreateIndexResponse> {
    return indices.createIndex(this.core, params)
  }

  async deleteIndex(params: IndexParamsOf): Promise<Acknowledged> {
    return indices.deleteIndex(this.core, params)
  }

  async closeIndex(params: IndexParamsOf): Promise<CloseIndexResponse> {
    return indices.closeIndex(this.core, params)
  }

  async openIndex(params: IndexParamsOf): Promise<OpenIndexResponse> {
    return indices.openIndex(this.core, params)
  }

  async existsIndex(params: IndexParamsOf): Promise<boolean> {
    return indices.existsIndex(this.core, params)
  }

  async getIndex(params: IndexParamsOf): Promise<Record<string, IndexInfo>> {
    return indices.getIndex(this.core, params)
  }

  async putMapping(params: { index: string | string[]; body: Mappings } & ResolveOptions): Promise<Acknowledged> {
    return indices.putMapping(this.core, params)
  }

  async getMapping(params: IndexFilter = {}): Promise<Record<string, { mappings: Mappings }>> {
    return indices.getMapping(this.core, params)
  }

  async getSettings(params: IndexFilter = {}): Promise<Record<string, { settings: { index: Record<string, unknown> } }>> {
    return indices.getSettings(this.core, params)
  }

  async putSettings(
    params: { index: string | string[]; body: IndexSettings; preserve_existing?: boolean } & ResolveOptions,
  ): Promise<Acknowledged> {
    return indices.putSettings(this.core, params)
  }

  async stats(params: IndexFilter = {}): Promise<IndexStats[]> {
    return indices.stats(this.core, params)
  }

  async refresh(params: IndexFilter = {}): Promise<{ _shards: ShardsInfo }> {
    return indices.refresh(this.core, params)
  }

  async flush(params: IndexFilter = {}): Promise<{ _shards: ShardsInfo }> {
    return indices.flush(this.core, params)
  }

  // Templates, aliases, data streams

  async putIndexTemplate(params: { name: string; body: IndexTemplateBody; create?: boolean }): Promise<Acknowledged> {
    return putIndexTemplate(this.core, params)
  }

  async getIndexTemplate(params: { name?: string } = {}): Promise<{ index_templates: IndexTemplateEntry[] }> {
    return getIndexTemplate(this.core, params)
  }

  async deleteIndexTemplate(params: { name: string }): Promise<Acknowledged> {
    return deleteIndexTemplate(this.core, params)
  }

  async simulateIndexTemplate(params: { index: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate | Record<string, never>> {
    return simulateIndexTemplate(this.core, params)
  }

  async simulateTemplate(params: { name?: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate> {
    return simulateTemplate(this.core, params)
  }

  async putComponentTemplate(params: { name: string; body: ComponentTemplateBody; create?: boolean }): Promise<Acknowledged> {
    return putComponentTemplate(this.core, params)
  }

  async getComponentTemplate(params: { name?: string } = {}): Promise<{ component_templates: ComponentTemplateEntry[] }> {
    return getComponentTemplate(this.core, params)
  }

  async deleteComponentTemplate(params: { name: string }): Promise<Acknowledged> {
    return deleteComponentTemplate(this.core, params)
  }

  async putTemplate(params: { name: string; body: LegacyTemplateBody; create?: boolean; order?: number }): Promise<Acknowledged> {
    return putTemplate(this.core, params)
  }

  async getTemplate(params: { name?: string } = {}): Promise<Record<string, LegacyTemplateBody>> {
    return getTemplate(this.core, params)
  }

  async deleteTemplate(params: { name: string }): Promise<Acknowledged> {
    return deleteTemplate(this.core, params)
  }

  async updateAliases(params: { body: UpdateAliasesBody }): Promise<Acknowledged> {
    return updateAliases(this.core, params)
  }

  async getAlias(
    params: { index?: string | string[]; name?: string | string[] } & ResolveOptions = {},
  ): Promise<Record<string, { aliases: Record<string, AliasDefinition> }>> {
    return getAlias(this.core, params)
  }

  async createDataStream(params: { name: string }): Promise<Acknowledged> {
    return createDataStream(this.core, params)
  }

  async getDataStream(params: { name?: string | string[] } = {}): Promise<{ data_streams: DataStreamInfo[] }> {
    return getDataStream(this.core, params)
  }

  async deleteDataStream(params: { name: string | string[] }): Promise<Acknowledged> {
    return deleteDataStream(this.core, params)
  }

  async rolloverDataStream(params: { name: string; dry_run?: boolean }): Promise<{ old_index: string; new_index: string }> {
    return params.dry_run ? nextBackingIndex(this.core, params.name) : rolloverDataStream(this.core, params)
  }

  // Documents

  async get(params: GetParams): Promise<GetResponse> {
    return getDocument(this.core, params)
  }

  async index(params: IndexParams): Promise<WriteResponse> {
    return indexDocument(this.core, params)
  }

  async create(params: IndexParams & { id: string }): Promise<WriteResponse> {
    return createDocument(this.core, params)
  }

  async update(params: UpdateParams): Promise<WriteResponse> {
    return updateDocument(this.core, params)
  }

  async delete(params: DeleteParams): Promise<WriteResponse> {
    return deleteDocument(this.core, params)
  }

  async bulk(params: BulkParams): Promise<BulkResponse> {
    return bulk(this.core, params)
  }

  // Search and points in time

  async search(params: SearchParams): Promise<SearchResponse> {
    return search(this.core, params)
  }

  async readSeq(params: { index: string; after: number; size: number; maxChars: number }): Promise<StoredBatch> {
    return readStored(this.core.db, this.readableIndex(params.index).ix, params.after, params.size, params.maxChars)
  }

  async seqSource(index: string): Promise<SeqSource | undefined> {
    const { ix } = this.readableIndex(index)
    // An in-memory database has no file another connection could open.
    const file = this.core.db.filename
    return file && file !== ':memory:' ? { file, ix } : undefined
  }

  /** A concrete index that can be read by `_seq_no`: not found and closed fail as a search does. */
  private readableIndex(name: string) {
    const meta = this.core.indexMeta(name)
    if (meta.closed) throw new IndexClosed(meta.name, meta.uuid)
    return meta
  }

  async count(params: CountParams): Promise<CountResponse> {
    return count(this.core, params)
  }

  async createPit(params: CreatePitParams): Promise<CreatePitResponse> {
    return createPit(this.core, params)
  }

  async deletePit(params: { body: { pit_id: string | string[] } }): Promise<DeletePitResponse> {
    return deletePit(this.core, params)
  }

  async deleteAllPits(): Promise<DeletePitResponse> {
    return deleteAllPits(this.core)
  }

  async getAllPits(): Promise<{ pits: PitInfo[] }> {
    return getAllPits(this.core)
  }

  // Lifecycle (ISM) policies: documents of a hidden service index (./ism.ts)

  async putLifecyclePolicy(params: PutLifecyclePolicyParams): Promise<PutIsmPolicyResponse> {
    return putPolicy(this, params, this.core.now())
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
    this.core.close()
  }
}

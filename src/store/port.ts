/**
 * The Store port: every feature reads and writes indices through this interface, whose semantics
 * and shapes are OpenSearch's. Parameters mirror `@opensearch-project/opensearch` request params
 * (`{index, id, body, if_seq_no, ...}`) and responses are OpenSearch REST bodies, so the platform
 * adapter is a thin mapping and the index API only serialises what it gets back.
 *
 * Failures throw the typed errors of `./errors`. Not-found documents are answers, not errors,
 * exactly like OpenSearch: `get` returns `{found: false}` and `delete` returns `result: "not_found"`.
 */
import { Type as T, type Static } from '@sinclair/typebox'

// ---------------------------------------------------------------------------------------------
// Validated input (TypeBox). Deep structures (queries, mappings) stay open records: the store
// validates them itself and answers with OpenSearch's own parsing errors.

const Json = T.Record(T.String(), T.Unknown())

/** The field types a mapping may declare (the embedded store indexes a subset, stores the rest). */
export const FIELD_TYPES = [
  'keyword',
  'text',
  'match_only_text',
  'date',
  'date_nanos',
  'long',
  'integer',
  'short',
  'byte',
  'double',
  'float',
  'half_float',
  'scaled_float',
  'unsigned_long',
  'boolean',
  'ip',
  'object',
  'nested',
  'flat_object',
  'wildcard',
  'constant_keyword',
  'binary',
  'geo_point',
  'alias',
  'knn_vector',
  'token_count',
] as const

export const FieldType = T.Union(FIELD_TYPES.map((name) => T.Literal(name)))
export type FieldType = Static<typeof FieldType>

export const Dynamic = T.Union([
  T.Boolean(),
  T.Literal('true'),
  T.Literal('false'),
  T.Literal('strict'),
  // New fields only through a matching dynamic template; others refused / ignored.
  T.Literal('strict_allow_templates'),
  T.Literal('false_allow_templates'),
])
export type Dynamic = Static<typeof Dynamic>

/** One property of a mapping; sub-objects recurse through `properties`, multi-fields through `fields`. */
export const FieldMapping = T.Recursive((Self) =>
  T.Object(
    {
      type: T.Optional(T.String()),
      properties: T.Optional(T.Record(T.String(), Self)),
      fields: T.Optional(T.Record(T.String(), Self)),
      dynamic: T.Optional(Dynamic),
      enabled: T.Optional(T.Boolean()),
      ignore_above: T.Optional(T.Integer()),
      ignore_malformed: T.Optional(T.Boolean()),
      format: T.Optional(T.String()),
      index: T.Optional(T.Boolean()),
      store: T.Optional(T.Boolean()),
    },
    { additionalProperties: true },
  ),
)
export type FieldMapping = Static<typeof FieldMapping>

export const Mappings = T.Object(
  {
    dynamic: T.Optional(Dynamic),
    properties: T.Optional(T.Record(T.String(), FieldMapping)),
    date_detection: T.Optional(T.Boolean()),
    numeric_detection: T.Optional(T.Boolean()),
    /** `[{name: {match, unmatch, path_match, path_unmatch, match_mapping_type, mapping}}]`, first match wins. */
    dynamic_templates: T.Optional(T.Array(T.Record(T.String(), Json))),
    _meta: T.Optional(Json),
    /** `{enabled: false}`: no source is kept (source-filter.ts `sourceDisabled`). */
    _source: T.Optional(T.Object({ enabled: T.Optional(T.Union([T.Boolean(), T.String()])) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
)
export type Mappings = Static<typeof Mappings>

/** Settings as sent: nested (`{index: {hidden: true}}`), flat (`{"index.hidden": true}`) or bare (`{hidden: true}`). */
export const IndexSettings = Json
export type IndexSettings = Static<typeof IndexSettings>

export const AliasDefinition = T.Object(
  {
    filter: T.Optional(Json),
    routing: T.Optional(T.String()),
    index_routing: T.Optional(T.String()),
    search_routing: T.Optional(T.String()),
    is_write_index: T.Optional(T.Boolean()),
    is_hidden: T.Optional(T.Boolean()),
  },
  { additionalProperties: false },
)
export type AliasDefinition = Static<typeof AliasDefinition>

export const CreateIndexBody = T.Object(
  {
    settings: T.Optional(IndexSettings),
    mappings: T.Optional(Mappings),
    aliases: T.Optional(T.Record(T.String(), AliasDefinition)),
  },
  { additionalProperties: false },
)
export type CreateIndexBody = Static<typeof CreateIndexBody>

export const IndexTemplateBody = T.Object(
  {
    index_patterns: T.Union([T.String(), T.Array(T.String())]),
    priority: T.Optional(T.Integer({ minimum: 0 })),
    version: T.Optional(T.Integer()),
    composed_of: T.Optional(T.Array(T.String())),
    template: T.Optional(CreateIndexBody),
    data_stream: T.Optional(T.Object({ timestamp_field: T.Optional(T.Object({ name: T.String() })) })),
    _meta: T.Optional(Json),
  },
  { additionalProperties: false },
)
export type IndexTemplateBody = Static<typeof IndexTemplateBody>

/** `PUT _component_template/<name>`: settings, mappings and aliases that index templates name in `composed_of`. */
export const ComponentTemplateBody = T.Object(
  {
    template: CreateIndexBody,
    version: T.Optional(T.Integer()),
    _meta: T.Optional(Json),
  },
  { additionalProperties: false },
)
export type ComponentTemplateBody = Static<typeof ComponentTemplateBody>

/** `PUT _template/<name>`: a legacy (v1) index template; every matching one applies, by ascending `order`. */
export const LegacyTemplateBody = T.Object(
  {
    index_patterns: T.Union([T.String(), T.Array(T.String())]),
    order: T.Optional(T.Integer()),
    version: T.Optional(T.Integer()),
    ...CreateIndexBody.properties,
  },
  { additionalProperties: false },
)
export type LegacyTemplateBody = Static<typeof LegacyTemplateBody>

const AliasActionTarget = T.Object(
  {
    index: T.Optional(T.String()),
    indices: T.Optional(T.Array(T.String())),
    alias: T.Optional(T.String()),
    aliases: T.Optional(T.Array(T.String())),
    ...AliasDefinition.properties,
    must_exist: T.Optional(T.Boolean()),
  },
  { additionalProperties: false },
)
export const AliasAction = T.Union([
  T.Object({ add: AliasActionTarget }),
  T.Object({ remove: AliasActionTarget }),
  T.Object({ remove_index: T.Object({ index: T.Optional(T.String()), indices: T.Optional(T.Array(T.String())) }) }),
])
export type AliasAction = Static<typeof AliasAction>

export const UpdateAliasesBody = T.Object({ actions: T.Array(AliasAction) })
export type UpdateAliasesBody = Static<typeof UpdateAliasesBody>

/** A query-DSL node, e.g. `{term: {user: "kimchy"}}`. Parsed by `./query`, which throws `ParsingError`. */
export type Query = Record<string, unknown>

export const SourceFilter = T.Union([
  T.Boolean(),
  T.String(),
  T.Array(T.String()),
  T.Object(
    {
      includes: T.Optional(T.Union([T.String(), T.Array(T.String())])),
      excludes: T.Optional(T.Union([T.String(), T.Array(T.String())])),
      include: T.Optional(T.Union([T.String(), T.Array(T.String())])),
      exclude: T.Optional(T.Union([T.String(), T.Array(T.String())])),
    },
    { additionalProperties: false },
  ),
])
export type SourceFilter = Static<typeof SourceFilter>

export const SortOrder = T.Union([T.Literal('asc'), T.Literal('desc')])
/** `"field"`, `{"field": "desc"}`, `{"field": {"order", "missing", "unmapped_type", "mode", "nested"}}`, or a list of them. */
export const SortClause = T.Union([
  T.String(),
  T.Record(
    T.String(),
    T.Union([
      SortOrder,
      T.Object(
        {
          order: T.Optional(SortOrder),
          missing: T.Optional(T.Union([T.String(), T.Number()])),
          unmapped_type: T.Optional(T.String()),
          mode: T.Optional(T.String()),
          /** A nested documents' field: their path, and the query those whose values count match. */
          nested: T.Optional(T.Object({ path: T.Optional(T.String()), filter: T.Optional(T.Unknown()) }, { additionalProperties: true })),
        },
        { additionalProperties: true },
      ),
    ]),
  ),
])
export type SortClause = Static<typeof SortClause>

export const SearchBody = T.Object(
  {
    query: T.Optional(Json),
    from: T.Optional(T.Integer({ minimum: 0 })),
    size: T.Optional(T.Integer({ minimum: 0 })),
    sort: T.Optional(T.Union([SortClause, T.Array(SortClause)])),
    search_after: T.Optional(T.Array(T.Unknown())),
    track_total_hits: T.Optional(T.Union([T.Boolean(), T.Integer({ minimum: 0 })])),
    _source: T.Optional(SourceFilter),
    seq_no_primary_term: T.Optional(T.Boolean()),
    version: T.Optional(T.Boolean()),
    aggs: T.Optional(Json),
    aggregations: T.Optional(Json),
    pit: T.Optional(T.Object({ id: T.String(), keep_alive: T.Optional(T.String()) })),
    track_scores: T.Optional(T.Boolean()),
    timeout: T.Optional(T.String()),
    terminate_after: T.Optional(T.Integer()),
    stored_fields: T.Optional(T.Union([T.String(), T.Array(T.String())])),
    /** Stats groups the search is also counted under (`_stats?groups=`). */
    stats: T.Optional(T.Array(T.String())),
    /** A score factor per concrete index (the REST layer resolves names, aliases and wildcards). */
    indices_boost: T.Optional(T.Array(T.Record(T.String(), T.Number()))),
  },
  { additionalProperties: true },
)
export type SearchBody = Static<typeof SearchBody>

export const UpdateBody = T.Object(
  {
    doc: T.Optional(Json),
    upsert: T.Optional(Json),
    doc_as_upsert: T.Optional(T.Boolean()),
    detect_noop: T.Optional(T.Boolean()),
    _source: T.Optional(SourceFilter),
    script: T.Optional(T.Unknown()),
    /** A missing document's `upsert` goes through the script too. */
    scripted_upsert: T.Optional(T.Boolean()),
  },
  { additionalProperties: false },
)
export type UpdateBody = Static<typeof UpdateBody>

// Lifecycle (ISM) policies, in the shapes of OpenSearch's index-management plugin
// (`_plugins/_ism/policies/<id>`). States, actions and transitions stay open records: what an
// action means is the lifecycle runner's business (ISM on the platform, the retention job here).

export const IsmTemplate = T.Object(
  {
    index_patterns: T.Union([T.String(), T.Array(T.String())]),
    priority: T.Optional(T.Integer({ minimum: 0 })),
    /** Epoch millis; ISM manages only indices created after it. */
    last_updated_time: T.Optional(T.Integer()),
  },
  { additionalProperties: false },
)
export type IsmTemplate = Static<typeof IsmTemplate>

export const IsmTransition = T.Object(
  {
    state_name: T.String(),
    /** `{min_index_age: "7d"}`, `{min_doc_count: n}`, `{min_size: "50gb"}`, `{cron: ...}`; none = at once. */
    conditions: T.Optional(Json),
  },
  { additionalProperties: false },
)
export type IsmTransition = Static<typeof IsmTransition>

export const IsmState = T.Object(
  {
    name: T.String(),
    /** Each action is `{<type>: {...config}, retry?, timeout?}`, e.g. `{delete: {}}`. */
    actions: T.Optional(T.Array(Json)),
    transitions: T.Optional(T.Array(IsmTransition)),
  },
  { additionalProperties: false },
)
export type IsmState = Static<typeof IsmState>

/** The policy object as ISM answers it (`policy_id`, `last_updated_time` and `schema_version` filled in). */
export const IsmPolicy = T.Object(
  {
    policy_id: T.Optional(T.String()),
    description: T.String(),
    last_updated_time: T.Optional(T.Integer()),
    schema_version: T.Optional(T.Integer()),
    error_notification: T.Optional(T.Union([T.Null(), Json])),
    default_state: T.String(),
    states: T.Array(IsmState),
    ism_template: T.Optional(T.Union([T.Null(), IsmTemplate, T.Array(IsmTemplate)])),
  },
  { additionalProperties: false },
)
export type IsmPolicy = Static<typeof IsmPolicy>

/** The body of `PUT _plugins/_ism/policies/<id>`. */
export const IsmPolicyBody = T.Object({ policy: IsmPolicy }, { additionalProperties: false })
export type IsmPolicyBody = Static<typeof IsmPolicyBody>

// ---------------------------------------------------------------------------------------------
// Request parameters (client-shaped)

export type ExpandWildcards = 'open' | 'closed' | 'hidden' | 'all' | 'none'

/** How an index expression (`a,b*,-bc`, aliases, data streams) resolves to concrete indices. */
export interface ResolveOptions {
  expand_wildcards?: ExpandWildcards | ExpandWildcards[] | string
  /** Missing concrete names are skipped instead of failing with `index_not_found_exception`. */
  ignore_unavailable?: boolean
  /** A wildcard (or `_all`) that matches nothing is fine; default true. */
  allow_no_indices?: boolean
}

/** `true`, `false` or `wait_for`; the embedded store is always current, so all are equivalent. */
export type Refresh = boolean | 'true' | 'false' | 'wait_for' | ''

export type Source = Record<string, unknown>
/** A document as callers hand it in: any JSON object (interfaces included, hence `object`). */
export type DocumentBody = object

export interface WriteParams {
  index: string
  id?: string
  refresh?: Refresh
  if_seq_no?: number
  if_primary_term?: number
  /** `external`/`external_gte` take the caller's `version`; default `internal`. */
  version?: number
  version_type?: 'internal' | 'external' | 'external_gte'
  timeout?: string
}

export interface IndexParams extends WriteParams {
  body: DocumentBody
  /** `create` fails with a version conflict if the id exists; data streams accept only `create`. */
  op_type?: 'index' | 'create'
}

export interface UpdateParams extends WriteParams {
  id: string
  body: UpdateBody
  retry_on_conflict?: number
}

export interface DeleteParams extends WriteParams {
  id: string
}

export interface GetParams {
  index: string
  id: string
  _source?: SourceFilter
  _source_includes?: string | string[]
  _source_excludes?: string | string[]
  /**
   * Fields mapped with `store: true` to answer under `fields`; naming any of them leaves `_source`
   * out unless `_source` is asked for (or `_source` is one of the names), as in OpenSearch.
   */
  stored_fields?: string | string[]
  realtime?: boolean
  refresh?: Refresh
}

/**
 * Bulk body: the NDJSON lines already parsed, as the client takes them:
 * `[{index: {_index, _id}}, {...doc}, {delete: {_id}}, {update: {_id}}, {doc: {...}}, ...]`.
 */
export type BulkLine = Record<string, unknown>
export interface BulkParams {
  index?: string
  body: BulkLine[]
  refresh?: Refresh
  /**
   * Not a REST parameter. `async` acknowledges the bulk once written, before it is made durable,
   * as on an index with `index.translog.durability: async` (it survives a killed process, not a
   * power loss); a later durable write of the same node makes it durable too, since the log is one
   * sequence. For writes that a later durable write depends on: a detector's findings, then its
   * checkpoint. `deferred` goes further: the bulk is answered before it is even committed (this
   * node's searches see it at once); it commits with the node's next write, at the latest a
   * quarter of a second later, and a killed process may lose it until then. The embedded store
   * commits many deferred bulks at once (each commit writes every page it changed); one failing as
   * a whole (a malformed line, a failed commit) takes back the deferred bulks not yet committed,
   * and the node's next write fails, telling so.
   */
  durability?: 'async' | 'deferred'
}

export interface SearchParams extends ResolveOptions {
  /** Index expression; omitted or `_all` means every (non-hidden) index. Must be omitted with `pit`. */
  index?: string | string[]
  body?: SearchBody
  /** Answer `hits.total` as a plain number, like `?rest_total_hits_as_int=true`. */
  rest_total_hits_as_int?: boolean
  /**
   * The sources of indices whose mapping disables `_source` too, for the index API's features
   * that OpenSearch reads from doc values (docvalue_fields, collapse); it hides them again. Set by
   * this code only, never from a request; a platform store ignores it.
   */
  read_disabled_source?: boolean
}

export interface CountParams extends ResolveOptions {
  index?: string | string[]
  body?: { query?: Query }
}

export interface CreatePitParams extends ResolveOptions {
  index: string | string[]
  keep_alive: string
}

// ---------------------------------------------------------------------------------------------
// Responses (OpenSearch REST bodies)

export interface ShardsInfo {
  total: number
  successful: number
  skipped?: number
  failed: number
}

export interface Acknowledged {
  acknowledged: boolean
}

export interface CreateIndexResponse extends Acknowledged {
  shards_acknowledged: boolean
  index: string
}

export type WriteResult = 'created' | 'updated' | 'deleted' | 'not_found' | 'noop'

export interface WriteResponse {
  _index: string
  _id: string
  _version: number
  result: WriteResult
  _shards: ShardsInfo
  _seq_no: number
  _primary_term: number
  forced_refresh?: boolean
  /** Updates asked for `_source` answer the resulting document here. */
  get?: { _seq_no: number; _primary_term: number; found: true; _source?: Source }
}

export type GetResponse =
  | {
      _index: string
      _id: string
      _version: number
      _seq_no: number
      _primary_term: number
      found: true
      _source?: Source
      /** Stored fields asked for with `stored_fields`, each as a list of values. */
      fields?: Record<string, unknown[]>
    }
  | { _index: string; _id: string; found: false }

export interface BulkItemResult {
  _index: string
  _id: string | null
  _version?: number
  result?: WriteResult
  _shards?: ShardsInfo
  _seq_no?: number
  _primary_term?: number
  get?: WriteResponse['get']
  status: number
  error?: ReturnType<import('./errors').StoreError['toOpenSearch']>
}

export interface BulkResponse {
  took: number
  errors: boolean
  items: Array<Partial<Record<'index' | 'create' | 'update' | 'delete', BulkItemResult>>>
}

/**
 * Documents as stored, in `_seq_no` order, with their sources as the stored JSON texts: a worker
 * thread takes strings as they are, and parses them there.
 */
export interface StoredBatch {
  ids: string[]
  seqNos: number[]
  sources: string[]
}

/** Where a worker thread of this process reads an index by `_seq_no` itself: a store file and the index in it. */
export interface SeqSource {
  file: string
  ix: number
}

export interface SearchHit {
  _index: string
  _id: string
  _score: number | null
  /** Fields some value of which was skipped as malformed (`ignore_malformed`). */
  _ignored?: string[]
  _source?: Source
  _version?: number
  _seq_no?: number
  _primary_term?: number
  sort?: unknown[]
  matched_queries?: string[]
  /** `stored_fields`, `docvalue_fields` and the `fields` option. */
  fields?: Record<string, unknown[]>
}

export interface TermsBucket {
  key: string | number
  key_as_string?: string
  doc_count: number
  [subAggregation: string]: unknown
}

export type AggregationResult =
  | { doc_count_error_upper_bound: number; sum_other_doc_count: number; buckets: TermsBucket[] }
  | { value: number | null; value_as_string?: string }
  | Record<string, unknown>

export interface SearchResponse {
  took: number
  timed_out: boolean
  _shards: ShardsInfo
  hits: {
    total?: { value: number; relation: 'eq' | 'gte' } | number
    max_score: number | null
    hits: SearchHit[]
  }
  aggregations?: Record<string, AggregationResult>
  pit_id?: string
}

export interface CountResponse {
  count: number
  _shards: ShardsInfo
}

export interface CloseIndexResponse extends Acknowledged {
  shards_acknowledged: boolean
  indices: Record<string, { closed: boolean }>
}

export interface OpenIndexResponse extends Acknowledged {
  shards_acknowledged: boolean
}

export interface IndexInfo {
  aliases: Record<string, AliasDefinition>
  mappings: Mappings
  /** `{index: {number_of_shards: "1", hidden: "true", uuid, creation_date, provided_name, ...}}`, values as strings. */
  settings: { index: Record<string, unknown> }
  data_stream?: string
}

export interface IndexTemplateEntry {
  name: string
  index_template: IndexTemplateBody
}

export interface ComponentTemplateEntry {
  name: string
  component_template: ComponentTemplateBody
}

/** `POST _index_template/_simulate_index/<index>` and `_simulate`: what a new index would take, and the other templates that match. */
export interface SimulatedTemplate {
  template: CreateIndexBody
  overlapping?: Array<{ name: string; index_patterns: string[] }>
}

export interface DataStreamInfo {
  name: string
  timestamp_field: { name: string }
  indices: Array<{ index_name: string; index_uuid: string }>
  generation: number
  status: 'GREEN' | 'YELLOW' | 'RED'
  template: string
}

export interface PitInfo {
  pit_id: string
  creation_time: number
  /** The longest keep-alive asked for so far (a search may extend it, never shorten it). */
  keep_alive: number
  /**
   * The concrete indices the PIT was opened on, so that any node can authorize a search of it
   * on exactly those (OpenSearch encodes them in the PIT id; not part of its list answer).
   */
  indices?: string[]
}

export interface CreatePitResponse {
  pit_id: string
  _shards: ShardsInfo
  creation_time: number
}

export interface DeletePitResponse {
  pits: Array<{ pit_id: string; successful: boolean }>
}

/** A concrete index with what `_cat/indices` and `GET /<index>` need. */
export interface IndexStats {
  index: string
  uuid: string
  hidden: boolean
  /** `close` for a closed index (whose data stays, unreadable, until it is opened). */
  status: 'open' | 'close'
  docs_count: number
  /** Size of the stored documents (their JSON sources). */
  store_size_in_bytes: number
  /** Flushes of this index since the process started (OpenSearch's counters reset on restart too). */
  flush_total: number
  data_stream?: string
  creation_date: number
  /** What was done to the index since the process started (absent: not known). */
  activity?: IndexActivity
}

export interface SearchCounts {
  query_total: number
  query_time_in_millis: number
  fetch_total: number
  fetch_time_in_millis: number
}

/**
 * The operations counted per index, under OpenSearch's indices-stats names (its counters also
 * start at zero when a node starts).
 */
export interface IndexActivity {
  indexing: {
    index_total: number
    index_time_in_millis: number
    index_failed: number
    delete_total: number
    delete_time_in_millis: number
    noop_update_total: number
  }
  get: {
    total: number
    time_in_millis: number
    exists_total: number
    exists_time_in_millis: number
    missing_total: number
    missing_time_in_millis: number
  }
  search: SearchCounts & { groups?: Record<string, SearchCounts> }
  refresh: { total: number; total_time_in_millis: number; external_total: number; external_total_time_in_millis: number }
  /** Writes since the last flush (what the store's write-ahead log holds of the index), and their bytes. */
  translog: { operations: number; size_in_bytes: number }
}

/** Counters of an index nothing was done to. */
export const noActivity = (): IndexActivity => ({
  indexing: { index_total: 0, index_time_in_millis: 0, index_failed: 0, delete_total: 0, delete_time_in_millis: 0, noop_update_total: 0 },
  get: { total: 0, time_in_millis: 0, exists_total: 0, exists_time_in_millis: 0, missing_total: 0, missing_time_in_millis: 0 },
  search: { query_total: 0, query_time_in_millis: 0, fetch_total: 0, fetch_time_in_millis: 0 },
  refresh: { total: 0, total_time_in_millis: 0, external_total: 0, external_total_time_in_millis: 0 },
  translog: { operations: 0, size_in_bytes: 0 },
})

/** `GET _plugins/_ism/policies/<id>`. */
export interface IsmPolicyResponse {
  _id: string
  _version: number
  _seq_no: number
  _primary_term: number
  policy: IsmPolicy
}

/** `PUT _plugins/_ism/policies/<id>`: ISM nests the written policy once more (`policy.policy`). */
export interface PutIsmPolicyResponse {
  _id: string
  _version: number
  _primary_term: number
  _seq_no: number
  policy: { policy: IsmPolicy }
}

/** `GET _plugins/_ism/policies`. */
export interface IsmPoliciesResponse {
  policies: Array<{ _id: string; _seq_no: number; _primary_term: number; policy: IsmPolicy }>
  total_policies: number
}

export interface PutLifecyclePolicyParams {
  id: string
  body: IsmPolicyBody
  /** Without both, the write is create-only (a 409 when the policy exists), as ISM does. */
  if_seq_no?: number
  if_primary_term?: number
  refresh?: Refresh
}

// ---------------------------------------------------------------------------------------------

export interface Store {
  /**
   * OpenSearch's cluster_uuid: generated once when the store is created and kept in it (the
   * platform's own in platform mode), so two installs never share one.
   */
  clusterUuid(): Promise<string>
  // Indices
  createIndex(params: { index: string; body?: CreateIndexBody }): Promise<CreateIndexResponse>
  deleteIndex(params: { index: string | string[] } & ResolveOptions): Promise<Acknowledged>
  existsIndex(params: { index: string | string[] } & ResolveOptions): Promise<boolean>
  getIndex(params: { index: string | string[] } & ResolveOptions): Promise<Record<string, IndexInfo>>
  /** Closed indices refuse searches and document operations (index_closed_exception) until opened. */
  closeIndex(params: { index: string | string[] } & ResolveOptions): Promise<CloseIndexResponse>
  /** Opens closed indices; wildcards expand to closed indices by default. */
  openIndex(params: { index: string | string[] } & ResolveOptions): Promise<OpenIndexResponse>
  putMapping(params: { index: string | string[]; body: Mappings } & ResolveOptions): Promise<Acknowledged>
  getMapping(params: { index?: string | string[] } & ResolveOptions): Promise<Record<string, { mappings: Mappings }>>
  getSettings(
    params: { index?: string | string[] } & ResolveOptions,
  ): Promise<Record<string, { settings: { index: Record<string, unknown> } }>>
  /** `preserve_existing`: only the settings an index does not have yet are set on it. */
  putSettings(
    params: { index: string | string[]; body: IndexSettings; preserve_existing?: boolean } & ResolveOptions,
  ): Promise<Acknowledged>
  /** Concrete index names for an expression (comma lists, `*`, `-exclusions`, aliases, data streams). */
  resolve(expression: string | string[] | undefined, options?: ResolveOptions): Promise<string[]>
  /** Per-index figures for `_cat/indices`, in name order. */
  stats(params?: { index?: string | string[] } & ResolveOptions): Promise<IndexStats[]>
  refresh(params?: { index?: string | string[] } & ResolveOptions): Promise<{ _shards: ShardsInfo }>
  flush(params?: { index?: string | string[] } & ResolveOptions): Promise<{ _shards: ShardsInfo }>

  // Composable index templates
  putIndexTemplate(params: { name: string; body: IndexTemplateBody; create?: boolean }): Promise<Acknowledged>
  getIndexTemplate(params?: { name?: string }): Promise<{ index_templates: IndexTemplateEntry[] }>
  deleteIndexTemplate(params: { name: string }): Promise<Acknowledged>
  /** What index `index` would be created with (`{}` when no composable template matches it). */
  simulateIndexTemplate(params: { index: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate | Record<string, never>>
  /** What the named template, or the one in `body`, gives a new index. */
  simulateTemplate(params: { name?: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate>

  // Component templates: an index template's `composed_of` applies them in order before its own `template`.
  putComponentTemplate(params: { name: string; body: ComponentTemplateBody; create?: boolean }): Promise<Acknowledged>
  /** A missing name throws ResourceNotFound (404); a pattern matching none answers an empty list. */
  getComponentTemplate(params?: { name?: string }): Promise<{ component_templates: ComponentTemplateEntry[] }>
  /** 404 when the name matches none; 400 while an index template's `composed_of` names one. */
  deleteComponentTemplate(params: { name: string }): Promise<Acknowledged>

  // Legacy (v1) index templates: applied, all that match by ascending order, when no composable template matches.
  putTemplate(params: { name: string; body: LegacyTemplateBody; create?: boolean; order?: number }): Promise<Acknowledged>
  /** name -> template (settings nested, `index_patterns` a list); names missing are left out, none found answers `{}`. */
  getTemplate(params?: { name?: string }): Promise<Record<string, LegacyTemplateBody>>
  deleteTemplate(params: { name: string }): Promise<Acknowledged>

  // Aliases
  /** All actions apply atomically: readers see the state before or after, never in between. */
  updateAliases(params: { body: UpdateAliasesBody }): Promise<Acknowledged>
  /** `{index: {aliases: {name: definition}}}`; `name` filters aliases (wildcards allowed). */
  getAlias(
    params?: { index?: string | string[]; name?: string | string[] } & ResolveOptions,
  ): Promise<Record<string, { aliases: Record<string, AliasDefinition> }>>

  // Data streams
  createDataStream(params: { name: string }): Promise<Acknowledged>
  getDataStream(params?: { name?: string | string[] }): Promise<{ data_streams: DataStreamInfo[] }>
  deleteDataStream(params: { name: string | string[] }): Promise<Acknowledged>
  /** Makes the stream's next generation its write index (`dry_run`: only names it). */
  rolloverDataStream(params: { name: string; dry_run?: boolean }): Promise<{ old_index: string; new_index: string }>

  // Documents
  get(params: GetParams): Promise<GetResponse>
  index(params: IndexParams): Promise<WriteResponse>
  create(params: IndexParams & { id: string }): Promise<WriteResponse>
  update(params: UpdateParams): Promise<WriteResponse>
  delete(params: DeleteParams): Promise<WriteResponse>
  bulk(params: BulkParams): Promise<BulkResponse>

  // Search
  search(params: SearchParams): Promise<SearchResponse>
  /**
   * Documents of one concrete index after a `_seq_no`, oldest first, with their stored source text:
   * how a detector reads what is new when the store can hand out sources unparsed (the embedded
   * store). At most `size` documents, and fewer once their sources pass `maxChars` characters in all.
   */
  readSeq?(params: { index: string; after: number; size: number; maxChars: number }): Promise<StoredBatch>
  /**
   * Where a worker thread reads what readSeq gives, on a connection of its own (the embedded
   * store's file, see src/store/embedded/seq-read.ts); undefined when none can (an in-memory
   * store). Fails as readSeq does for a missing or closed index.
   */
  seqSource?(index: string): Promise<SeqSource | undefined>
  /**
   * A text that moves whenever a document of the indices `expression` names (aliases and wildcards
   * resolved, missing ones skipped) is written or deleted, or the expression comes to name other
   * indices: what a cache of content read there is kept against. Undefined when the store cannot
   * tell cheaply (the platform store: other nodes write too), and then nothing read may be kept.
   */
  writeMark?(expression: string | string[]): string | undefined
  count(params: CountParams): Promise<CountResponse>
  createPit(params: CreatePitParams): Promise<CreatePitResponse>
  deletePit(params: { body: { pit_id: string | string[] } }): Promise<DeletePitResponse>
  deleteAllPits(): Promise<DeletePitResponse>
  getAllPits(): Promise<{ pits: PitInfo[] }>

  // Lifecycle (ISM) policies
  /** Validated as ISM does (400 `illegal_argument_exception` naming the problem); 409 on a create of an existing id or a stale `if_seq_no`. */
  putLifecyclePolicy(params: PutLifecyclePolicyParams): Promise<PutIsmPolicyResponse>
  /** A missing policy throws `PolicyNotFound` (404). */
  getLifecyclePolicy(params: { id: string }): Promise<IsmPolicyResponse>
  /** Every policy, by id; `size` defaults to 20 as in ISM. */
  getLifecyclePolicies(params?: { from?: number; size?: number }): Promise<IsmPoliciesResponse>
  /** A missing policy throws `PolicyNotFound` (404). */
  deleteLifecyclePolicy(params: { id: string; refresh?: Refresh }): Promise<WriteResponse>

  close(): Promise<void>
}

/**
 * The platform adapter: the Store port over the official OpenSearch client. The port is shaped
 * like the client on purpose, so every method is one REST call (two or three for `stats`) whose
 * answer is returned as the platform sent it; failures become the port's typed errors.
 */
import { PlatformCapabilities } from './capabilities'
import { deletePolicy, getPolicies, getPolicy, putPolicy } from '../lifecycle-policies'
import type { Client } from '@opensearch-project/opensearch'
import { IllegalArgument, InvalidIndexName, PolicyNotFound, StoreError } from '../errors'
import type {
  Acknowledged,
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
  IndexActivity,
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
  Refresh,
  ResolveOptions,
  SearchParams,
  SearchResponse,
  ShardsInfo,
  Store,
  UpdateAliasesBody,
  UpdateParams,
  WriteResponse,
  AliasDefinition,
} from '../port'
import { noActivity } from '../port'
import { storeErrorFrom, unavailable } from './errors'
import { evaluatedCount, evaluatedSearch, type EvaluatedSearchDeps } from './evaluated-search'
import { forPlatform } from './private-nodes'
import type { PlatformNodes } from './nodes'

type Names = string | string[] | undefined
type Query = Record<string, unknown>

interface Call {
  method: 'GET' | 'HEAD' | 'PUT' | 'POST' | 'DELETE'
  path: string
  query?: Query
  body?: object
  /** NDJSON lines (bulk). */
  lines?: Array<Record<string, unknown>>
  /** Statuses that are answers, not failures (a missing document is `found: false`). */
  answers?: number[]
}

/** One path segment naming indices: each name percent-encoded, the list joined by commas. */
function names(n: Names): string | undefined {
  if (n === undefined) return undefined
  const list = (Array.isArray(n) ? n : [n]).filter((x) => x !== '')
  // A dot segment cannot travel in a URL path (clients and servers collapse it), and OpenSearch refuses these names anyway.
  for (const x of list) if (x === '.' || x === '..') throw new InvalidIndexName(x, "must not be '.' or '..'")
  return list.length === 0 ? undefined : list.map(encodeURIComponent).join(',')
}

function path(...parts: Array<string | undefined>): string {
  return '/' + parts.filter((p) => p !== undefined).join('/')
}

/** The query string of a call: every parameter that is not part of the path or the body. */
function query(params: object, ...pathAndBody: string[]): Query {
  const out: Query = {}
  for (const [k, v] of Object.entries(params)) if (v !== undefined && !pathAndBody.includes(k)) out[k] = v
  return out
}

/** A search's URL parameters: OpenSearch reads doc values itself, so the embedded store's `read_disabled_source` is not one. */
const searchQuery = (p: SearchParams | CountParams): Query => query(p, 'index', 'body', 'read_disabled_source')

/** `_source` as a query parameter: a boolean, a field list, or includes/excludes. */
function sourceQuery(params: GetParams): Query {
  const out = query(params, 'index', 'id', '_source')
  const s = params._source
  if (s === undefined) return out
  if (typeof s === 'boolean' || typeof s === 'string' || Array.isArray(s)) out._source = s
  else {
    const includes = s.includes ?? s.include
    const excludes = s.excludes ?? s.exclude
    if (includes !== undefined) out._source_includes = includes
    if (excludes !== undefined) out._source_excludes = excludes
  }
  return out
}

const policyPath = (id: string) => path('_plugins', '_ism', 'policies', encodeURIComponent(id))

/**
 * ISM answers a missing policy with a 404 `status_exception`, or with `index_not_found_exception`
 * while its config index does not exist yet (no policy was ever written): both are "no such policy".
 */
function policyMissing(e: unknown, reason: string): unknown {
  return e instanceof StoreError && e.status === 404 ? new PolicyNotFound(reason) : e
}

export class PlatformStore implements Store {
  /**
   * @param authorization when set, every call carries this header instead of the service
   *   account's, so the platform applies that caller's index rights and DLS.
   */
  constructor(
    /** One client per platform node, sticky with failover. */
    private readonly clients: PlatformNodes<Client>,
    private readonly authorization?: string,
    private readonly owner = true,
    /** Shared with the caller stores made by asCaller: what the platform lacks, it lacks for all. */
    private readonly capabilities = new PlatformCapabilities(),
  ) {}

  private uuid?: Promise<string>

  async clusterUuid(): Promise<string> {
    // The platform's own (it never changes); a failed read is asked again next time.
    this.uuid ??= this.body<{ cluster_uuid: string }>({ method: 'GET', path: '/' }).then(
      (r) => r.cluster_uuid,
      (e) => {
        this.uuid = undefined
        throw e
      },
    )
    return this.uuid
  }

  /** The same connections, acting as the caller whose Authorization header this is. */
  asCaller(authorization: string): PlatformStore {
    return new PlatformStore(this.clients, authorization, false, this.capabilities)
  }

  private async send<T>(c: Call): Promise<{ status: number; body: T }> {
    const options = {
      ignore: c.answers,
      ...(this.authorization ? { headers: { authorization: this.authorization } } : {}),
    }
    const params = {
      method: c.method,
      path: c.path,
      querystring: c.query ?? {},
      ...(c.lines ? { bulkBody: c.lines } : c.body === undefined ? {} : { body: c.body }),
    }
    let result: { statusCode: number | null; body: unknown }
    try {
      result = await this.clients.run(c.method, (client) => client.transport.request(params, options))
    } catch (e) {
      throw this.failure(e)
    }
    return { status: result.statusCode ?? 0, body: result.body as T }
  }

  private failure(e: unknown): StoreError | Error {
    const meta = (e as { meta?: { statusCode?: number | null; body?: unknown } }).meta
    if (e instanceof Error && e.name === 'ResponseError' && meta?.statusCode) return storeErrorFrom(meta.statusCode, meta.body)
    if (e instanceof Error && ['ConnectionError', 'TimeoutError', 'NoLivingConnectionsError', 'RequestAbortedError'].includes(e.name))
      return unavailable(e)
    if (e instanceof Error && e.name === 'DeserializationError') return storeErrorFrom(502, 'the platform answered a body that is not JSON')
    return e instanceof Error ? e : new Error(String(e))
  }

  private async body<T>(c: Call): Promise<T> {
    return (await this.send<T>(c)).body
  }

  // ---- indices ------------------------------------------------------------------------------

  async createIndex(p: { index: string; body?: CreateIndexBody }): Promise<CreateIndexResponse> {
    return this.capabilities.withIndexSettings(p.body ?? {}, (body) =>
      this.body({ body: body as object, method: 'PUT', path: path(names(p.index)) }),
    )
  }

  async deleteIndex(p: { index: string | string[] } & ResolveOptions): Promise<Acknowledged> {
    return this.body({ method: 'DELETE', path: path(names(p.index)), query: query(p, 'index') })
  }

  async existsIndex(p: { index: string | string[] } & ResolveOptions): Promise<boolean> {
    const r = await this.send<boolean>({ method: 'HEAD', path: path(names(p.index)), query: query(p, 'index'), answers: [404] })
    return r.status >= 200 && r.status < 300
  }

  async getIndex(p: { index: string | string[] } & ResolveOptions): Promise<Record<string, IndexInfo>> {
    return this.body({ method: 'GET', path: path(names(p.index)), query: query(p, 'index') })
  }

  async closeIndex(p: { index: string | string[] } & ResolveOptions): Promise<CloseIndexResponse> {
    return this.body({ method: 'POST', path: path(names(p.index), '_close'), query: query(p, 'index') })
  }

  async openIndex(p: { index: string | string[] } & ResolveOptions): Promise<OpenIndexResponse> {
    return this.body({ method: 'POST', path: path(names(p.index), '_open'), query: query(p, 'index') })
  }

  async putMapping(p: { index: string | string[]; body: Mappings } & ResolveOptions): Promise<Acknowledged> {
    return this.body({ method: 'PUT', path: path(names(p.index), '_mapping'), query: query(p, 'index', 'body'), body: p.body })
  }

  async getMapping(p: { index?: string | string[] } & ResolveOptions = {}): Promise<Record<string, { mappings: Mappings }>> {
    return this.body({ method: 'GET', path: path(names(p.index), '_mapping'), query: query(p, 'index') })
  }

  async getSettings(
    p: { index?: string | string[] } & ResolveOptions = {},
  ): Promise<Record<string, { settings: { index: Record<string, unknown> } }>> {
    return this.body({ method: 'GET', path: path(names(p.index), '_settings'), query: query(p, 'index') })
  }

  async putSettings(
    p: { index: string | string[]; body: IndexSettings; preserve_existing?: boolean } & ResolveOptions,
  ): Promise<Acknowledged> {
    return this.body({ method: 'PUT', path: path(names(p.index), '_settings'), query: query(p, 'index', 'body'), body: p.body })
  }

  /** The platform resolves the expression (aliases, data streams, wildcards) for its settings answer. */
  async resolve(expression: Names, options: ResolveOptions = {}): Promise<string[]> {
    const settings = await this.getSettings({ index: expression, ...options })
    return Object.keys(settings).sort()
  }

  async stats(p: { index?: string | string[] } & ResolveOptions = {}): Promise<IndexStats[]> {
    const info = await this.body<Record<string, IndexInfo>>({
      method: 'GET',
      path: path(names(p.index) ?? '_all'),
      query: query(p, 'index'),
    })
    const list = Object.keys(info).sort()
    if (list.length === 0) return []
    // Closed indices have no figures: they are skipped here, and that is how they are told apart.
    // Asked by the caller's expression, not by the list of names: the security plugin refuses a
    // system index (.opendistro_security) named outright, but lets a wildcard that covers it through.
    const figures = await this.body<{ indices?: Record<string, IndexFigures> }>({
      method: 'GET',
      path: path(names(p.index) ?? '_all', '_stats', 'docs,store,flush,indexing,get,search,refresh,translog'),
      query: { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true },
    })
    return list.map((index) => {
      const settings = info[index].settings.index
      const f = figures.indices?.[index]
      return {
        index,
        uuid: String(settings.uuid),
        hidden: String(settings.hidden) === 'true',
        status: f ? 'open' : 'close',
        docs_count: f?.primaries?.docs?.count ?? 0,
        store_size_in_bytes: f?.total?.store?.size_in_bytes ?? 0,
        flush_total: f?.total?.flush?.total ?? 0,
        ...(f ? { activity: activityOf(f.primaries) } : {}),
        ...(info[index].data_stream ? { data_stream: info[index].data_stream } : {}),
        creation_date: Number(settings.creation_date),
      }
    })
  }

  async refresh(p: { index?: string | string[] } & ResolveOptions = {}): Promise<{ _shards: ShardsInfo }> {
    return this.body({ method: 'POST', path: path(names(p.index), '_refresh'), query: query(p, 'index') })
  }

  async flush(p: { index?: string | string[] } & ResolveOptions = {}): Promise<{ _shards: ShardsInfo }> {
    return this.body({ method: 'POST', path: path(names(p.index), '_flush'), query: query(p, 'index') })
  }

  // ---- templates ----------------------------------------------------------------------------

  async putIndexTemplate(p: { name: string; body: IndexTemplateBody; create?: boolean }): Promise<Acknowledged> {
    return this.capabilities.withIndexSettings(p.body, (body) =>
      this.body({
        method: 'PUT',
        path: path('_index_template', names(p.name)),
        query: query(p, 'name', 'body'),
        body: body as IndexTemplateBody,
      }),
    )
  }

  async getIndexTemplate(p: { name?: string } = {}): Promise<{ index_templates: IndexTemplateEntry[] }> {
    return this.body({ method: 'GET', path: path('_index_template', names(p.name)) })
  }

  async deleteIndexTemplate(p: { name: string }): Promise<Acknowledged> {
    return this.body({ method: 'DELETE', path: path('_index_template', names(p.name)) })
  }

  async simulateIndexTemplate(p: { index: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate | Record<string, never>> {
    return this.body({ method: 'POST', path: path('_index_template', '_simulate_index', names(p.index)), body: p.body })
  }

  async simulateTemplate(p: { name?: string; body?: IndexTemplateBody }): Promise<SimulatedTemplate> {
    return this.body({ method: 'POST', path: path('_index_template', '_simulate', names(p.name)), body: p.body })
  }

  async putComponentTemplate(p: { name: string; body: ComponentTemplateBody; create?: boolean }): Promise<Acknowledged> {
    return this.capabilities.withIndexSettings(p.body, (body) =>
      this.body({ method: 'PUT', path: path('_component_template', names(p.name)), query: query(p, 'name', 'body'), body: body as object }),
    )
  }

  async getComponentTemplate(p: { name?: string } = {}): Promise<{ component_templates: ComponentTemplateEntry[] }> {
    // A pattern that matches none is a 404 whose body is the empty list: an answer, not a failure.
    const r = await this.send<{ component_templates?: ComponentTemplateEntry[] }>({
      method: 'GET',
      path: path('_component_template', names(p.name)),
      answers: [404],
    })
    if (r.status === 404 && !Array.isArray(r.body?.component_templates)) throw storeErrorFrom(404, r.body)
    return { component_templates: r.body.component_templates ?? [] }
  }

  async deleteComponentTemplate(p: { name: string }): Promise<Acknowledged> {
    return this.body({ method: 'DELETE', path: path('_component_template', names(p.name)) })
  }

  async putTemplate(p: { name: string; body: LegacyTemplateBody; create?: boolean; order?: number }): Promise<Acknowledged> {
    return this.capabilities.withIndexSettings(p.body, (body) =>
      this.body({ method: 'PUT', path: path('_template', names(p.name)), query: query(p, 'name', 'body'), body: body as object }),
    )
  }

  async getTemplate(p: { name?: string } = {}): Promise<Record<string, LegacyTemplateBody>> {
    // Names that match none answer 404 with `{}`.
    return (await this.send<Record<string, LegacyTemplateBody>>({ method: 'GET', path: path('_template', names(p.name)), answers: [404] }))
      .body
  }

  async deleteTemplate(p: { name: string }): Promise<Acknowledged> {
    return this.body({ method: 'DELETE', path: path('_template', names(p.name)) })
  }

  // ---- aliases ------------------------------------------------------------------------------

  async updateAliases(p: { body: UpdateAliasesBody }): Promise<Acknowledged> {
    const sent = forPlatform(p.body)
    // An alias filter runs on the platform alone: a superset would silently widen the alias.
    if (!sent.exact) throw new IllegalArgument('an alias filter cannot hold _fieldref, _cidr or a regexp the platform cannot run')
    return this.body({ method: 'POST', path: '/_aliases', body: sent.body })
  }

  async getAlias(
    p: { index?: string | string[]; name?: string | string[] } & ResolveOptions = {},
  ): Promise<Record<string, { aliases: Record<string, AliasDefinition> }>> {
    return this.body({ method: 'GET', path: path(names(p.index), '_alias', names(p.name)), query: query(p, 'index', 'name') })
  }

  // ---- data streams -------------------------------------------------------------------------

  async createDataStream(p: { name: string }): Promise<Acknowledged> {
    return this.body({ method: 'PUT', path: path('_data_stream', names(p.name)) })
  }

  async getDataStream(p: { name?: string | string[] } = {}): Promise<{ data_streams: DataStreamInfo[] }> {
    return this.body({ method: 'GET', path: path('_data_stream', names(p.name)) })
  }

  async deleteDataStream(p: { name: string | string[] }): Promise<Acknowledged> {
    return this.body({ method: 'DELETE', path: path('_data_stream', names(p.name)) })
  }

  async rolloverDataStream(p: { name: string; dry_run?: boolean }): Promise<{ old_index: string; new_index: string }> {
    const res = await this.body<{ old_index: string; new_index: string }>({
      method: 'POST',
      path: path(p.name, '_rollover'),
      ...(p.dry_run ? { query: { dry_run: 'true' } } : {}),
    })
    return { old_index: res.old_index, new_index: res.new_index }
  }

  // ---- documents ----------------------------------------------------------------------------

  async get(p: GetParams): Promise<GetResponse> {
    const r = await this.send<GetResponse & { error?: unknown }>({
      method: 'GET',
      path: path(names(p.index), '_doc', encodeURIComponent(p.id)),
      query: sourceQuery(p),
      answers: [404],
    })
    // A 404 is an answer when the document is missing, a failure when the index is.
    if (r.status === 404 && r.body?.found !== false) throw storeErrorFrom(404, r.body)
    return r.body
  }

  async index(p: IndexParams): Promise<WriteResponse> {
    const target = p.id === undefined ? path(names(p.index), '_doc') : path(names(p.index), '_doc', encodeURIComponent(p.id))
    return this.body({ method: p.id === undefined ? 'POST' : 'PUT', path: target, query: query(p, 'index', 'id', 'body'), body: p.body })
  }

  async create(p: IndexParams & { id: string }): Promise<WriteResponse> {
    return this.body({
      method: 'PUT',
      path: path(names(p.index), '_create', encodeURIComponent(p.id)),
      query: query(p, 'index', 'id', 'body', 'op_type'),
      body: p.body,
    })
  }

  async update(p: UpdateParams): Promise<WriteResponse> {
    return this.body({
      method: 'POST',
      path: path(names(p.index), '_update', encodeURIComponent(p.id)),
      query: query(p, 'index', 'id', 'body'),
      body: p.body,
    })
  }

  async delete(p: DeleteParams): Promise<WriteResponse> {
    const r = await this.send<WriteResponse & { error?: unknown }>({
      method: 'DELETE',
      path: path(names(p.index), '_doc', encodeURIComponent(p.id)),
      query: query(p, 'index', 'id'),
      answers: [404],
    })
    if (r.status === 404 && r.body?.result !== 'not_found') throw storeErrorFrom(404, r.body)
    return r.body
  }

  async bulk(p: BulkParams): Promise<BulkResponse> {
    return this.body({ method: 'POST', path: path(names(p.index), '_bulk'), query: query(p, 'index', 'body', 'durability'), lines: p.body })
  }

  // ---- search -------------------------------------------------------------------------------

  async search(p: SearchParams): Promise<SearchResponse> {
    const sent = forPlatform(p.body ?? {})
    if (!sent.exact) return evaluatedSearch(this.evaluating(p), p.body ?? {}, sent.body)
    return this.body({ method: 'POST', path: path(names(p.index), '_search'), query: searchQuery(p), body: sent.body })
  }

  async count(p: CountParams): Promise<CountResponse> {
    const sent = forPlatform(p.body ?? {})
    if (!sent.exact) return evaluatedCount(this.evaluating(p), p.body ?? {}, sent.body)
    return this.body({ method: 'POST', path: path(names(p.index), '_count'), query: query(p, 'index', 'body'), body: sent.body })
  }

  /** Superset searches of `p`'s indices and their mappings, for the in-process evaluation. */
  private evaluating(p: SearchParams | CountParams): EvaluatedSearchDeps {
    return {
      search: (body) => this.body({ method: 'POST', path: path(names(p.index), '_search'), query: searchQuery(p), body: body }),
      mapping: async (index) => (await this.getMapping({ index }))[index]?.mappings,
    }
  }

  async createPit(p: CreatePitParams): Promise<CreatePitResponse> {
    return this.body({ method: 'POST', path: path(names(p.index), '_search', 'point_in_time'), query: query(p, 'index') })
  }

  async deletePit(p: { body: { pit_id: string | string[] } }): Promise<DeletePitResponse> {
    const ids = Array.isArray(p.body.pit_id) ? p.body.pit_id : [p.body.pit_id]
    return this.body({ method: 'DELETE', path: '/_search/point_in_time', body: { pit_id: ids } })
  }

  async deleteAllPits(): Promise<DeletePitResponse> {
    return this.body({ method: 'DELETE', path: '/_search/point_in_time/_all' })
  }

  async getAllPits(): Promise<{ pits: PitInfo[] }> {
    return this.body({ method: 'GET', path: '/_search/point_in_time/_all' })
  }

  // ---- lifecycle (ISM) policies ------------------------------------------------------------

  async putLifecyclePolicy(p: PutLifecyclePolicyParams): Promise<PutIsmPolicyResponse> {
    return this.capabilities.withIsm(
      () => this.body({ method: 'PUT', path: policyPath(p.id), query: query(p, 'id', 'body'), body: p.body }),
      () => putPolicy(this, p, Date.now()),
    )
  }

  async getLifecyclePolicy(p: { id: string }): Promise<IsmPolicyResponse> {
    return this.capabilities.withIsm(
      () =>
        this.body<IsmPolicyResponse>({ method: 'GET', path: policyPath(p.id) }).catch((e) => {
          throw policyMissing(e, 'Policy not found')
        }),
      () => getPolicy(this, p.id),
    )
  }

  async getLifecyclePolicies(p: { from?: number; size?: number } = {}): Promise<IsmPoliciesResponse> {
    return this.capabilities.withIsm(
      () => this.body({ method: 'GET', path: '/_plugins/_ism/policies', query: query(p) }),
      () => getPolicies(this, p),
    )
  }

  async deleteLifecyclePolicy(p: { id: string; refresh?: Refresh }): Promise<WriteResponse> {
    return this.capabilities.withIsm(
      () =>
        this.body<WriteResponse>({ method: 'DELETE', path: policyPath(p.id), query: query(p, 'id') }).catch((e) => {
          throw policyMissing(e, `Policy ${p.id} is not found`)
        }),
      () => deletePolicy(this, p.id),
    )
  }

  /**
   * Whether the platform applies lifecycle policies itself (its ISM plugin); without it svc-ext's
   * own retention job has to, as on the embedded store.
   */
  hasIsm(): Promise<boolean> {
    return this.capabilities.hasIsm(() => this.body({ method: 'GET', path: '/_plugins/_ism/policies', query: { size: 0 } }))
  }

  async close(): Promise<void> {
    if (this.owner) await Promise.all(this.clients.nodes.map((client) => client.close()))
  }
}

interface IndexFigures {
  primaries?: { docs?: { count?: number } } & Partial<IndexActivity>
  total?: { store?: { size_in_bytes?: number }; flush?: { total?: number } }
}

/** OpenSearch's counters of an index's primaries, the figures of IndexActivity only (absent ones zero). */
function activityOf(primaries: Partial<IndexActivity> | undefined): IndexActivity {
  const zero = noActivity()
  const pick = <T extends object>(zeros: T, given: unknown): T =>
    Object.fromEntries(Object.keys(zeros).map((k) => [k, Number((given as Record<string, unknown> | undefined)?.[k] ?? 0)])) as T
  return {
    indexing: pick(zero.indexing, primaries?.indexing),
    get: pick(zero.get, primaries?.get),
    search: pick(zero.search, primaries?.search),
    refresh: pick(zero.refresh, primaries?.refresh),
    translog: pick(zero.translog, primaries?.translog),
  }
}

/**
 * Channel configs (`/_plugins/_notifications/configs`), kept in `.opensearch-notifications-config`
 * through the Store (embedded or platform alike). Answers are the peer's shapes; secrets (URLs,
 * header values) are masked for readers without the update permission.
 */
import type { ClusterSettings } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import { AlreadyExists, IndexNotFound, VersionConflict } from '../store/errors'
import type { Store } from '../store/port'
import { type Config, MASK, masked, type StoredConfig, validateConfig } from './model'

export const CONFIG_INDEX = '.opensearch-notifications-config'
const ALLOWED_TYPES = 'opensearch.notifications.core.allowed_config_types'

const kw = { type: 'keyword' }
const MAPPING = {
  dynamic: false as const,
  properties: {
    config_id: kw,
    created_time_ms: { type: 'long' },
    last_updated_time_ms: { type: 'long' },
    config: {
      properties: {
        name: { type: 'text', fields: { keyword: kw } },
        description: { type: 'text', fields: { keyword: kw } },
        config_type: kw,
        is_enabled: { type: 'boolean' },
      },
    },
  },
}

/** The peer's sortable fields (`ConfigQueryHelper.kt`) and where they are in the document. */
const SORT_FIELDS: Record<string, string> = {
  config_id: 'config_id',
  last_updated_time_ms: 'last_updated_time_ms',
  created_time_ms: 'created_time_ms',
  config_type: 'config.config_type',
  name: 'config.name.keyword',
  description: 'config.description.keyword',
  is_enabled: 'config.is_enabled',
}
const LIST_PARAMS = new Set([
  'config_id',
  'config_id_list',
  'from_index',
  'max_items',
  'sort_field',
  'sort_order',
  'config_type',
  'name',
  'description',
  'is_enabled',
  'created_time_ms',
  'last_updated_time_ms',
  'query',
  'text_query',
  'pretty',
])

export interface ConfigView {
  config_id: string
  last_updated_time_ms: number
  created_time_ms: number
  config: StoredConfig['config']
}

export interface ConfigList {
  start_index: number
  total_hits: number
  total_hit_relation: 'eq'
  config_list: ConfigView[]
}

export class Channels {
  private ensured = false

  constructor(private readonly d: { store: Store; settings: ClusterSettings; now: () => number }) {}

  async create(body: { config_id?: string; config: Config }): Promise<{ config_id: string }> {
    const config = await this.validate(body.config)
    await this.ensure()
    const id = body.config_id ?? Buffer.from(crypto.getRandomValues(new Uint8Array(15))).toString('base64url')
    const now = this.d.now()
    const doc: StoredConfig = { config_id: id, created_time_ms: now, last_updated_time_ms: now, config }
    try {
      await this.d.store.index({ index: CONFIG_INDEX, id, body: doc, op_type: 'create', refresh: true })
    } catch (e) {
      if (e instanceof VersionConflict || e instanceof AlreadyExists) throw new ApiError(409, `Config with id ${id} already exists`)
      throw e
    }
    return { config_id: id }
  }

  async update(id: string, body: { config: Config }): Promise<{ config_id: string }> {
    const current = await this.load(id)
    // A reader that was shown masked secrets and sends them back keeps the stored ones.
    const config = await this.validate(unmask(body.config, current.doc.config))
    if (config.config_type !== current.doc.config.config_type)
      throw new ApiError(409, `Config type cannot be changed from ${current.doc.config.config_type} to ${config.config_type}`)
    const doc: StoredConfig = { ...current.doc, last_updated_time_ms: this.d.now(), config }
    try {
      await this.d.store.index({
        index: CONFIG_INDEX,
        id,
        body: doc,
        if_seq_no: current.seqNo,
        if_primary_term: current.primaryTerm,
        refresh: true,
      })
    } catch (e) {
      if (e instanceof VersionConflict) throw new ApiError(409, `Config ${id} was updated concurrently; read it again and retry.`)
      throw e
    }
    return { config_id: id }
  }

  /** The stored config (unmasked) for delivery, or undefined. */
  async stored(id: string): Promise<StoredConfig | undefined> {
    try {
      const got = await this.d.store.get({ index: CONFIG_INDEX, id })
      return got.found ? (got._source as unknown as StoredConfig) : undefined
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
  }

  async get(id: string, showSecrets: boolean): Promise<ConfigList> {
    const { doc } = await this.load(id)
    return { start_index: 0, total_hits: 1, total_hit_relation: 'eq', config_list: [view(doc, showSecrets)] }
  }

  async list(query: Record<string, string | undefined>, showSecrets: boolean): Promise<ConfigList> {
    for (const k of Object.keys(query))
      if (!LIST_PARAMS.has(k)) throw new ApiError(400, `request [/_plugins/_notifications/configs] contains unrecognized parameter: [${k}]`)
    const from = int(query.from_index, 0, 'from_index')
    const size = int(query.max_items, 1000, 'max_items')
    const sortField = query.sort_field ?? 'last_updated_time_ms'
    const sortPath = SORT_FIELDS[sortField]
    if (!sortPath) throw new ApiError(406, `Sort field [${sortField}] is not supported`)
    const order = query.sort_order === 'asc' ? 'asc' : 'desc'
    const filter: unknown[] = []
    const ids = query.config_id_list ?? query.config_id
    if (ids) filter.push({ terms: { config_id: ids.split(',').filter(Boolean) } })
    if (query.config_type) filter.push({ terms: { 'config.config_type': query.config_type.split(',').filter(Boolean) } })
    if (query.is_enabled !== undefined) filter.push({ term: { 'config.is_enabled': query.is_enabled === 'true' } })
    for (const f of ['name', 'description'] as const) if (query[f]) filter.push({ match: { [`config.${f}`]: query[f] } })
    for (const f of ['created_time_ms', 'last_updated_time_ms'] as const) if (query[f]) filter.push({ range: { [f]: range(query[f]!, f) } })
    const text = query.text_query ?? query.query
    if (text) filter.push({ multi_match: { query: text, fields: ['config.name', 'config.description', 'config.config_type'] } })
    let hits
    try {
      hits = await this.d.store.search({
        index: CONFIG_INDEX,
        body: { from, size, query: { bool: { filter } }, sort: [{ [sortPath]: { order } }], track_total_hits: true },
      })
    } catch (e) {
      if (e instanceof IndexNotFound) return { start_index: from, total_hits: 0, total_hit_relation: 'eq', config_list: [] }
      throw e
    }
    const total = typeof hits.hits.total === 'number' ? hits.hits.total : (hits.hits.total?.value ?? hits.hits.hits.length)
    return {
      start_index: from,
      total_hits: total,
      total_hit_relation: 'eq',
      config_list: hits.hits.hits.map((h) => view(h._source as unknown as StoredConfig, showSecrets)),
    }
  }

  async delete(ids: string[]): Promise<{ delete_response_list: Record<string, string> }> {
    if (ids.length === 0) throw new ApiError(400, 'No config id was given to delete')
    for (const id of ids) await this.load(id)
    const out: Record<string, string> = {}
    for (const id of ids) {
      await this.d.store.delete({ index: CONFIG_INDEX, id, refresh: true })
      out[id] = 'OK'
    }
    return { delete_response_list: out }
  }

  private async validate(config: Config): Promise<StoredConfig['config']> {
    const settings = await this.d.settings.snapshot()
    return validateConfig(
      config,
      new Set(
        settings
          .str(ALLOWED_TYPES)
          .split(',')
          .map((s) => s.trim()),
      ),
    )
  }

  private async load(id: string) {
    await this.ensure()
    const got = await this.d.store.get({ index: CONFIG_INDEX, id })
    if (!got.found) throw new ApiError(404, `Config ${id} not found`)
    return { doc: got._source as unknown as StoredConfig, seqNo: got._seq_no, primaryTerm: got._primary_term }
  }

  private async ensure(): Promise<void> {
    if (this.ensured) return
    if (!(await this.d.store.existsIndex({ index: CONFIG_INDEX, expand_wildcards: 'all' }))) {
      try {
        await this.d.store.createIndex({
          index: CONFIG_INDEX,
          body: { settings: { index: { hidden: true, number_of_shards: 1, auto_expand_replicas: '0-1' } }, mappings: MAPPING },
        })
      } catch (e) {
        if (!(e instanceof AlreadyExists)) throw e
      }
    }
    this.ensured = true
  }
}

function view(doc: StoredConfig, showSecrets: boolean): ConfigView {
  return {
    config_id: doc.config_id,
    last_updated_time_ms: doc.last_updated_time_ms,
    created_time_ms: doc.created_time_ms,
    config: showSecrets ? doc.config : masked(doc.config),
  }
}

function unmask(next: Config, stored: StoredConfig['config']): Config {
  const type = next.config_type
  const data = (next as Record<string, unknown>)[type] as { url?: string; header_params?: Record<string, string> } | undefined
  const was = (stored as Record<string, unknown>)[type] as { url: string; header_params?: Record<string, string> } | undefined
  if (!data || !was || type !== stored.config_type) return next
  const out: Record<string, unknown> = { ...data }
  if (typeof data.url === 'string' && data.url.endsWith(`/${MASK}`)) out.url = was.url
  if (data.header_params)
    out.header_params = Object.fromEntries(
      Object.entries(data.header_params).map(([k, v]) => [
        k,
        v === MASK && was.header_params?.[k] !== undefined ? was.header_params[k] : v,
      ]),
    )
  return { ...next, [type]: out }
}

function int(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0 || n > 10_000) throw new ApiError(400, `Invalid ${name} [${v}]`)
  return n
}

/** `from..to` (either side may be empty), as the peer's range filters are written. */
function range(v: string, name: string): Record<string, number> {
  const [lo, hi] = v.split('..')
  const out: Record<string, number> = {}
  for (const [key, text] of [
    ['gte', lo],
    ['lte', hi],
  ] as const) {
    if (!text) continue
    const n = Number(text)
    if (!Number.isFinite(n)) throw new ApiError(400, `Invalid ${name} [${v}]`)
    out[key] = n
  }
  return out
}

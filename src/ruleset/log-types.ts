/**
 * Log types (reference 5.8): every integration is registered as a log type whose name is the
 * integration title; a rule's `logsource.product` names its log type. A log type may carry
 * Sigma-field -> document-field mappings `[{raw_field, ecs, ocsf, ...}]`; the key used is the
 * log type's own `schema`, else `plugins.security_analytics.mappings.default_schema`. Fields
 * without an entry map to themselves (identity, as the fork's CTI log types do).
 */
import type { SettingsSnapshot } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import type { SearchBody, SearchResponse } from '../store/port'
import { VersionedCache } from '../store/versioned-cache'
import type { RulesetDeps } from './deps'
import { ensureIndex, LOG_TYPES_INDEX } from './indices'
import { type FieldMappingEntry, type Space, type StoredLogType } from './model'
import { spaceDocId } from './space-ids'
import type { IocFieldsInput } from './threat-intel/ioc-fields'

export const DEFAULT_SCHEMA_SETTING = 'plugins.security_analytics.mappings.default_schema'

export interface LogTypeInput {
  /** CTI document id of the integration. */
  id: string
  name: string
  description?: string
  category?: string
  source?: string
  schema?: string
  mappings?: FieldMappingEntry[]
  ioc_fields?: IocFieldsInput
}

const KEY = { index: LOG_TYPES_INDEX, prefix: '' }

/** Field mappings kept per (log type name, default schema): a node has some hundred log types at most. */
const FIELD_MAPPINGS_CACHE_MAX_ENTRIES = 256

export class LogTypes {
  /** Read per compile (logtest compiles on every call); kept while the log types index sees no write. */
  private readonly mappings = new VersionedCache<Record<string, string>>(FIELD_MAPPINGS_CACHE_MAX_ENTRIES)

  constructor(private readonly d: RulesetDeps) {}

  async upsert(space: Space, input: LogTypeInput): Promise<{ _id: string; result: 'created' | 'updated' }> {
    if (!input.id || !input.name) throw new ApiError(400, 'A log type needs an id and a name')
    await ensureIndex(this.d.store, LOG_TYPES_INDEX)
    const { id, exists } = await spaceDocId(this.d.store, KEY, space, input.id)
    const doc: StoredLogType = {
      name: input.name,
      description: input.description ?? '',
      category: input.category ?? '',
      space,
      source: input.source ?? space,
      document: { id: input.id },
      tags: { correlation_id: 0 },
      ...(input.schema ? { schema: input.schema } : {}),
      mappings: input.mappings ?? [],
      ...(input.ioc_fields ? { ioc_fields: input.ioc_fields } : {}),
      last_update_time: this.d.now(),
    }
    await this.d.store.index({ index: LOG_TYPES_INDEX, id, body: doc as unknown as Record<string, unknown>, refresh: true })
    return { _id: id, result: exists ? 'updated' : 'created' }
  }

  async delete(space: Space, ctiId: string): Promise<boolean> {
    await ensureIndex(this.d.store, LOG_TYPES_INDEX)
    const { id, exists } = await spaceDocId(this.d.store, KEY, space, ctiId)
    if (!exists) return false
    const r = await this.d.store.delete({ index: LOG_TYPES_INDEX, id, refresh: true })
    return r.result === 'deleted'
  }

  /** Removes every log type of a space; answers how many went. */
  async deleteSpace(space: Space): Promise<number> {
    await ensureIndex(this.d.store, LOG_TYPES_INDEX)
    const r = await this.d.store.search({ index: LOG_TYPES_INDEX, body: { size: 10000, _source: false, query: { term: { space } } } })
    let n = 0
    for (const h of r.hits.hits)
      if ((await this.d.store.delete({ index: LOG_TYPES_INDEX, id: h._id, refresh: true })).result === 'deleted') n++
    return n
  }

  /** The log type named `name`; the standard space wins over the others when several exist. */
  async byName(name: string, space?: Space): Promise<StoredLogType | undefined> {
    await ensureIndex(this.d.store, LOG_TYPES_INDEX)
    const filter: Record<string, unknown>[] = [{ term: { name } }]
    if (space) filter.push({ term: { space } })
    const r = await this.d.store.search({ index: LOG_TYPES_INDEX, body: { size: 10, query: { bool: { filter } } } })
    const all = r.hits.hits.map((h) => h._source as unknown as StoredLogType)
    return all.find((l) => l.space === 'standard') ?? all[0]
  }

  /** Sigma field -> document field for rules of log type `name`; the same object while unchanged: never modify it. */
  async fieldMapping(name: string, settings: SettingsSnapshot): Promise<Record<string, string>> {
    const schema = settings.str(DEFAULT_SCHEMA_SETTING)
    const version = this.d.store.writeMark?.(LOG_TYPES_INDEX)
    return this.mappings.get(version, `${name}\u0000${schema}`, async () => mappingOf(await this.byName(name), schema))
  }

  async search(body: SearchBody): Promise<SearchResponse> {
    await ensureIndex(this.d.store, LOG_TYPES_INDEX)
    return this.d.store.search({ index: LOG_TYPES_INDEX, body })
  }
}

export function mappingOf(lt: StoredLogType | undefined, defaultSchema: string): Record<string, string> {
  const out: Record<string, string> = {}
  if (!lt) return out
  const schema = lt.schema || defaultSchema
  for (const m of lt.mappings ?? []) {
    const target = (m as Record<string, string>)[schema]
    if (typeof target === 'string' && target !== '') out[m.raw_field] = target
  }
  return out
}

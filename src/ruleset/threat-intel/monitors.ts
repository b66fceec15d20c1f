/**
 * Threat-intel monitors (reference 3.2, 3.3): the peer's create, get, update, delete and search,
 * with its shapes. At most one monitor exists (a second is a 400, as on the peer). The monitor's
 * `per_ioc_type_scan_input_list` says, per IoC type and input index, which fields hold values of
 * that type: no log-type default applies. The answer's `name` holds the monitor's version, as the
 * peer's does (reproduced).
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { ApiError } from '../../http/errors'
import { isObject } from '../../json'
import { AlreadyExists, DocumentMissing, IndexNotFound, VersionConflict } from '../../store/errors'
import type { SearchBody, Store } from '../../store/port'
import { check } from '../model'
import { ensureIndex, TI_MONITORS_INDEX } from '../indices'
import { IOC_TYPES, type IocType } from './ioc-types'
import { checkAction, checkDestinations, type DestinationExists } from '../alerts/actions'

export const MONITOR_TYPE = 'ti_doc_level_monitor'
/** One document holds the id of the one monitor: a second creation conflicts on it. */
const SINGLETON = '_the_monitor'

const IocTypeName = T.Union(IOC_TYPES.map((t) => T.Literal(t)))
export const ThreatIntelMonitorBody = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 256 }),
    schedule: T.Object({ period: T.Object({ interval: T.Integer({ minimum: 1 }), unit: T.String() }) }),
    enabled: T.Optional(T.Boolean()),
    user: T.Optional(T.Unknown()),
    indices: T.Array(T.String({ minLength: 1 }), { minItems: 1 }),
    per_ioc_type_scan_input_list: T.Array(
      T.Object({ ioc_type: IocTypeName, index_to_fields_map: T.Record(T.String(), T.Array(T.String({ minLength: 1 }))) }),
      { minItems: 1 },
    ),
    triggers: T.Optional(
      T.Array(
        T.Object(
          {
            id: T.Optional(T.String()),
            name: T.String({ minLength: 1 }),
            severity: T.Optional(T.String()),
            data_sources: T.Optional(T.Array(T.String())),
            ioc_types: T.Optional(T.Array(IocTypeName)),
            actions: T.Optional(T.Array(T.Object({}, { additionalProperties: true }))),
          },
          { additionalProperties: true },
        ),
      ),
    ),
  },
  { additionalProperties: true },
)
export type ThreatIntelMonitorBody = Static<typeof ThreatIntelMonitorBody>
export type StoredMonitor = ThreatIntelMonitorBody & {
  monitor_type: string
  enabled: boolean
  last_update_time: number
  enabled_time: number | null
  triggers: NonNullable<ThreatIntelMonitorBody['triggers']>
}

const UNITS = new Set(['MINUTES', 'HOURS', 'DAYS'])

/** Fields per (input index, IoC type) of a monitor. */
export function monitorFields(
  m: Pick<ThreatIntelMonitorBody, 'per_ioc_type_scan_input_list'>,
  index: string,
): Array<{ type: IocType; fields: string[] }> {
  return m.per_ioc_type_scan_input_list
    .map((e) => ({ type: e.ioc_type, fields: [...new Set(e.index_to_fields_map[index] ?? [])] }))
    .filter((e) => e.fields.length > 0)
}

function validated(body: Record<string, unknown>): ThreatIntelMonitorBody {
  const m = check(ThreatIntelMonitorBody, body, 'threat intel monitor')
  if (!UNITS.has(m.schedule.period.unit.toUpperCase())) throw new ApiError(400, `Invalid schedule unit [${m.schedule.period.unit}]`)
  for (const e of m.per_ioc_type_scan_input_list)
    for (const index of Object.keys(e.index_to_fields_map))
      if (!m.indices.includes(index))
        throw new ApiError(400, `index_to_fields_map names [${index}], which is not one of the monitor's indices`)
  for (const t of m.triggers ?? []) for (const a of t.actions ?? []) checkAction(t.name, a)
  return m
}

export interface MonitorsDeps {
  store: Store
  now: () => number
  /** Whether a trigger action's `destination_id` names a notification channel (unchecked when absent). */
  destinationExists?: DestinationExists
}

export class ThreatIntelMonitors {
  constructor(private readonly deps: MonitorsDeps) {}

  private answer(id: string, w: { _version?: number; _seq_no?: number; _primary_term?: number }, monitor: StoredMonitor) {
    return { id, name: String(w._version ?? 1), seq_no: w._seq_no ?? 0, primary_term: w._primary_term ?? 1, monitor: { id, ...monitor } }
  }

  private stored(m: ThreatIntelMonitorBody, was?: StoredMonitor): StoredMonitor {
    const now = this.deps.now()
    const enabled = m.enabled ?? true
    return {
      ...m,
      monitor_type: MONITOR_TYPE,
      enabled,
      enabled_time: enabled ? (was?.enabled ? was.enabled_time : now) : null,
      last_update_time: now,
      triggers: (m.triggers ?? []).map((t) => ({
        ...t,
        id: t.id ?? crypto.randomUUID(),
        severity: t.severity ?? '1',
        data_sources: t.data_sources ?? [],
        ioc_types: t.ioc_types ?? [],
        actions: t.actions ?? [],
      })),
    }
  }

  /** The body checked: its shape, then the channels its actions name. */
  private async checked(body: Record<string, unknown>): Promise<ThreatIntelMonitorBody> {
    const m = validated(body)
    await checkDestinations(m.triggers ?? [], this.deps.destinationExists)
    return m
  }

  async create(body: Record<string, unknown>) {
    const m = await this.checked(body)
    await ensureIndex(this.deps.store, TI_MONITORS_INDEX)
    const id = crypto.randomUUID()
    try {
      await this.deps.store.index({ index: TI_MONITORS_INDEX, id: SINGLETON, body: { monitor_id: id }, op_type: 'create', refresh: true })
    } catch (e) {
      if (!(e instanceof VersionConflict || e instanceof AlreadyExists)) throw e
      const got = await this.deps.store.get({ index: TI_MONITORS_INDEX, id: SINGLETON })
      throw new ApiError(400, `Threat intel monitor ${String(got.found ? got._source?.monitor_id : '')} already exists.`)
    }
    const stored = this.stored(m)
    const w = await this.deps.store.index({ index: TI_MONITORS_INDEX, id, body: { monitor: stored }, op_type: 'create', refresh: true })
    return this.answer(id, w, stored)
  }

  async get(id: string) {
    const got = await this.read(id)
    return this.answer(id, got, got.monitor)
  }

  async update(id: string, body: Record<string, unknown>) {
    const was = await this.read(id)
    const stored = this.stored(await this.checked(body), was.monitor)
    const w = await this.deps.store.index({
      index: TI_MONITORS_INDEX,
      id,
      body: { monitor: stored },
      if_seq_no: was._seq_no,
      if_primary_term: was._primary_term,
      refresh: true,
    })
    return this.answer(id, w, stored)
  }

  async delete(id: string) {
    await this.read(id)
    const w = await this.deps.store.delete({ index: TI_MONITORS_INDEX, id, refresh: true })
    await this.deps.store.delete({ index: TI_MONITORS_INDEX, id: SINGLETON, refresh: true }).catch((e) => {
      if (!(e instanceof DocumentMissing)) throw e
    })
    return { _id: id, _version: w._version }
  }

  /** `POST /monitors/_search`: the raw search response over the monitors. */
  async search(body: SearchBody) {
    const query = { bool: { filter: [{ term: { 'monitor.monitor_type': MONITOR_TYPE } }], must: body.query ? [body.query] : [] } }
    try {
      return await this.deps.store.search({ index: TI_MONITORS_INDEX, body: { ...body, query, seq_no_primary_term: true, version: true } })
    } catch (e) {
      if (!(e instanceof IndexNotFound)) throw e
      return { took: 0, timed_out: false, hits: { total: { value: 0, relation: 'eq' as const }, max_score: null, hits: [] } }
    }
  }

  /** The monitor of this id, if there is one. */
  async byId(id: string): Promise<StoredMonitor | undefined> {
    if (id.startsWith('_')) return undefined
    const got = await this.deps.store.get({ index: TI_MONITORS_INDEX, id }).catch((e) => {
      if (e instanceof IndexNotFound) return undefined
      throw e
    })
    return got?.found && isObject(got._source?.monitor) ? (got._source.monitor as StoredMonitor) : undefined
  }

  /** Every monitor (at most one), enabled or not. */
  async all(): Promise<Array<{ id: string; monitor: StoredMonitor }>> {
    const r = await this.search({ size: 10 })
    return r.hits.hits.map((h) => ({ id: h._id, monitor: (h._source as { monitor: StoredMonitor }).monitor }))
  }

  private async read(id: string) {
    const got = id.startsWith('_')
      ? undefined
      : await this.deps.store.get({ index: TI_MONITORS_INDEX, id }).catch((e) => {
          if (e instanceof IndexNotFound) return undefined
          throw e
        })
    if (!got?.found || !isObject(got._source?.monitor)) throw new ApiError(404, `Threat intel monitor [${id}] not found`)
    return { ...got, monitor: got._source.monitor as StoredMonitor }
  }
}

/**
 * Correlation alerts (reference 1.7). A correlation rule "with a trigger" is, here, a Sigma
 * correlation rule that a trigger of the detector holding it selects (by the rule's id, level or
 * tags, as any rule): each correlation finding it fires raises one correlation alert in
 * `.opensearch-sap-correlation-alerts` (no rollover), with the trigger's notifications in the same
 * document. Deviation: the peer overwrites an ACTIVE alert whose window covers "now"; the engine here
 * fires at most once per timespan per group, so one alert per firing covers the same ground and
 * keeps ids deterministic (a repeated batch raises nothing twice).
 */
import type { ClusterSettings } from '../../config/cluster-settings'
import { ApiError } from '../../http/errors'
import { count } from './list-params'
import type { Caller } from '../../http/caller'
import { AlreadyExists, IndexNotFound, VersionConflict } from '../../store/errors'
import type { SearchHit, Store } from '../../store/port'
import { filteredCaller, mayAccess } from '../access'
import type { StoredUser } from '../model'
import { iso } from '../model'
import { ALERT_MAPPING } from './indices'
import type { ActionExecutionResult } from './model'
import type { OutboxState } from '../../notifications/outbox-model'

export const CORRELATION_ALERTS_INDEX = '.opensearch-sap-correlation-alerts'
const MAX_IDS = 10_000

export interface StoredCorrelationAlert {
  id: string
  version: number
  schema_version: number
  correlated_finding_ids: string[]
  correlation_rule_id: string
  correlation_rule_name: string
  detector_id: string
  user: StoredUser | null
  trigger_name: string
  severity: string
  state: 'ACTIVE' | 'ACKNOWLEDGED' | 'ERROR'
  start_time: number
  end_time: number
  acknowledged_time: number | null
  error_message: string | null
  action_execution_results: ActionExecutionResult[]
  svc_outbox?: OutboxState
}

let ensured = new WeakSet<Store>()

export async function ensureCorrelationAlerts(store: Store): Promise<string> {
  if (ensured.has(store)) return CORRELATION_ALERTS_INDEX
  if (!(await store.existsIndex({ index: CORRELATION_ALERTS_INDEX, expand_wildcards: 'all' }))) {
    try {
      await store.createIndex({
        index: CORRELATION_ALERTS_INDEX,
        body: { settings: { index: { hidden: true, number_of_shards: 1, auto_expand_replicas: '0-1' } }, mappings: ALERT_MAPPING },
      })
    } catch (e) {
      if (!(e instanceof AlreadyExists)) throw e
    }
  }
  ensured.add(store)
  return CORRELATION_ALERTS_INDEX
}

export function forgetCorrelationAlerts(): void {
  ensured = new WeakSet()
}

function render(a: StoredCorrelationAlert, version: number) {
  return {
    correlated_finding_ids: a.correlated_finding_ids,
    correlation_rule_id: a.correlation_rule_id,
    correlation_rule_name: a.correlation_rule_name,
    id: a.id,
    user: a.user,
    version,
    schema_version: a.schema_version,
    trigger_name: a.trigger_name,
    severity: a.severity,
    state: a.state,
    start_time: iso(a.start_time),
    end_time: iso(a.end_time),
    acknowledged_time: iso(a.acknowledged_time),
    error_message: a.error_message,
    action_execution_results: a.action_execution_results.map((r) => ({
      ...r,
      last_execution_time: iso(r.last_execution_time),
      attempts: r.attempts.map((x) => ({ ...x, time: iso(x.time) })),
    })),
  }
}

export class CorrelationAlerts {
  constructor(private readonly d: { store: Store; settings: ClusterSettings; now: () => number }) {}

  /** `GET /correlationAlerts`: `correlation_rule_id` is the one filter, as the peer applies it. */
  async list(q: Record<string, string | undefined>, caller: Caller) {
    const filtered = filteredCaller(await this.d.settings.snapshot(), caller)
    const filter: unknown[] = []
    if (q.correlation_rule_id) filter.push({ term: { correlation_rule_id: q.correlation_rule_id } })
    if (filtered) filter.push({ terms: { 'user.backend_roles': filtered.backendRoles } })
    const order = (q.sortOrder ?? 'asc').toLowerCase()
    if (order !== 'asc' && order !== 'desc') throw new ApiError(400, `Invalid sortOrder [${q.sortOrder}]`)
    const sortField = q.sortString ?? 'start_time'
    if (!/^[A-Za-z0-9_.]+$/.test(sortField)) throw new ApiError(400, `Invalid sortString [${sortField}]`)
    try {
      const r = await this.d.store.search({
        index: CORRELATION_ALERTS_INDEX,
        body: {
          from: count(q.startIndex, 0, 'startIndex'),
          size: count(q.size, 20, 'size'),
          query: { bool: { filter } },
          sort: [{ [sortField]: { order, ...(q.missing ? { missing: q.missing } : {}) } }],
          track_total_hits: true,
          version: true,
        },
      })
      const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0)
      return {
        correlationAlerts: r.hits.hits.map((h) => render(h._source as unknown as StoredCorrelationAlert, h._version ?? 1)),
        total_alerts: total,
      }
    } catch (e) {
      if (e instanceof IndexNotFound) return { correlationAlerts: [], total_alerts: 0 }
      throw e
    }
  }

  /** `POST /_acknowledge/correlationAlerts`: every id found (and visible) is ACKNOWLEDGED, whatever its state. */
  async acknowledge(ids: string[], caller: Caller) {
    if (ids.length === 0) throw new ApiError(400, 'alert ids list cannot be empty')
    if (ids.length > MAX_IDS) throw new ApiError(400, `At most ${MAX_IDS} alert ids can be acknowledged at once`)
    const filtered = filteredCaller(await this.d.settings.snapshot(), caller)
    let hits: SearchHit[]
    try {
      hits = (
        await this.d.store.search({
          index: CORRELATION_ALERTS_INDEX,
          body: { size: ids.length, query: { ids: { values: ids } }, seq_no_primary_term: true, version: true },
        })
      ).hits.hits
    } catch (e) {
      if (e instanceof IndexNotFound) hits = []
      else throw e
    }
    const acknowledged: unknown[] = []
    const failed: unknown[] = []
    for (const h of hits) {
      const a = h._source as unknown as StoredCorrelationAlert
      if (!mayAccess(filtered, a.user ?? undefined)) continue
      const next = { ...a, state: 'ACKNOWLEDGED' as const, acknowledged_time: this.d.now() }
      try {
        const w = await this.d.store.index({
          index: h._index,
          id: h._id,
          body: next,
          if_seq_no: h._seq_no,
          if_primary_term: h._primary_term,
          refresh: true,
        })
        acknowledged.push(render(next, w._version))
      } catch (e) {
        // A delivery being recorded at this instant: the client may acknowledge again.
        if (!(e instanceof VersionConflict)) throw e
        failed.push(render(a, h._version ?? 1))
      }
    }
    if (acknowledged.length === 0 && failed.length === 0) throw new ApiError(404, `No correlation alert has the ids [${ids.join(', ')}]`)
    return { acknowledged, failed }
  }
}

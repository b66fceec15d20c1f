/**
 * Threat-intel alerts API (reference 3.5) over the IoC alerts detector triggers raise (one per
 * trigger, IoC type and value; alerts/raise.ts `raiseIoc`), in the peer's threat-intel alert shape.
 * `GET /threat_intel/alerts` applies `alertState` and `severityLevel` too (the peer parses and
 * ignores them). `PUT /threat_intel/alerts/status` allows only ACTIVE -> ACKNOWLEDGED and
 * ACKNOWLEDGED -> COMPLETED, in place (a COMPLETED alert no longer collects findings: the next
 * finding of its value opens a new one), and reproduces the peer's COMPLETED update of
 * `acknowledged_time` with the old `end_time`.
 */
import { ApiError } from '../../http/errors'
import { listParams } from '../alerts/list-params'
import { IndexNotFound } from '../../store/errors'
import type { SearchHit, Store } from '../../store/port'
import { ALL_ALERTS, searchAlerts } from '../alerts/indices'
import type { StoredAlert } from '../alerts/model'
import { IOC_FINDINGS_PATTERN } from './ioc-findings'
import { READABLE_WINDOW, readablePage, type ReadableEvents } from './readable-events'

const IOC_ALERTS = { exists: { field: 'ioc_type' } }
const SORTABLE = new Set([
  'start_time',
  'end_time',
  'acknowledged_time',
  'last_updated_time',
  'severity',
  'state',
  'ioc_value',
  'ioc_type',
  'id',
])
const STATES = new Set(['ACTIVE', 'ACKNOWLEDGED', 'COMPLETED', 'ERROR', 'DELETED'])
const MAX_IDS = 1000

type IocAlert = StoredAlert & { last_updated_time?: number }

/** The peer's API document (its `trigger_id` holds the trigger name: reproduced). */
export function renderIocAlert(hit: SearchHit): Record<string, unknown> {
  const a = hit._source as unknown as IocAlert
  return {
    id: hit._id,
    version: hit._version ?? a.version,
    schema_version: a.schema_version,
    seq_no: hit._seq_no ?? null,
    primary_term: hit._primary_term ?? null,
    trigger_id: a.trigger_name,
    trigger_name: a.trigger_name,
    state: a.state,
    start_time: a.start_time ?? null,
    end_time: a.end_time ?? null,
    acknowledged_time: a.acknowledged_time ?? null,
    last_updated_time: a.last_updated_time ?? a.start_time ?? null,
    error_message: a.error_message ?? null,
    severity: a.severity,
    ioc_value: a.ioc_value,
    ioc_type: a.ioc_type,
    finding_ids: a.finding_ids,
  }
}

export async function listIocAlerts(
  store: Store,
  q: Record<string, string | undefined>,
  events?: ReadableEvents,
): Promise<{ alerts: unknown[]; total_alerts: number }> {
  const filter: unknown[] = [IOC_ALERTS]
  const state = (q.alertState ?? 'ALL').toUpperCase()
  if (state !== 'ALL') {
    if (!STATES.has(state)) throw new ApiError(400, `Invalid alertState [${q.alertState}]`)
    filter.push({ term: { state } })
  }
  const severity = q.severityLevel ?? 'ALL'
  if (severity !== 'ALL') filter.push({ term: { severity } })
  const { sortField, order, size, from } = listParams(q, 'start_time', (field) => SORTABLE.has(field))
  const query = { bool: { filter } }
  const sort = [{ [sortField]: { order, unmapped_type: 'keyword', ...(q.missing ? { missing: q.missing } : {}) } }]
  try {
    if (events) {
      const matches = await searchAlerts(store, ALL_ALERTS, { size: READABLE_WINDOW, query, sort, _source: ['related_doc_ids'] })
      const page = await readablePage(events, matches.hits.hits, '|', { from, size })
      if (page) {
        const hits = await alertsByIds(store, page.ids)
        const findings = await readableFindings(store, events, hits)
        const alerts = hits.map((h) => {
          const a = renderIocAlert(h)
          return { ...a, finding_ids: (a.finding_ids as string[]).filter((id) => findings.has(id)) }
        })
        return { alerts, total_alerts: page.total }
      }
    }
    const r = await searchAlerts(store, ALL_ALERTS, {
      from,
      size,
      query,
      sort,
      track_total_hits: true,
      version: true,
      seq_no_primary_term: true,
    })
    const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0)
    return { alerts: r.hits.hits.map(renderIocAlert), total_alerts: total }
  } catch (e) {
    if (e instanceof IndexNotFound) return { alerts: [], total_alerts: 0 }
    throw e
  }
}

/** The IoC alerts of these ids, in this order. */
async function alertsByIds(store: Store, ids: string[]): Promise<SearchHit[]> {
  const r = await searchAlerts(store, ALL_ALERTS, {
    size: ids.length,
    query: { bool: { filter: [IOC_ALERTS, { ids: { values: ids } }] } },
    version: true,
    seq_no_primary_term: true,
  })
  const byId = new Map(r.hits.hits.map((h) => [h._id, h]))
  return ids.flatMap((id) => byId.get(id) ?? [])
}

/** The ids among these alerts' findings that name an event the caller may read. */
async function readableFindings(store: Store, events: ReadableEvents, alerts: SearchHit[]): Promise<Set<string>> {
  const ids = [...new Set(alerts.flatMap((h) => (h._source as unknown as IocAlert).finding_ids ?? []))]
  if (ids.length === 0) return new Set()
  const r = await store
    .search({
      index: IOC_FINDINGS_PATTERN,
      expand_wildcards: 'all',
      body: { size: ids.length, query: { ids: { values: ids } }, _source: ['related_doc_ids'] },
    })
    .catch((e) => {
      if (e instanceof IndexNotFound) return undefined
      throw e
    })
  const out = new Set<string>()
  for (const h of r?.hits.hits ?? []) if ((await events.keep((h._source?.related_doc_ids as string[]) ?? [], ':')).length) out.add(h._id)
  return out
}

const FROM: Record<string, string> = { ACKNOWLEDGED: 'ACTIVE', COMPLETED: 'ACKNOWLEDGED' }

export async function updateIocAlertStatus(
  store: Store,
  now: () => number,
  q: Record<string, string | undefined>,
  events?: ReadableEvents,
): Promise<{ updated_alerts: unknown[]; failure_messages: string[] }> {
  const target = (q.state ?? '').toUpperCase()
  const from = FROM[target]
  if (!from) throw new ApiError(400, `Invalid state [${q.state ?? ''}]: alerts can be set to ACKNOWLEDGED or COMPLETED`)
  const ids = (q.alert_ids ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)
  if (ids.length === 0) throw new ApiError(400, 'alert_ids is required')
  if (ids.length > MAX_IDS) throw new ApiError(400, `At most ${MAX_IDS} alert ids at once`)
  let hits: SearchHit[] = []
  try {
    const r = await searchAlerts(store, ALL_ALERTS, {
      size: ids.length,
      query: { bool: { filter: [IOC_ALERTS, { ids: { values: ids } }, { term: { state: from } }] } },
      seq_no_primary_term: true,
    })
    hits = r.hits.hits
  } catch (e) {
    if (!(e instanceof IndexNotFound)) throw e
  }
  // An alert on events the caller may not read is not its to change: as if it did not exist.
  const readable = events && (await readablePage(events, hits, '|', { from: 0, size: hits.length }))
  if (readable) hits = hits.filter((h) => readable.ids.includes(h._id))
  if (hits.length === 0) throw new ApiError(400, `No threat intel alert in state ${from} has the ids [${ids.join(', ')}]`)
  const updated: unknown[] = []
  const failures: string[] = []
  for (const hit of hits) {
    const was = hit._source as unknown as IocAlert
    const at = now()
    const next: IocAlert =
      target === 'ACKNOWLEDGED'
        ? { ...was, state: 'ACKNOWLEDGED', acknowledged_time: at, last_updated_time: at }
        : { ...was, state: 'COMPLETED', end_time: at, acknowledged_time: was.end_time ?? null, last_updated_time: at }
    try {
      const w = await store.index({
        index: hit._index,
        id: hit._id,
        body: next as unknown as Record<string, unknown>,
        if_seq_no: hit._seq_no,
        if_primary_term: hit._primary_term,
        refresh: true,
      })
      updated.push(
        renderIocAlert({
          ...hit,
          _source: next as unknown as Record<string, unknown>,
          _version: w._version,
          _seq_no: w._seq_no,
          _primary_term: w._primary_term,
        }),
      )
    } catch (e) {
      failures.push(`alert ${hit._id}: ${(e as Error).message}`)
    }
  }
  return { updated_alerts: updated, failure_messages: failures }
}

/**
 * Reading, acknowledging and retiring detector alerts (reference 1.4-1.6). Access follows the
 * detector's: an alert is read or acknowledged through its detector, which answers 404 or 403
 * (`filter_by_backend_roles`) exactly as the detector's GET does.
 */
import type { ClusterSettings } from '../../config/cluster-settings'
import { ApiError } from '../../http/errors'
import { listParams } from './list-params'
import type { Logger } from '../../http/log'
import type { Caller } from '../../http/caller'
import { DocumentMissing, IndexNotFound, VersionConflict } from '../../store/errors'
import type { SearchHit, Store } from '../../store/port'
import type { Detectors } from '../detectors'
import type { StoredDetector } from '../model'
import { activeIndex, ALERT_SETTINGS, alertsPattern, ensureHistory, searchAlerts } from './indices'
import { renderAlert, type StoredAlert } from './model'

export interface AlertsDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
}

const SORTABLE = /^[A-Za-z0-9_.]+$/
/** Searched as text by `searchString`, sorted by their keyword sub-field. */
const TEXT_FIELDS = new Set(['monitor_name', 'trigger_name'])
const MAX_IDS = 10_000

export class Alerts {
  constructor(
    private readonly d: AlertsDeps,
    private readonly detectors: Detectors,
  ) {}

  /** `GET /_plugins/_security_analytics/alerts` with the peer's parameters and defaults. */
  async list(q: Record<string, string | undefined>, caller: Caller): Promise<{ alerts: unknown[]; total_alerts: number }> {
    const { types, detectorIds } = await this.scope(q.detector_id, q.detectorType, caller)
    const filter: unknown[] = [{ terms: { detector_id: detectorIds } }]
    const severity = q.severityLevel ?? 'ALL'
    if (severity !== 'ALL') filter.push({ term: { severity } })
    const state = q.alertState ?? 'ALL'
    if (state !== 'ALL') filter.push({ term: { state } })
    if (q.searchString)
      filter.push({ query_string: { query: q.searchString, fields: ['monitor_name', 'trigger_name'], default_operator: 'AND' } })
    if (q.startTime !== undefined && q.endTime !== undefined)
      filter.push({ range: { start_time: { gte: millis(q.startTime, this.d.now()), lte: millis(q.endTime, this.d.now()) } } })
    const { sortField, order, size, from } = listParams(q, 'start_time', (field) => SORTABLE.test(field))
    try {
      const r = await searchAlerts(this.d.store, types.map(alertsPattern), {
        from,
        size,
        query: { bool: { filter } },
        sort: [
          { [TEXT_FIELDS.has(sortField) ? `${sortField}.keyword` : sortField]: { order, ...(q.missing ? { missing: q.missing } : {}) } },
        ],
        track_total_hits: true,
        version: true,
      })
      const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0)
      return { alerts: r.hits.hits.map((h) => renderAlert(h._source as unknown as StoredAlert, h._version)), total_alerts: total }
    } catch (e) {
      if (e instanceof IndexNotFound) return { alerts: [], total_alerts: 0 }
      throw e
    }
  }

  /** `POST /detectors/{id}/_acknowledge/alerts`: only ACTIVE alerts of this detector are acknowledged. */
  async acknowledge(detectorId: string, ids: string[], caller: Caller) {
    if (ids.length === 0) throw new ApiError(400, 'alert ids list cannot be empty')
    if (ids.length > MAX_IDS) throw new ApiError(400, `At most ${MAX_IDS} alert ids can be acknowledged at once`)
    const detector = await this.visible(detectorId, caller)
    const found = (await this.find(detector.detector_type, ids)).filter(
      (h) => (h._source as unknown as StoredAlert).detector_id === detectorId,
    )
    const missing = ids.filter((id) => !found.some((h) => h._id === id))
    if (found.length === 0) throw new ApiError(404, `No alert of detector [${detectorId}] has the ids [${ids.join(', ')}]`)
    const acknowledged: unknown[] = []
    const failed: unknown[] = []
    const settings = await this.d.settings.snapshot()
    for (const hit of found) {
      const alert = hit._source as unknown as StoredAlert
      if (alert.state !== 'ACTIVE') {
        failed.push(renderAlert(alert, hit._version))
        continue
      }
      const now = this.d.now()
      const done = await this.retire(hit, (a) => ({ ...a, state: 'ACKNOWLEDGED', acknowledged_time: now }), {
        toHistory: settings.bool(ALERT_SETTINGS.historyEnabled) && alert.finding_ids.length > 0,
      })
      if (done) acknowledged.push(renderAlert(done.alert, done.version))
      else missing.push(hit._id)
    }
    return { acknowledged, failed, missing }
  }

  /**
   * The detector (or some of its triggers) went: its active alerts move to history as DELETED
   * (AlertMover); with history off they stay where they are, marked DELETED.
   */
  async retireOrphans(detectorId: string, detector: StoredDetector, keepTriggers: Set<string>): Promise<number> {
    const settings = await this.d.settings.snapshot()
    let hits: SearchHit[]
    try {
      const r = await this.d.store.search({
        index: activeIndex(detector.detector_type),
        body: {
          size: MAX_IDS,
          query: { bool: { filter: [{ term: { detector_id: detectorId } }] } },
          seq_no_primary_term: true,
          version: true,
        },
      })
      hits = r.hits.hits.filter((h) => !keepTriggers.has((h._source as unknown as StoredAlert).trigger_id))
    } catch (e) {
      if (e instanceof IndexNotFound) return 0
      throw e
    }
    const now = this.d.now()
    for (const hit of hits)
      await this.retire(hit, (a) => ({ ...a, state: 'DELETED', end_time: now }), {
        toHistory: settings.bool(ALERT_SETTINGS.historyEnabled),
      })
    if (hits.length > 0)
      this.d.log.info('alerts of a removed detector or trigger moved to DELETED', { detector: detectorId, alerts: hits.length })
    return hits.length
  }

  /**
   * Changes an active alert, copying it to history and deleting it from the active index when asked.
   * The history copy is written first and the delete is conditional: a dispatcher recording a
   * delivery in between makes the delete fail, and the move starts again from the newer copy.
   */
  private async retire(
    hit: SearchHit,
    change: (a: StoredAlert) => StoredAlert,
    opts: { toHistory: boolean },
  ): Promise<{ alert: StoredAlert; version: number } | undefined> {
    let current: SearchHit | undefined = hit
    for (let tries = 0; current && tries < 10; tries++) {
      const next = change(current._source as unknown as StoredAlert)
      try {
        if (opts.toHistory) {
          const alias = await ensureHistory(this.d.store, next.detector_type, this.d.now())
          const w = await this.d.store.index({ index: alias, id: current._id, body: next, refresh: true })
          await this.d.store.delete({
            index: current._index,
            id: current._id,
            if_seq_no: current._seq_no,
            if_primary_term: current._primary_term,
            refresh: true,
          })
          return { alert: next, version: w._version }
        }
        const w = await this.d.store.index({
          index: current._index,
          id: current._id,
          body: next,
          if_seq_no: current._seq_no,
          if_primary_term: current._primary_term,
          refresh: true,
        })
        return { alert: next, version: w._version }
      } catch (e) {
        if (!(e instanceof VersionConflict || e instanceof DocumentMissing)) throw e
        const again = await this.d.store.get({ index: current._index, id: current._id })
        current = again.found ? ({ ...again, _source: again._source } as unknown as SearchHit) : undefined
      }
    }
    return undefined
  }

  private async find(logType: string, ids: string[]): Promise<SearchHit[]> {
    try {
      const r = await this.d.store.search({
        index: [alertsPattern(logType)],
        ignore_unavailable: true,
        expand_wildcards: 'all',
        body: { size: ids.length, query: { ids: { values: ids } }, seq_no_primary_term: true, version: true },
      })
      return r.hits.hits
    } catch (e) {
      if (e instanceof IndexNotFound) return []
      throw e
    }
  }

  private async visible(id: string, caller: Caller): Promise<{ detector_type: string }> {
    const view = await this.detectors.get(id, caller)
    return { detector_type: view.detector.detector_type as string }
  }

  /** The detectors a GET alerts covers, as the caller may see them. */
  private async scope(detectorId: string | undefined, type: string | undefined, caller: Caller) {
    if (detectorId) {
      const { detector_type } = await this.visible(detectorId, caller)
      return { types: [detector_type], detectorIds: [detectorId] }
    }
    if (!type) throw new ApiError(400, 'At least one of detector type or detector id needs to be passed')
    const r = await this.detectors.search({ size: MAX_IDS, query: { term: { 'detector.detector_type': type } } }, caller)
    if (r.hits.hits.length === 0) throw new ApiError(404, 'No detectors found for provided type')
    return { types: [type], detectorIds: r.hits.hits.map((h) => h._id) }
  }
}

/** Epoch millis; an unparsable value is "now", as the peer reads it. */
function millis(v: string, now: number): number {
  const n = Number(v)
  return Number.isFinite(n) && v.trim() !== '' ? n : now
}

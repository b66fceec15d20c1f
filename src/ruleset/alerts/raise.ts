/**
 * Alerts of one detector run's findings (reference 1.2, 2.3): for each trigger, one alert per
 * matched document, with its notifications (one per action, rendered now with the peer's `ctx`) in
 * the alert document itself. Ids are deterministic (detector, trigger, the document's findings), and
 * alerts are written with op_type create before the run's checkpoint moves: a batch repeated after a
 * crash finds its alerts there (409) and raises none twice, and a crash before they are written
 * repeats the batch, so none is lost.
 */
import type { Logger } from '../../http/log'
import { outboxOf, type PendingDelivery } from '../../notifications/outbox-model'
import { render } from '../../notifications/template'
import { IndexNotFound } from '../../store/errors'
import type { BulkLine, Store } from '../../store/port'
import type { FindingInput, FindingRule } from '../findings/writer'
import type { StoredDetector, Trigger } from '../model'
import { activeIndex, ensureActive, ensureHistory } from './indices'
import type { ActionExecutionResult, StoredAlert, TriggerAction } from './model'
import { ensureCorrelationAlerts, type StoredCorrelationAlert } from './correlation'
import { conditionSource, triggerMatches } from './trigger'

export const ALERT_SCHEMA_VERSION = 5
/** Failures kept in an ERROR alert's `alert_history`. */
const MAX_ERROR_HISTORY = 10

const errorAlertId = (detectorId: string, detector: StoredDetector) => `error-alert-${detector.monitor_id?.[0] ?? detectorId}`

export interface AlertRaiserDeps {
  store: Store
  log: Logger
  now: () => number
  /** Told when new alerts owe notifications (the dispatcher runs a pass). */
  onPending?: () => void
}

const hash = (...parts: string[]) => {
  const h = new Bun.CryptoHasher('sha256')
  h.update(parts.join('\u0000'))
  return h.digest('base64url').slice(0, 32)
}

/** A new alert of a detector's monitor: the fields a trigger's alert and the ERROR alert differ in are given. */
function newAlert(
  id: string,
  detectorId: string,
  detector: StoredDetector,
  now: number,
  f: Pick<StoredAlert, 'trigger_id' | 'trigger_name' | 'finding_ids' | 'related_doc_ids' | 'state' | 'severity' | 'associated_queries'>,
): StoredAlert {
  return {
    id,
    version: 1,
    schema_version: ALERT_SCHEMA_VERSION,
    detector_id: detectorId,
    detector_type: detector.detector_type,
    monitor_id: detector.monitor_id?.[0] ?? detectorId,
    monitor_name: detector.name,
    trigger_id: f.trigger_id,
    trigger_name: f.trigger_name,
    finding_ids: f.finding_ids,
    related_doc_ids: f.related_doc_ids,
    state: f.state,
    error_message: null,
    alert_history: [],
    severity: f.severity,
    action_execution_results: [],
    start_time: now,
    last_notification_time: null,
    end_time: null,
    acknowledged_time: null,
    associated_queries: f.associated_queries,
    ...(detector.user ? { user: detector.user } : {}),
  }
}

export const triggerId = (t: Trigger) => t.id ?? t.name

/** What an IoC alert needs of an IoC finding. */
export interface IocAlertFinding {
  id: string
  ioc_type: string
  ioc_value: string
  related_doc_ids: string[]
}

const iocFieldsEnsured = new WeakMap<Store, Set<string>>()

/** Active alert indices created before IoC alerts lack their two fields: added once. */
async function ensureIocFields(store: Store, index: string): Promise<void> {
  let done = iocFieldsEnsured.get(store)
  if (!done) iocFieldsEnsured.set(store, (done = new Set()))
  if (done.has(index)) return
  await store.putMapping({
    index,
    expand_wildcards: 'all',
    body: {
      properties: {
        ioc_type: { type: 'keyword' },
        ioc_value: { type: 'keyword' },
        last_updated_time: { type: 'date', format: 'epoch_millis||strict_date_optional_time' },
      },
    },
  })
  done.add(index)
}
export const actionId = (a: TriggerAction) => a.id ?? a.name

/** What a correlation finding says of its firing (`svc.correlation`, see correlation/detector.ts). */
interface Firing {
  rule: { id: string; title?: string; name?: string }
  window: { start: string; timespan_ms: number }
  findings: string[]
}

function correlationOf(f: FindingInput): Firing | undefined {
  const svc = f.event._source.svc as { correlation?: Firing } | undefined
  return svc && typeof svc === 'object' ? svc.correlation : undefined
}

export class AlertRaiser {
  constructor(private readonly d: AlertRaiserDeps) {}

  /** Raises the alerts of these findings (any order); answers how many were new. */
  async raise(detectorId: string, detector: StoredDetector, findings: Array<FindingInput & { id: string }>): Promise<number> {
    const triggers = detector.triggers ?? []
    if (triggers.length === 0 || findings.length === 0) return 0
    const byDoc = new Map<string, Array<FindingInput & { id: string }>>()
    const correlations: Array<FindingInput & { id: string }> = []
    for (const f of findings) {
      if (correlationOf(f)) {
        correlations.push(f)
        continue
      }
      const key = `${f.event._id}|${f.event._index}`
      const list = byDoc.get(key)
      if (list) list.push(f)
      else byDoc.set(key, [f])
    }
    const now = this.d.now()
    const alerts: StoredAlert[] = []
    const correlationAlerts: StoredCorrelationAlert[] = []
    for (const trigger of triggers) {
      for (const [doc, docFindings] of byDoc) {
        const rules = triggerMatches(
          trigger,
          docFindings.map((f) => f.rule),
        )
        if (!rules) continue
        const finding = docFindings.filter((f) => rules.includes(f.rule)).sort((a, b) => (a.id < b.id ? -1 : 1))[0]
        alerts.push(this.alert(detectorId, detector, trigger, doc, finding, rules, now))
      }
      for (const f of correlations)
        if (triggerMatches(trigger, [f.rule])) correlationAlerts.push(this.correlationAlert(detectorId, detector, trigger, f, now))
    }
    const lines: BulkLine[] = []
    if (alerts.length > 0) {
      const index = await ensureActive(this.d.store, detector.detector_type)
      for (const a of alerts) lines.push({ create: { _index: index, _id: a.id } }, a as unknown as BulkLine)
    }
    if (correlationAlerts.length > 0) {
      const index = await ensureCorrelationAlerts(this.d.store)
      for (const a of correlationAlerts) lines.push({ create: { _index: index, _id: a.id } }, a as unknown as BulkLine)
    }
    if (lines.length === 0) return 0
    const r = await this.d.store.bulk({ body: lines, refresh: true })
    let created = 0
    const failed: string[] = []
    for (const item of r.items) {
      const x = item.create!
      if (x.status === 201) created++
      else if (x.status !== 409) failed.push(x.error?.reason ?? `status ${x.status}`)
    }
    // Not written: the run stops before its checkpoint, and the batch is raised again.
    if (failed.length > 0) throw new Error(`detector ${detectorId}: ${failed.length} alerts could not be written (${failed[0]})`)
    if (created > 0 && [...alerts, ...correlationAlerts].some((a) => a.svc_outbox?.pending)) this.d.onPending?.()
    return created
  }

  /**
   * Alerts of IoC findings (reference 3.3): every trigger with `threat_intel` among its detection
   * types alerts on them, one alert per (trigger, IoC type, IoC value) while it is ACTIVE or
   * ACKNOWLEDGED, a later finding of the same value appended to it (notified once, when created).
   * The new alert's id comes from its first finding, so a repeated run appends or creates nothing twice.
   */
  async raiseIoc(detectorId: string, detector: StoredDetector, findings: IocAlertFinding[]): Promise<number> {
    const triggers = (detector.triggers ?? []).filter((t) => t.detection_types?.includes('threat_intel'))
    if (triggers.length === 0 || findings.length === 0) return 0
    const index = await ensureActive(this.d.store, detector.detector_type)
    await ensureIocFields(this.d.store, index)
    const now = this.d.now()
    let created = 0
    for (const trigger of triggers) {
      const tid = triggerId(trigger)
      for (const f of findings) {
        const docs = f.related_doc_ids.map((d) => d.replace(/:(?=[^:]*$)/, '|'))
        const open = await this.d.store.search({
          index,
          expand_wildcards: 'all',
          body: {
            size: 1,
            seq_no_primary_term: true,
            query: {
              bool: {
                filter: [
                  { term: { detector_id: detectorId } },
                  { term: { trigger_id: tid } },
                  { term: { ioc_type: f.ioc_type } },
                  { term: { ioc_value: f.ioc_value } },
                  { terms: { state: ['ACTIVE', 'ACKNOWLEDGED'] } },
                ],
              },
            },
          },
        })
        const hit = open.hits.hits[0]
        if (hit) {
          const was = hit._source as unknown as StoredAlert
          if (was.finding_ids.includes(f.id)) continue
          const next = {
            ...was,
            last_updated_time: now,
            finding_ids: [...was.finding_ids, f.id],
            related_doc_ids: [...new Set([...was.related_doc_ids, ...docs])],
          }
          await this.d.store.index({
            index,
            id: hit._id,
            body: next,
            if_seq_no: hit._seq_no,
            if_primary_term: hit._primary_term,
            refresh: true,
          })
          continue
        }
        const rule: FindingRule = { id: `threat_intel_${f.ioc_type}`, title: `threat_intel ${f.ioc_type}`, tags: ['threat_intel'] }
        const alert: StoredAlert = {
          ...this.alert(detectorId, detector, trigger, docs.join(','), { id: f.id } as FindingInput & { id: string }, [rule], now),
          related_doc_ids: docs,
          ioc_type: f.ioc_type,
          ioc_value: f.ioc_value,
          last_updated_time: now,
        }
        const r = await this.d.store.bulk({
          body: [{ create: { _index: index, _id: alert.id } }, alert as unknown as BulkLine],
          refresh: true,
        })
        const x = r.items[0].create!
        if (x.status === 201) {
          created++
          if (alert.svc_outbox?.pending) this.d.onPending?.()
        } else if (x.status !== 409)
          throw new Error(`detector ${detectorId}: an IoC alert could not be written (${x.error?.reason ?? x.status})`)
      }
    }
    return created
  }

  /**
   * A failed run of a detector with triggers upserts its one ERROR alert (`error-alert-<monitor
   * id>`, reference 1.4), its message and history updated at each failure; no notification is sent
   * for it (the peer's PER_EXECUTION fallback is not done).
   */
  async runFailed(detectorId: string, detector: StoredDetector, message: string): Promise<void> {
    if ((detector.triggers ?? []).length === 0) return
    const index = await ensureActive(this.d.store, detector.detector_type)
    const id = errorAlertId(detectorId, detector)
    const now = this.d.now()
    const got = await this.d.store.get({ index, id })
    const was = got.found ? (got._source as unknown as StoredAlert) : undefined
    const alert: StoredAlert = {
      ...(was ??
        newAlert(id, detectorId, detector, now, {
          trigger_id: '',
          trigger_name: '',
          finding_ids: [],
          related_doc_ids: [],
          state: 'ERROR',
          severity: '1',
          associated_queries: [],
        })),
      error_message: message,
      alert_history: [...(was?.alert_history ?? []), { timestamp: now, message }].slice(-MAX_ERROR_HISTORY),
    }
    await this.d.store.index({ index, id, body: alert, refresh: true })
  }

  /** The run after a failure succeeded: the ERROR alert ends, into history when it is on (else it goes). */
  async runSucceeded(detectorId: string, detector: StoredDetector, historyEnabled: boolean): Promise<void> {
    if ((detector.triggers ?? []).length === 0) return
    const index = activeIndex(detector.detector_type)
    const id = errorAlertId(detectorId, detector)
    let got
    try {
      got = await this.d.store.get({ index, id })
    } catch (e) {
      if (e instanceof IndexNotFound) return
      throw e
    }
    if (!got.found) return
    if (historyEnabled) {
      const ended = { ...(got._source as unknown as StoredAlert), end_time: this.d.now() }
      await this.d.store.index({
        index: await ensureHistory(this.d.store, detector.detector_type, this.d.now()),
        id,
        body: ended,
        refresh: true,
      })
    }
    await this.d.store.delete({ index, id, refresh: true })
  }

  private correlationAlert(
    detectorId: string,
    detector: StoredDetector,
    trigger: Trigger,
    f: FindingInput & { id: string },
    now: number,
  ): StoredCorrelationAlert {
    const c = correlationOf(f)!
    const tid = triggerId(trigger)
    const id = hash(detectorId, tid, f.id)
    const start = Date.parse(c.window.start)
    const alert: StoredCorrelationAlert = {
      id,
      version: 1,
      schema_version: ALERT_SCHEMA_VERSION,
      correlated_finding_ids: c.findings,
      correlation_rule_id: c.rule.id,
      correlation_rule_name: c.rule.title ?? c.rule.name ?? c.rule.id,
      detector_id: detectorId,
      user: detector.user ?? null,
      trigger_name: trigger.name,
      severity: trigger.severity ?? '1',
      state: 'ACTIVE',
      start_time: now,
      end_time: now + c.window.timespan_ms,
      acknowledged_time: null,
      error_message: null,
      action_execution_results: [],
    }
    // The peer's CorrelationAlertContext, beside the detector context the trigger's templates may use.
    const ctx = {
      ...this.context(
        detectorId,
        detector,
        trigger,
        { ...this.alert(detectorId, detector, trigger, `${f.event._id}|${f.event._index}`, f, [f.rule], now, false), id },
        now,
      ),
      correlatedFindingIds: c.findings,
      sourceFinding: f.id,
      correlationRuleName: alert.correlation_rule_name,
      timeWindow: { start: Number.isNaN(start) ? now : start, timespan_ms: c.window.timespan_ms },
    }
    const outbox = this.outbox(id, detectorId, tid, trigger, ctx, now)
    if (outbox) Object.assign(alert, outbox)
    return alert
  }

  /** The trigger's actions as deliveries owed by the alert `id`, rendered now. */
  private outbox(id: string, detectorId: string, tid: string, trigger: Trigger, ctx: Record<string, unknown>, now: number) {
    const actions = (trigger.actions ?? []) as TriggerAction[]
    if (actions.length === 0) return undefined
    const deliveries: PendingDelivery[] = actions.map((a) => {
      const aid = actionId(a)
      const subject = render(a.subject_template, ctx)
      return {
        action_id: aid,
        destination_id: a.destination_id,
        message: { title: subject || 'Alerting-Notification Action', text: render(a.message_template, ctx) },
        key: `${id}:${aid}`,
        state: 'pending',
        attempts: 0,
        next_at: now,
        ...(a.throttle_enabled && a.throttle ? { throttle: { minutes: a.throttle.value, scope: hash(detectorId, tid, aid) } } : {}),
      }
    })
    return {
      action_execution_results: deliveries.map((x): ActionExecutionResult => ({
        action_id: x.action_id,
        last_execution_time: null,
        throttled_count: 0,
        delivery_state: 'pending',
        attempts: [],
      })),
      svc_outbox: outboxOf(deliveries),
    }
  }

  private alert(
    detectorId: string,
    detector: StoredDetector,
    trigger: Trigger,
    doc: string,
    finding: FindingInput & { id: string },
    rules: FindingRule[],
    now: number,
    withOutbox = true,
  ): StoredAlert {
    const tid = triggerId(trigger)
    const id = hash(detectorId, tid, finding.id)
    const alert = newAlert(id, detectorId, detector, now, {
      trigger_id: tid,
      trigger_name: trigger.name,
      finding_ids: [finding.id],
      related_doc_ids: [doc],
      state: 'ACTIVE',
      severity: trigger.severity ?? '1',
      associated_queries: rules.map((r) => ({
        id: r.id,
        name: r.title ?? r.id,
        tags: [...new Set([r.level, r.category, ...(r.tags ?? [])].filter(Boolean) as string[])],
      })),
    })
    if (withOutbox) {
      const outbox = this.outbox(id, detectorId, tid, trigger, this.context(detectorId, detector, trigger, alert, now), now)
      if (outbox) Object.assign(alert, outbox)
    }
    return alert
  }

  /** The peer's `ctx` (`TriggerExecutionContext`, `AlertContext`), for one PER_ALERT action. */
  private context(detectorId: string, detector: StoredDetector, trigger: Trigger, alert: StoredAlert, now: number) {
    return {
      monitor: {
        _id: alert.monitor_id,
        _version: 1,
        name: detector.name,
        enabled: detector.enabled,
        monitor_type: 'doc_level_monitor',
        enabled_time: detector.enabled_time,
        last_update_time: detector.last_update_time,
        schedule: detector.schedule,
        inputs: detector.inputs,
        detector_id: detectorId,
      },
      trigger: {
        id: alert.trigger_id,
        name: trigger.name,
        severity: alert.severity,
        actions: trigger.actions ?? [],
        condition: { script: { source: conditionSource(trigger), lang: 'painless' } },
      },
      alerts: [
        {
          id: alert.id,
          version: alert.version,
          state: alert.state,
          severity: alert.severity,
          start_time: alert.start_time,
          last_notification_time: null,
          end_time: null,
          acknowledged_time: null,
          error_message: null,
          execution_id: null,
          workflow_id: '',
          finding_ids: alert.finding_ids.join(','),
          related_doc_ids: alert.related_doc_ids.join(','),
          associated_queries: alert.associated_queries,
        },
      ],
      results: [],
      periodStart: now,
      periodEnd: now,
      error: null,
    }
  }
}

/**
 * Alert indices as SA names them (reference 1.4): `.opensearch-sap-<logtype>-alerts` for active
 * alerts, and history behind the write alias `.opensearch-sap-<logtype>-alerts-history`, created as
 * `...-history-<yyyy.MM.dd>-1` and rolled over by `rollOver` with the peer's settings
 * (`alert_history_max_age`, `_max_docs`, checked every `alert_history_rollover_period`; indices
 * older than `alert_history_retention_period` deleted). GET alerts searches `...-alerts*`, both.
 */
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { firstHistoryIndex, type HistoryFamily, rollOverHistory } from '../history-indices'
import type { Logger } from '../../http/log'
import { OUTBOX_MAPPING } from '../../notifications/outbox-model'
import { AlreadyExists } from '../../store/errors'
import type { Mappings, SearchBody, Store } from '../../store/port'

export const ALERT_SETTINGS = {
  historyEnabled: 'plugins.security_analytics.alert_history_enabled',
  maxAge: 'plugins.security_analytics.alert_history_max_age',
  maxDocs: 'plugins.security_analytics.alert_history_max_docs',
  retention: 'plugins.security_analytics.alert_history_retention_period',
  rolloverPeriod: 'plugins.security_analytics.alert_history_rollover_period',
} as const

const kw = { type: 'keyword' }
const date = { type: 'date', format: 'epoch_millis||strict_date_optional_time' }
export const ALERT_MAPPING: Mappings = {
  dynamic: false,
  properties: {
    id: kw,
    detector_id: kw,
    detector_type: kw,
    monitor_id: kw,
    monitor_name: { type: 'text', fields: { keyword: kw } },
    trigger_id: kw,
    trigger_name: { type: 'text', fields: { keyword: kw } },
    finding_ids: kw,
    related_doc_ids: kw,
    state: kw,
    severity: kw,
    start_time: date,
    end_time: date,
    acknowledged_time: date,
    last_notification_time: date,
    user: { properties: { name: kw, backend_roles: kw, roles: kw } },
    svc_outbox: OUTBOX_MAPPING,
    // Correlation alerts (same mapping, their own index).
    correlation_rule_id: kw,
    correlation_rule_name: kw,
    // Alerts on IoC findings, deduplicated on (trigger, ioc_type, ioc_value).
    ioc_type: kw,
    ioc_value: kw,
    last_updated_time: date,
  },
}

/** Index names may not hold upper case or most punctuation; log types are lower-cased names. */
const safe = (logType: string) => logType.toLowerCase().replace(/[^a-z0-9_-]/g, '_')
export const activeIndex = (logType: string) => `.opensearch-sap-${safe(logType)}-alerts`
export const historyAlias = (logType: string) => `.opensearch-sap-${safe(logType)}-alerts-history`
export const alertsPattern = (logType: string) => `.opensearch-sap-${safe(logType)}-alerts*`
export const ALL_ALERTS = '.opensearch-sap-*-alerts*'

const ensured = new WeakMap<Store, Set<string>>()

async function createIndex(store: Store, index: string, aliases?: Record<string, object>): Promise<void> {
  try {
    await store.createIndex({
      index,
      body: {
        settings: { index: { hidden: true, number_of_shards: 1, auto_expand_replicas: '0-1' } },
        mappings: ALERT_MAPPING,
        ...(aliases ? { aliases } : {}),
      },
    })
  } catch (e) {
    if (!(e instanceof AlreadyExists)) throw e
  }
}

export async function ensureActive(store: Store, logType: string): Promise<string> {
  const index = activeIndex(logType)
  await ensureOnce(store, index, async () => {
    if (!(await store.existsIndex({ index, expand_wildcards: 'all' }))) await createIndex(store, index)
  })
  return index
}

/** The history write alias, its first index created when missing. */
export async function ensureHistory(store: Store, logType: string, now: number): Promise<string> {
  const alias = historyAlias(logType)
  await ensureOnce(store, alias, async () => {
    if (await store.existsIndex({ index: alias, expand_wildcards: 'all' })) return
    await createIndex(store, firstHistoryIndex(alias, now), { [alias]: { is_write_index: true } })
  })
  return alias
}

async function ensureOnce(store: Store, key: string, create: () => Promise<void>): Promise<void> {
  let done = ensured.get(store)
  if (!done) ensured.set(store, (done = new Set()))
  if (done.has(key)) return
  await create()
  done.add(key)
}

export function forgetAlertIndices(store: Store): void {
  ensured.delete(store)
}

/** The alert history family (reference 1.4), rolled over by the shared history job. */
export const ALERT_HISTORY = (store: Store): HistoryFamily => ({
  name: 'alert history',
  pattern: '.opensearch-sap-*-alerts-history-*',
  settings: ALERT_SETTINGS,
  create: (index, aliases) => createIndex(store, index, aliases),
})

/** One rollover check of every alert history alias (the peer's `DetectorIndexManagementService`). */
export const rollOver = (store: Store, settings: SettingsSnapshot, now: number, log: Logger) =>
  rollOverHistory(store, ALERT_HISTORY(store), settings, now, log)

/** A search of alert indices: hidden ones included (they are dot-named), missing ones skipped. */
export function searchAlerts(store: Store, index: string | string[], body: SearchBody) {
  return store.search({ index, expand_wildcards: 'all', ignore_unavailable: true, body })
}

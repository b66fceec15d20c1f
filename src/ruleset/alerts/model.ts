/**
 * Detector alerts (reference 1.3): the stored document (epoch millis, as Alerting stores it) and
 * the answer (SA's AlertDto: ISO times, explicit nulls). An alert also carries its pending
 * notifications (`svc_outbox`, see src/notifications/outbox.ts), written in the same document so
 * that an alert never exists without the deliveries it owes.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import type { OutboxState } from '../../notifications/outbox-model'
import { Template } from '../../notifications/template'
import type { StoredUser } from '../model'
import { iso } from '../model'

/** A trigger action (`cu/alerting/model/action/Action.kt`); unknown keys are refused, as there. */
export const TriggerAction = T.Object(
  {
    id: T.Optional(T.String()),
    name: T.String({ minLength: 1 }),
    destination_id: T.String({ minLength: 1 }),
    subject_template: T.Optional(Template),
    message_template: Template,
    throttle_enabled: T.Optional(T.Boolean()),
    throttle: T.Optional(
      T.Object({ value: T.Integer({ minimum: 1 }), unit: T.Optional(T.Literal('MINUTES')) }, { additionalProperties: false }),
    ),
    action_execution_policy: T.Optional(T.Unknown()),
  },
  { additionalProperties: false },
)
export type TriggerAction = Static<typeof TriggerAction>

export type AlertState = 'ACTIVE' | 'ACKNOWLEDGED' | 'COMPLETED' | 'ERROR' | 'DELETED'

/** One attempt to deliver one action of an alert. */
export interface AttemptRecord {
  time: number
  status_code: string
  status_text: string
}

/**
 * `action_execution_results[]` as the peer has it (`action_id`, `last_execution_time`,
 * `throttled_count`), plus what the peer never records: the delivery's state and each attempt.
 */
export interface ActionExecutionResult {
  action_id: string
  last_execution_time: number | null
  throttled_count: number
  delivery_state: 'pending' | 'delivered' | 'throttled' | 'dead_letter'
  attempts: AttemptRecord[]
}

export interface StoredAlert {
  id: string
  version: number
  schema_version: number
  detector_id: string
  /** The detector's log type: names the alert indices. */
  detector_type: string
  monitor_id: string
  monitor_name: string
  trigger_id: string
  trigger_name: string
  finding_ids: string[]
  related_doc_ids: string[]
  state: AlertState
  error_message: string | null
  alert_history: Array<{ timestamp: number; message: string }>
  severity: string
  action_execution_results: ActionExecutionResult[]
  start_time: number
  last_notification_time: number | null
  end_time: number | null
  acknowledged_time: number | null
  /** The rules that matched the document (Alerting's `associated_queries`). */
  associated_queries: Array<{ id: string; name: string; tags: string[] }>
  /** The detector's owner, so reads can follow `filter_by_backend_roles`. */
  user?: StoredUser
  svc_outbox?: OutboxState
  /** Of an alert on IoC findings (threat intel): the IoC type and value it stands for. */
  ioc_type?: string
  ioc_value?: string
  last_updated_time?: number
}

/** SA's AlertDto. */
export function renderAlert(a: StoredAlert, version = a.version): Record<string, unknown> {
  return {
    detector_id: a.detector_id,
    id: a.id,
    version,
    schema_version: a.schema_version,
    trigger_id: a.trigger_id,
    trigger_name: a.trigger_name,
    finding_ids: a.finding_ids,
    related_doc_ids: a.related_doc_ids,
    ...(a.ioc_type !== undefined ? { ioc_type: a.ioc_type, ioc_value: a.ioc_value } : {}),
    state: a.state,
    error_message: a.error_message,
    alert_history: a.alert_history,
    severity: a.severity,
    action_execution_results: a.action_execution_results.map((r) => ({
      ...r,
      last_execution_time: iso(r.last_execution_time),
      attempts: r.attempts.map((x) => ({ ...x, time: iso(x.time) })),
    })),
    start_time: iso(a.start_time),
    last_notification_time: iso(a.last_notification_time),
    end_time: iso(a.end_time),
    acknowledged_time: iso(a.acknowledged_time),
  }
}

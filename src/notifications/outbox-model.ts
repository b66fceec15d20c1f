/**
 * The outbox as stored inside the document that owes the notifications (an alert, a case
 * notification): written with that document in one write, so a crash can lose neither without the
 * other. `pending` and `next_at` are what the dispatcher searches on.
 */
import type { Message } from './send'

export interface PendingDelivery {
  action_id: string
  destination_id: string
  message: Message
  /** Sent as `Idempotency-Key`: the same on every attempt of this delivery. */
  key: string
  state: 'pending' | 'delivered' | 'throttled' | 'dead_letter'
  attempts: number
  /** Epoch millis of the next attempt (or when a claimed attempt is deemed lost). */
  next_at: number
  /** Minutes between two sends of the same action (`throttle_enabled`), and what it is counted per. */
  throttle?: { minutes: number; scope: string }
}

export interface OutboxState {
  pending: boolean
  next_at: number | null
  deliveries: PendingDelivery[]
}

/** The document fields the dispatcher reads and writes. */
export interface OutboxDocument {
  svc_outbox?: OutboxState
  action_execution_results: Array<{
    action_id: string
    last_execution_time: number | null
    throttled_count: number
    delivery_state: PendingDelivery['state']
    attempts: Array<{ time: number; status_code: string; status_text: string }>
  }>
  last_notification_time?: number | null
}

export function outboxOf(deliveries: PendingDelivery[]): OutboxState {
  const due = deliveries.filter((d) => d.state === 'pending').map((d) => d.next_at)
  return { pending: due.length > 0, next_at: due.length > 0 ? Math.min(...due) : null, deliveries }
}

/** The mapping of the outbox fields, merged into each owning index's mapping. */
export const OUTBOX_MAPPING = { properties: { pending: { type: 'boolean' }, next_at: { type: 'long' } } }

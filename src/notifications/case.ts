/**
 * Case updates on findings tell a channel (`plugins.security_analytics.case_notification.channel_id`,
 * empty: none): one outbox document per updated finding in `.svc-notifications-outbox`, delivered by
 * the dispatcher like an alert's notifications (retries, dead letter, idempotency key). The case is
 * written first with the caller's rights, then its notification: a crash in between loses that one
 * notification (the case update itself is not lost), which the README states.
 */
import type { ClusterSettings } from '../config/cluster-settings'
import type { Logger } from '../http/log'
import type { BulkLine, Store } from '../store/port'
import { CASE_OUTBOX_INDEX } from './outbox'
import { outboxOf, OUTBOX_MAPPING, type PendingDelivery } from './outbox-model'
import { AlreadyExists } from '../store/errors'

export const CASE_CHANNEL = 'plugins.security_analytics.case_notification.channel_id'

export interface CaseChange {
  _id: string
  _index: string
  case: { status?: string | null; user?: { name?: string | null } | null; title?: string | null; severity?: string | null }
}

export type CaseNotifier = (changes: CaseChange[], by: string) => Promise<void>

export function caseNotifier(d: {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  onPending?: () => void
}): CaseNotifier {
  let ensured = false
  return async (changes, by) => {
    const channel = (await d.settings.snapshot()).str(CASE_CHANNEL)
    if (!channel || changes.length === 0) return
    if (!ensured) {
      try {
        await d.store.createIndex({
          index: CASE_OUTBOX_INDEX,
          body: {
            settings: { index: { hidden: true, number_of_shards: 1 } },
            mappings: { dynamic: false, properties: { svc_outbox: OUTBOX_MAPPING } },
          },
        })
      } catch (e) {
        if (!(e instanceof AlreadyExists)) throw e
      }
      ensured = true
    }
    const now = d.now()
    const lines: BulkLine[] = changes.flatMap((c) => {
      const id = crypto.randomUUID()
      const fields = [
        c.case.status !== undefined ? `status: ${c.case.status}` : undefined,
        c.case.user !== undefined ? `assignee: ${c.case.user?.name ?? 'none'}` : undefined,
        c.case.severity !== undefined ? `severity: ${c.case.severity}` : undefined,
        c.case.title !== undefined ? `title: ${c.case.title}` : undefined,
      ].filter(Boolean)
      const delivery: PendingDelivery = {
        action_id: 'case_update',
        destination_id: channel,
        message: {
          title: `Case updated on finding ${c._id}`,
          text: `Finding ${c._id} (${c._index}) case updated by ${by}: ${fields.join(', ') || 'no field changed'}`,
        },
        key: id,
        state: 'pending',
        attempts: 0,
        next_at: now,
      }
      return [
        { create: { _index: CASE_OUTBOX_INDEX, _id: id } },
        {
          finding_id: c._id,
          finding_index: c._index,
          created_at: now,
          action_execution_results: [
            { action_id: 'case_update', last_execution_time: null, throttled_count: 0, delivery_state: 'pending', attempts: [] },
          ],
          svc_outbox: outboxOf([delivery]),
        },
      ]
    })
    const r = await d.store.bulk({ body: lines, refresh: true })
    if (r.errors) d.log.warn('case update notifications could not all be queued', { failed: r.items.filter((i) => i.create?.error).length })
    d.onPending?.()
  }
}

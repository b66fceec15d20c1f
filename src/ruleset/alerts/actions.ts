/**
 * Trigger actions as Alerting parses them (`Action.kt`, `Throttle.kt`), for detector triggers and
 * threat-intel monitor triggers alike: the shape, the throttle bounds, the templates, and (beyond
 * the peer, which finds out at the first alert) the channel each names existing when the trigger
 * is written.
 */
import { ApiError } from '../../http/errors'
import { checkTemplate, templateSource } from '../../notifications/template'
import { check } from '../model'
import { TriggerAction } from './model'

/** The longest throttle Alerting accepts (`plugins.alerting.action_throttle_max_value`, 24h). */
const MAX_THROTTLE_MINUTES = 24 * 60

/** Whether a `destination_id` names a notification channel (absent: channels are not checked). */
export type DestinationExists = (id: string) => Promise<boolean>

/** 400 naming what is wrong with one action of a trigger. */
export function checkAction(trigger: string, action: unknown): TriggerAction {
  const a = check(TriggerAction, action, `action of trigger [${trigger}]`)
  if (a.throttle_enabled && !a.throttle)
    throw new ApiError(400, `Trigger [${trigger}] action [${a.name}]: throttle_enabled needs a throttle`)
  if (a.throttle && a.throttle.value > MAX_THROTTLE_MINUTES)
    throw new ApiError(400, `Trigger [${trigger}] action [${a.name}]: throttle cannot exceed ${MAX_THROTTLE_MINUTES} minutes`)
  checkTemplate(a.subject_template, `subject_template of action [${a.name}]`)
  checkTemplate(a.message_template, `message_template of action [${a.name}]`)
  if (templateSource(a.message_template).trim() === '')
    throw new ApiError(400, `Trigger [${trigger}] action [${a.name}]: message_template is empty`)
  return a
}

/** Every action's channel must exist when the trigger is written, not fail at its first alert. */
export async function checkDestinations(
  triggers: Array<{ name: string; actions?: unknown[] }>,
  exists: DestinationExists | undefined,
): Promise<void> {
  if (!exists) return
  for (const t of triggers)
    for (const a of (t.actions ?? []) as TriggerAction[])
      if (!(await exists(a.destination_id)))
        throw new ApiError(400, `Trigger [${t.name}] action [${a.name}]: notification channel [${a.destination_id}] not found`)
}

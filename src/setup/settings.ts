import { Type as T, type Static } from '@sinclair/typebox'
import type { ClusterSettings } from '../config/cluster-settings'
import { SMALL_BODY } from '../http/body'
import { ApiError } from '../http/errors'
import type { Logger } from '../http/log'
import { objectBody } from '../http/route'
import { checkBody } from '../http/validate'
import { parseObjectText } from '../http/route-body'
import { INDEX_ACTIONS } from '../security/actions'
import type { Caller, Security } from '../http/caller'
import { callerStore, securityRefusal } from '../security/platform/caller-store'
import type { Store } from '../store/port'
import { SETTINGS_DOC_ID, SETTINGS_INDEX } from './indices'

/** `PUT /_plugins/_setup/settings`, reference section 2, step by step. */

export const SETTINGS_MESSAGES = {
  disabled: 'Setup settings updates are disabled on this deployment.',
  invalidBody: 'Invalid request body.',
  missingEngine: "Missing required field: 'engine'.",
  missingIndexRawEvents: "Missing required field: 'engine.index_raw_events'.",
  notBoolean: "Field 'engine.index_raw_events' must be of type boolean.",
  updated: 'Settings updated successfully.',
  internal: 'Internal Server Error.',
} as const

/** The Settings record (spec "Resources"): the declared body of the route and its validation, with the reference's messages. */
export const SettingsRecord = T.Object(
  {
    engine: T.Object(
      { index_raw_events: T.Boolean({ message: SETTINGS_MESSAGES.notBoolean, missing: SETTINGS_MESSAGES.missingIndexRawEvents }) },
      { message: SETTINGS_MESSAGES.missingEngine },
    ),
  },
  { message: SETTINGS_MESSAGES.missingEngine },
)
export type SettingsRecord = Static<typeof SettingsRecord>

export interface SetupSettingsDeps {
  store: Store
  settings: ClusterSettings
  security: Security
  log: Logger
  /** Platform mode: the store bound to a caller's credentials (see callerStore). */
  storeFor?: (caller: Caller) => Store
}

/** The route's declared body: steps 2-6 (size, emptiness, JSON, the record's fields) are the runner's. */
export const SETTINGS_BODY = objectBody(SMALL_BODY, SettingsRecord, {
  // Only the one known path reaches the store; unknown keys are ignored.
  parse: (body): SettingsRecord => ({ engine: { index_raw_events: checkBody(SettingsRecord, body).engine.index_raw_events } }),
})

/** Steps 2-6 on a body's text: the Settings record, or the first failing rule's 400. */
export function parseSettingsRecord(text: string | undefined): SettingsRecord {
  return parseObjectText(text ?? '', SETTINGS_BODY)
}

/** Step 1, before the body: the node setting that disables updates, for every caller including superusers. */
export async function settingsUpdatesEnabled(deps: Pick<SetupSettingsDeps, 'settings'>): Promise<void> {
  const s = await deps.settings.snapshot()
  if (!s.bool('plugins.setup.settings_update.enabled')) throw new ApiError(403, SETTINGS_MESSAGES.disabled)
}

export async function updateSetupSettings(
  deps: SetupSettingsDeps,
  caller: Caller,
  record: SettingsRecord,
): Promise<{ message: string; status: 200 }> {
  // The write is done with the caller's rights (reference 2 step 9): a denial, ours or the
  // platform's, is answered with its own status and message; any other failure is a 500.
  const store = callerStore(deps, caller, INDEX_ACTIONS.index, [SETTINGS_INDEX])
  try {
    await store.index({ index: SETTINGS_INDEX, id: SETTINGS_DOC_ID, body: { ...record }, refresh: true })
  } catch (e) {
    const refused = securityRefusal(e)
    if (refused) throw new ApiError(refused.status, refused.message)
    deps.log.error('setup settings not persisted', { error: e })
    throw new ApiError(500, SETTINGS_MESSAGES.internal)
  }
  return { message: SETTINGS_MESSAGES.updated, status: 200 }
}

/** The current Settings record (the default when none was written yet). */
export async function readSetupSettings(store: Store): Promise<SettingsRecord> {
  try {
    const doc = await store.get({ index: SETTINGS_INDEX, id: SETTINGS_DOC_ID })
    const v = doc.found ? (doc._source as Partial<SettingsRecord> | undefined)?.engine?.index_raw_events : undefined
    return { engine: { index_raw_events: v === true } }
  } catch {
    return { engine: { index_raw_events: false } }
  }
}

import type { FieldMapping, Mappings } from '../../store/port'
import { bool, date, integer, internalIndexSettings, keyword, kw, long, obj } from './common'
import {
  CONTENT_MANAGER_JOBS_INDEX,
  CTI_CONSUMERS_INDEX,
  INTERNAL_STATE_INDEX,
  RESOURCE_LOCKS_INDEX,
  SETTINGS_INDEX,
  SETUP_STATUS_INDEX,
} from './names'
import type { PlainIndexDef } from './types'

/** A service index's mapping: explicit `dynamic`, no date detection (strings stay strings). */
const mappings = (dynamic: 'strict' | 'true', properties: Record<string, FieldMapping>): Mappings => ({
  dynamic,
  date_detection: false,
  properties,
})

/**
 * A hidden service index created with its explicit body, plus a template of
 * the same content so that a write after a manual deletion recreates it with
 * the right mapping instead of a dynamic one.
 */
function internal(
  name: string,
  templateName: string | undefined,
  mappings: Mappings,
  extraSettings: Record<string, unknown> = {},
): PlainIndexDef {
  const body = { settings: internalIndexSettings(extraSettings), mappings }
  return {
    kind: 'index',
    name,
    template: templateName ? { name: templateName, body: { index_patterns: [`${name}*`], priority: 1, template: body } } : undefined,
    body,
  }
}

export const SETUP_STATUS_MAPPINGS = mappings('strict', { status: kw, timestamp: date })
export const SETUP_STATUS: PlainIndexDef = internal(SETUP_STATUS_INDEX, 'setup-status', SETUP_STATUS_MAPPINGS)

/** The Settings record of the spec: one strict path. */
export const SETTINGS_MAPPINGS = mappings('strict', { engine: obj({ index_raw_events: bool }) })
export const SETTINGS: PlainIndexDef = internal(SETTINGS_INDEX, 'settings', SETTINGS_MAPPINGS)

/** Consumer state documents (reference content-manager 5.3); `pending_sync_phases` declared as keyword. */
export const CTI_CONSUMERS_MAPPINGS = mappings('true', {
  name: kw,
  context: kw,
  type: kw,
  resource: kw,
  status: kw,
  is_public: bool,
  local_offset: long,
  remote_offset: long,
  pending_sync_phases: kw,
})
export const CTI_CONSUMERS: PlainIndexDef = internal(CTI_CONSUMERS_INDEX, 'cti-consumers', CTI_CONSUMERS_MAPPINGS)

/** Job documents in the job scheduler's interval shape (content-manager 5.5). */
export const CONTENT_MANAGER_JOBS_MAPPINGS = mappings('true', {
  name: kw,
  job_type: kw,
  enabled: bool,
  schedule: obj({ interval: obj({ start_time: long, period: integer, unit: kw }) }),
})
export const CONTENT_MANAGER_JOBS: PlainIndexDef = internal(
  CONTENT_MANAGER_JOBS_INDEX,
  'content-manager-jobs',
  CONTENT_MANAGER_JOBS_MAPPINGS,
)

/** Spec "Resource-creation lock document": strict, one field, no aliases. Also holds every other lease. */
export const RESOURCE_LOCKS_MAPPINGS: Mappings = { dynamic: 'strict', properties: { acquired_at: long } }
// Lock documents live for the length of one operation: acknowledging them before the fsync
// (translog durability async) is safe, since a lock lost with the machine is a released lock.
export const RESOURCE_LOCKS: PlainIndexDef = internal(RESOURCE_LOCKS_INDEX, 'content-manager-resource-locks', RESOURCE_LOCKS_MAPPINGS, {
  translog: { durability: 'async' },
})

/**
 * `.svc-internal-state` (reference 3.8 and content-manager 5.4): the CTI
 * token document and the AI assistant providers/settings, flat and strict.
 */
export const INTERNAL_STATE_MAPPINGS = mappings('strict', {
  access_token: { type: 'keyword', index: false, doc_values: false } as FieldMapping,
  api_key: keyword(),
  base_url: keyword(),
  model: keyword(),
  name: keyword(),
  type: keyword(),
  is_default: bool,
  updated_at: date,
  privacy_default_on: bool,
  user_can_override: bool,
  privacy_default_per_provider: { type: 'flat_object' },
  field_policy: obj({ field: kw, action: kw, kind: kw }),
})
export const INTERNAL_STATE: PlainIndexDef = internal(INTERNAL_STATE_INDEX, 'internal-state', INTERNAL_STATE_MAPPINGS)

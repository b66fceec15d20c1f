/**
 * Every index, template and data stream the Setup extension provisions, in
 * the reference's registration order (1.2): the status marker first, the
 * settings index last. The Content Manager's own service indices (consumers,
 * jobs, resource locks, internal state) are provisioned here too, so a node
 * never depends on which module started first.
 */
import { CONTENT } from './content'
import { ACTIVE_RESPONSES, EVENT_STREAMS, FINDING_STREAMS, METRICS, RAW_EVENTS, SESSIONS } from './streams'
import { STATES } from './states'
import { CONTENT_MANAGER_JOBS, CTI_CONSUMERS, INTERNAL_STATE, RESOURCE_LOCKS, SETTINGS, SETUP_STATUS } from './system'
import type { SetupDef } from './types'

export const SETUP_DEFINITIONS: SetupDef[] = [
  SETUP_STATUS,
  ...EVENT_STREAMS,
  ...FINDING_STREAMS,
  RAW_EVENTS,
  ACTIVE_RESPONSES,
  ...METRICS,
  SESSIONS,
  ...STATES,
  ...CONTENT,
  CTI_CONSUMERS,
  CONTENT_MANAGER_JOBS,
  RESOURCE_LOCKS,
  INTERNAL_STATE,
  SETTINGS,
]

export * from './names'
export * from './types'
export { CONTENT, CONTENT_MAPPINGS, contentIndexBody, contentSettings } from './content'
export {
  CASE_FIELDS,
  EVENTS_MAPPINGS,
  EVENT_FIELDS,
  FINDINGS_MAPPINGS,
  SESSIONS_MAPPINGS,
  EVENT_STREAMS,
  FINDING_STREAMS,
  SESSIONS,
  RAW_EVENTS,
} from './streams'
export {
  CONTENT_MANAGER_JOBS,
  CTI_CONSUMERS,
  INTERNAL_STATE,
  INTERNAL_STATE_MAPPINGS,
  RESOURCE_LOCKS,
  RESOURCE_LOCKS_MAPPINGS,
  SETTINGS,
  SETTINGS_MAPPINGS,
  SETUP_STATUS,
  SETUP_STATUS_MAPPINGS,
  CTI_CONSUMERS_MAPPINGS,
  CONTENT_MANAGER_JOBS_MAPPINGS,
} from './system'
export { LIFECYCLE_POLICIES, ismPolicyBody, policyById, type LifecyclePolicy } from './lifecycle'

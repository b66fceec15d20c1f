/**
 * Names of everything the Setup extension provisions, in the spec's `svc`
 * form. Other modules import these instead of spelling index names, so a
 * rename happens in one place.
 */

export const SETUP_STATUS_INDEX = '.svc-setup-status'
export const SETUP_STATUS_DOC_ID = 'setup-status'

export const SETTINGS_INDEX = '.svc-settings'
export const SETTINGS_DOC_ID = '1'

/** The eight event categories, in the reference's registration order. */
export const EVENT_CATEGORIES = [
  'access-management',
  'applications',
  'cloud-services',
  'network-activity',
  'security',
  'system-activity',
  'other',
  'unclassified',
] as const
export type EventCategory = (typeof EVENT_CATEGORIES)[number]

export const eventsStream = (category: EventCategory) => `svc-events-v5-${category}`
export const findingsStream = (category: EventCategory) => `svc-findings-v5-${category}`
export const FINDINGS_PATTERN = 'svc-findings-v5-*'
export const FINDINGS_SECURITY_STREAM = findingsStream('security')
export const RAW_EVENTS_STREAM = 'svc-events-raw-v5'
export const ACTIVE_RESPONSES_STREAM = 'svc-active-responses'
export const METRICS_STREAMS = ['svc-metrics-agents', 'svc-metrics-comms-v4', 'svc-metrics-normalization'] as const
export const SESSIONS_STREAM = 'svc-ai-assistant-sessions'

/** The backing index OpenSearch gives generation `n` of a data stream. */
export const backingIndex = (stream: string, generation = 1) => `.ds-${stream}-${String(generation).padStart(6, '0')}`

/** Inventory state indices, in registration order. */
export const STATE_INDICES = [
  'svc-agent-config',
  'svc-agent-stats',
  'svc-states-sca',
  'svc-states-fim-files',
  'svc-states-fim-registry-keys',
  'svc-states-fim-registry-values',
  ...[
    'browser-extensions',
    'groups',
    'hardware',
    'hotfixes',
    'interfaces',
    'networks',
    'packages',
    'ports',
    'processes',
    'protocols',
    'services',
    'system',
    'users',
  ].map((s) => `svc-states-inventory-${s}`),
  'svc-states-vulnerabilities',
] as const

/** Content aliases (what every client addresses); the physical index is `<alias>-a` or `<alias>-b`. */
export const CONTENT_ALIASES = {
  enrichments: 'svc-threatintel-enrichments',
  filters: 'svc-threatintel-filters',
  decoders: 'svc-threatintel-decoders',
  rules: 'svc-threatintel-rules',
  kvdbs: 'svc-threatintel-kvdbs',
  integrations: 'svc-threatintel-integrations',
  policies: 'svc-threatintel-policies',
  vulnerabilities: '.svc-threatintel-vulnerabilities',
} as const
export type ContentKind = keyof typeof CONTENT_ALIASES
export type ContentSlot = 'a' | 'b'
export const contentIndex = (alias: string, slot: ContentSlot) => `${alias}-${slot}`

export const CTI_CONSUMERS_INDEX = '.svc-cti-consumers'
export const CONTENT_MANAGER_JOBS_INDEX = '.svc-content-manager-jobs'
export const RESOURCE_LOCKS_INDEX = '.svc-content-manager-resource-locks'
export const INTERNAL_STATE_INDEX = '.svc-internal-state'
/** Where the lifecycle policies live (the platform's `.opendistro-ism-config`). */
export const ISM_CONFIG_INDEX = '.svc-ism-config'
/** The stored scripts (the platform keeps them in its cluster state). */
export const SCRIPTS_INDEX = '.svc-scripts'

/**
 * System indices: no role reaches them through the index API, all_access included (reference
 * 6.2), unless it names `system:admin/system_index` for them explicitly (security/policy.ts's
 * mayUseIndex, the one place that rule is written). The lifecycle policies change through the
 * ISM API only and the stored scripts through `_scripts` only, as on the platform.
 */
export const SYSTEM_INDICES: readonly string[] = Object.freeze([INTERNAL_STATE_INDEX, ISM_CONFIG_INDEX, SCRIPTS_INDEX])

export function isSystemIndex(name: string): boolean {
  return SYSTEM_INDICES.includes(name)
}

/** Reserved documents of `.svc-internal-state`. */
export const CTI_CREDENTIALS_DOC_ID = 'credentials'
export const AI_ASSISTANT_SETTINGS_DOC_ID = 'svc-ai-assistant-settings'

import {
  CONTENT_MANAGER_ACTIONS as CM,
  CONTENT_RESOURCES,
  NOTIFICATIONS_ACTIONS as N,
  PLATFORM_SA_ACTIONS as PSA,
  RULESET_ACTIONS,
  SETUP_ACTIONS,
} from './actions'

export type ActionGroupType = 'cluster' | 'index' | 'all' | 'kibana'

export interface ActionGroupDef {
  allowed_actions: string[]
  type?: ActionGroupType
  description?: string
  reserved?: boolean
}

/**
 * The platform security plugin's static action groups, with the same members
 * (static_action_groups.yml), so roles written for the platform mean the same
 * thing here.
 */
const PLATFORM_GROUPS: Record<string, ActionGroupDef> = {
  unlimited: { type: 'all', allowed_actions: ['*'] },
  cluster_all: { type: 'cluster', allowed_actions: ['cluster:*'] },
  cluster_monitor: { type: 'cluster', allowed_actions: ['cluster:monitor/*'] },
  cluster_composite_ops_ro: {
    type: 'cluster',
    allowed_actions: [
      'indices:data/read/mget',
      'indices:data/read/msearch',
      'indices:data/read/mtv',
      'indices:admin/aliases/exists*',
      'indices:admin/aliases/get*',
      'indices:data/read/scroll',
      'indices:admin/resolve/index',
    ],
  },
  cluster_composite_ops: {
    type: 'cluster',
    allowed_actions: ['indices:data/write/bulk', 'indices:admin/aliases*', 'indices:data/write/reindex', 'cluster_composite_ops_ro'],
  },
  cluster_manage_index_templates: { type: 'cluster', allowed_actions: ['indices:admin/template/*', 'indices:admin/index_template/*'] },
  cluster_manage_pipelines: { type: 'cluster', allowed_actions: ['cluster:admin/ingest/pipeline/*'] },
  manage_snapshots: { type: 'cluster', allowed_actions: ['cluster:admin/snapshot/*', 'cluster:admin/repository/*'] },
  indices_all: { type: 'index', allowed_actions: ['indices:*'] },
  indices_monitor: { type: 'index', allowed_actions: ['indices:monitor/*'] },
  read: { type: 'index', allowed_actions: ['indices:data/read*', 'indices:admin/mappings/fields/get*', 'indices:admin/resolve/index'] },
  write: { type: 'index', allowed_actions: ['indices:data/write*', 'indices:admin/mapping/put'] },
  crud: { type: 'index', allowed_actions: ['read', 'write'] },
  data_access: { type: 'index', allowed_actions: ['indices:data/*', 'crud'] },
  search: {
    type: 'index',
    allowed_actions: ['indices:data/read/search*', 'indices:data/read/msearch*', 'indices:admin/resolve/index', 'suggest'],
  },
  suggest: { type: 'index', allowed_actions: ['indices:data/read/suggest*'] },
  get: { type: 'index', allowed_actions: ['indices:data/read/get*', 'indices:data/read/mget*'] },
  delete: { type: 'index', allowed_actions: ['indices:data/write/delete*'] },
  index: {
    type: 'index',
    allowed_actions: ['indices:data/write/index*', 'indices:data/write/update*', 'indices:admin/mapping/put', 'indices:data/write/bulk*'],
  },
  create_index: { type: 'index', allowed_actions: ['indices:admin/create', 'indices:admin/mapping/put'] },
  manage: { type: 'index', allowed_actions: ['indices:monitor/*', 'indices:admin/*'] },
  manage_aliases: { type: 'index', allowed_actions: ['indices:admin/aliases*'] },
  manage_data_streams: { type: 'index', allowed_actions: ['indices:admin/data_stream/*', 'indices:monitor/data_stream/stats'] },
  manage_point_in_time: {
    type: 'index',
    allowed_actions: [
      'indices:data/read/point_in_time/create',
      'indices:data/read/point_in_time/delete',
      'indices:data/read/point_in_time/readall',
      'indices:data/read/search',
      'indices:monitor/point_in_time/segments',
    ],
  },
}

const cluster = (...allowed_actions: string[]): ActionGroupDef => ({ type: 'cluster', allowed_actions })

/** Setup groups: the spec's table, one raw action each. */
const SETUP_GROUPS: Record<string, ActionGroupDef> = {
  'plugin:svc/settings/write': cluster(SETUP_ACTIONS.settingsUpdate),
  'plugin:svc/ai_assistant/session/write': cluster(SETUP_ACTIONS.sessionWrite),
  'plugin:svc/ai_assistant/settings/read': cluster(SETUP_ACTIONS.aiSettingsRead),
  'plugin:svc/ai_assistant/settings/write': cluster(SETUP_ACTIONS.aiSettingsWrite),
}

const CMG = 'plugin:content_manager/'

/**
 * Content Manager groups. Each grants exactly what the spec states; the
 * wildcard-named groups (`.../*`) are group names, not patterns, and list
 * their members explicitly, which is why `logtest/*` does not reach the
 * combined logtest.
 */
function contentManagerGroups(): Record<string, ActionGroupDef> {
  const groups: Record<string, ActionGroupDef> = {}
  for (const resource of CONTENT_RESOURCES) {
    const raw = CM[resource]
    groups[`${CMG}${resource}/create`] = cluster(raw.create)
    groups[`${CMG}${resource}/update`] = cluster(raw.update)
    groups[`${CMG}${resource}/delete`] = cluster(raw.delete)
    groups[`${CMG}${resource}/*`] = cluster(`${CMG}${resource}/create`, `${CMG}${resource}/update`, `${CMG}${resource}/delete`)
  }
  Object.assign(groups, {
    [`${CMG}policy/update`]: cluster(CM.policyUpdate),
    [`${CMG}update`]: cluster(CM.updateTrigger),
    [`${CMG}subscription/get`]: cluster(CM.subscriptionGet),
    [`${CMG}subscription/post`]: cluster(CM.subscriptionCreate),
    [`${CMG}subscription/delete`]: cluster(CM.subscriptionDelete),
    [`${CMG}promote/get`]: cluster(CM.promoteGet),
    [`${CMG}promote/post`]: cluster(CM.promoteCreate),
    [`${CMG}promote/*`]: cluster(`${CMG}promote/get`, `${CMG}promote/post`),
    [`${CMG}space/delete`]: cluster(CM.spaceDelete),
    [`${CMG}version/check`]: cluster(CM.versionCheck),
    [`${CMG}logtest`]: cluster(CM.logtest, RULESET_ACTIONS.rulesEvaluate),
    [`${CMG}logtest/detection`]: cluster(CM.logtestDetection, RULESET_ACTIONS.rulesEvaluate),
    [`${CMG}logtest/normalization`]: cluster(CM.logtestNormalization),
    [`${CMG}logtest/*`]: cluster(`${CMG}logtest/detection`, `${CMG}logtest/normalization`),
  })
  return groups
}

/**
 * Alerts and notification channels, grouped as OpenSearch's reserved roles of the same names grant
 * them (`notifications_full_access`, `notifications_read_access`, `security_analytics_ack_alerts`),
 * with the platform-form action names: a role here lists the group instead.
 */
const ALERTING_GROUPS: Record<string, ActionGroupDef> = {
  notifications_full_access: cluster(N.configCreate, N.configGet, N.configUpdate, N.configDelete, N.featureSend),
  notifications_read_access: cluster(N.configGet),
  security_analytics_ack_alerts: cluster(PSA.alertsGet, PSA.alertsAck, PSA.correlationAlertsGet, PSA.correlationAlertsAck),
}

/** Every built-in action group; all are reserved (action_groups.yml cannot redefine them). */
export const BUILTIN_ACTION_GROUPS: Readonly<Record<string, ActionGroupDef>> = Object.freeze(
  Object.fromEntries(
    Object.entries({ ...PLATFORM_GROUPS, ...SETUP_GROUPS, ...contentManagerGroups(), ...ALERTING_GROUPS }).map(([name, def]) => [
      name,
      { ...def, reserved: true },
    ]),
  ),
)

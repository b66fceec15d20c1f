/**
 * Every raw action name svc-ext checks, in one place: routes import these
 * constants instead of spelling names, so a typo cannot silently create an
 * action nobody holds. Names follow the spec's Authentication section; where
 * it only names a group, the raw name is the group's suffix under
 * `cluster:admin/content_manager/` (state-changing) or
 * `cluster:monitor/content_manager/` (read-only), except for the three the
 * reference names differently: on-demand update is `update/trigger` (spec),
 * promotion and subscription registration are `promote/create` and
 * `subscription/create` (upstream transport actions).
 */

export const SETUP_ACTIONS = {
  settingsUpdate: 'cluster:admin/setup/settings/update',
  sessionWrite: 'cluster:admin/ai_assistant/session/write',
  aiSettingsRead: 'cluster:admin/ai_assistant/settings/read',
  aiSettingsWrite: 'cluster:admin/ai_assistant/settings/write',
} as const

export const CONTENT_RESOURCES = ['integration', 'decoder', 'rule', 'kvdb', 'filter'] as const
export type ContentResource = (typeof CONTENT_RESOURCES)[number]
export const RESOURCE_OPERATIONS = ['create', 'update', 'delete'] as const
export type ResourceOperation = (typeof RESOURCE_OPERATIONS)[number]

const CM_ADMIN = 'cluster:admin/content_manager/'
const CM_MONITOR = 'cluster:monitor/content_manager/'

function resourceActions(resource: ContentResource): Record<ResourceOperation, string> {
  return {
    create: `${CM_ADMIN}${resource}/create`,
    update: `${CM_ADMIN}${resource}/update`,
    delete: `${CM_ADMIN}${resource}/delete`,
  }
}

export const CONTENT_MANAGER_ACTIONS = {
  integration: resourceActions('integration'),
  decoder: resourceActions('decoder'),
  rule: resourceActions('rule'),
  kvdb: resourceActions('kvdb'),
  filter: resourceActions('filter'),
  policyUpdate: `${CM_ADMIN}policy/update`,
  updateTrigger: `${CM_ADMIN}update/trigger`,
  subscriptionGet: `${CM_MONITOR}subscription/get`,
  subscriptionCreate: `${CM_ADMIN}subscription/create`,
  subscriptionDelete: `${CM_ADMIN}subscription/delete`,
  promoteGet: `${CM_MONITOR}promote/get`,
  promoteCreate: `${CM_ADMIN}promote/create`,
  spaceDelete: `${CM_ADMIN}space/delete`,
  versionCheck: `${CM_MONITOR}version/check`,
  logtest: `${CM_MONITOR}logtest`,
  logtestDetection: `${CM_MONITOR}logtest/detection`,
  logtestNormalization: `${CM_MONITOR}logtest/normalization`,
} as const

const SA = 'cluster:admin/svc/securityanalytics/'

/** The fork's transport actions (Content Manager -> Ruleset Management); spec item 5. */
export const RULESET_ACTIONS = {
  detectorWrite: `${SA}detector/write`,
  detectorDelete: `${SA}detector/delete`,
  detectorSetEnabled: `${SA}detector/set_enabled`,
  logtypeWrite: `${SA}logtype/write`,
  logtypeDelete: `${SA}logtype/delete`,
  ruleWrite: `${SA}rule/write`,
  ruleDelete: `${SA}rule/delete`,
  ruleCustomWrite: `${SA}rule/custom/write`,
  ruleCustomDelete: `${SA}rule/custom/delete`,
  rulesEvaluate: `${SA}rules/evaluate`,
  spaceDelete: `${SA}space/delete`,
} as const

const PSA = 'cluster:admin/platform/securityanalytics/'

/**
 * The upstream Security Analytics REST actions, renamed to the platform form.
 * `detector/write` is also what switches a detector on or off (spec item 6).
 * `findings/update` has no upstream counterpart: the case-management route
 * needs a declared action, and only `all_access` holds it (reference 4.1:
 * in practice only the superuser can call it).
 */
export const PLATFORM_SA_ACTIONS = {
  detectorWrite: `${PSA}detector/write`,
  detectorGet: `${PSA}detector/get`,
  detectorSearch: `${PSA}detector/search`,
  detectorDelete: `${PSA}detector/delete`,
  ruleWrite: `${PSA}rule/write`,
  ruleSearch: `${PSA}rule/search`,
  ruleDelete: `${PSA}rule/delete`,
  rulesValidate: `${PSA}rules/validate`,
  rulesCategories: `${PSA}rules/categories`,
  findingsGet: `${PSA}findings/get`,
  findingsUpdate: `${PSA}findings/update`,
  alertsGet: `${PSA}alerts/get`,
  alertsAck: `${PSA}alerts/ack`,
  mappingGet: `${PSA}mapping/get`,
  mappingViewGet: `${PSA}mapping/view/get`,
  mappingCreate: `${PSA}mapping/create`,
  mappingUpdate: `${PSA}mapping/update`,
  logtypeSearch: `${PSA}logtype/search`,
  logtypeWrite: `${PSA}logtype/write`,
  logtypeDelete: `${PSA}logtype/delete`,
  correlationRuleWrite: `${PSA}correlation/rule/write`,
  correlationRuleSearch: `${PSA}correlation/rule/search`,
  correlationRuleDelete: `${PSA}correlation/rule/delete`,
  correlationsList: `${PSA}correlations/list`,
  correlatedFindings: `${PSA}correlations/findings`,
  correlationAlertsGet: `${PSA}correlationAlerts/get`,
  correlationAlertsAck: `${PSA}correlationAlerts/ack`,
  threatIntelFindingsGet: `${PSA}threatIntel/iocs/findings/get`,
  threatIntelIocsList: `${PSA}threatIntel/iocs/list`,
  threatIntelAlertsGet: `${PSA}threatIntel/alerts/get`,
  threatIntelAlertsStatus: `${PSA}threatIntel/alerts/status/update`,
  threatIntelSourcesGet: `${PSA}threatIntel/sources/get`,
  threatIntelSourcesSearch: `${PSA}threatIntel/sources/search`,
  threatIntelSourcesWrite: `${PSA}threatIntel/sources/write`,
  threatIntelSourcesDelete: `${PSA}threatIntel/sources/delete`,
  threatIntelSourcesRefresh: `${PSA}threatIntel/sources/refresh`,
  threatIntelMonitorsWrite: `${PSA}threatIntel/monitors/write`,
  threatIntelMonitorsGet: `${PSA}threatIntel/monitors/get`,
  threatIntelMonitorsSearch: `${PSA}threatIntel/monitors/search`,
  threatIntelMonitorsDelete: `${PSA}threatIntel/monitors/delete`,
  /** svc-ext: a rule, correlation rule or IoC match run over stored events without writing findings. */
  rulesPreview: `${PSA}rules/preview`,
} as const

const NOTIFICATIONS = 'cluster:admin/platform/notifications/'

/** OpenSearch Notifications' actions, in the platform form the reference uses (6.2: `dashboard_server`). */
export const NOTIFICATIONS_ACTIONS = {
  configCreate: `${NOTIFICATIONS}configs/create`,
  configGet: `${NOTIFICATIONS}configs/get`,
  configUpdate: `${NOTIFICATIONS}configs/update`,
  configDelete: `${NOTIFICATIONS}configs/delete`,
  featureSend: `${NOTIFICATIONS}feature/send`,
} as const

/** Index actions the index API checks (the platform's names). */
export const INDEX_ACTIONS = {
  search: 'indices:data/read/search',
  get: 'indices:data/read/get',
  mget: 'indices:data/read/mget',
  msearch: 'indices:data/read/msearch',
  count: 'indices:data/read/search',
  scroll: 'indices:data/read/scroll',
  pitCreate: 'indices:data/read/point_in_time/create',
  pitDelete: 'indices:data/read/point_in_time/delete',
  index: 'indices:data/write/index',
  update: 'indices:data/write/update',
  delete: 'indices:data/write/delete',
  bulk: 'indices:data/write/bulk',
  bulkShard: 'indices:data/write/bulk[s]',
  createIndex: 'indices:admin/create',
  deleteIndex: 'indices:admin/delete',
  getIndex: 'indices:admin/get',
  putMapping: 'indices:admin/mapping/put',
  getMapping: 'indices:admin/mappings/get',
  aliases: 'indices:admin/aliases',
  getAliases: 'indices:admin/aliases/get',
  refresh: 'indices:admin/refresh',
  flush: 'indices:admin/flush',
  settingsUpdate: 'indices:admin/settings/update',
  settingsGet: 'indices:monitor/settings/get',
  stats: 'indices:monitor/stats',
  dataStreamCreate: 'indices:admin/data_stream/create',
  dataStreamDelete: 'indices:admin/data_stream/delete',
  dataStreamGet: 'indices:admin/data_stream/get',
  resolve: 'indices:admin/resolve/index',
  analyze: 'indices:admin/analyze',
  validateQuery: 'indices:admin/validate/query',
  rollover: 'indices:admin/rollover',
} as const

/**
 * The platform's lifecycle (ISM) policy API, served by the embedded index API under the
 * index-management plugin's own action names; only all_access holds them among the built-ins.
 */
export const ISM_ACTIONS = {
  policyWrite: 'cluster:admin/opendistro/ism/policy/write',
  policyGet: 'cluster:admin/opendistro/ism/policy/get',
  policySearch: 'cluster:admin/opendistro/ism/policy/search',
  policyDelete: 'cluster:admin/opendistro/ism/policy/delete',
} as const

/**
 * Operations: the Prometheus exporter plugin's action (held by `cluster_monitor` and all_access)
 * and the platform's snapshot and repository actions (the `manage_snapshots` group).
 */
export const OPERATIONS_ACTIONS = {
  prometheusMetrics: 'cluster:monitor/prometheus/metrics',
  repositoryPut: 'cluster:admin/repository/put',
  repositoryGet: 'cluster:admin/repository/get',
  repositoryDelete: 'cluster:admin/repository/delete',
  snapshotCreate: 'cluster:admin/snapshot/create',
  snapshotGet: 'cluster:admin/snapshot/get',
  snapshotStatus: 'cluster:admin/snapshot/status',
  snapshotRestore: 'cluster:admin/snapshot/restore',
  snapshotDelete: 'cluster:admin/snapshot/delete',
} as const

/**
 * Pseudo-action of routes that need an authenticated caller and nothing else
 * (`GET /_plugins/_security/authinfo`, as on the platform). `authorize` does
 * not look it up in any role; no pattern can grant or deny it.
 */
export const AUTHENTICATED_ONLY = '<authenticated>'

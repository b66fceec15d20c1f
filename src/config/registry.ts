/**
 * The one table of every setting svc-ext knows: the spec's plugin settings
 * (Setup, Content Manager, Ruleset Management) and the node settings of this
 * binary (HTTP, storage, security). Everything that validates, prints or reads
 * a setting goes through this table, so a setting exists in exactly one place.
 */

export type SettingType = 'boolean' | 'integer' | 'long' | 'string' | 'time' | 'list'

export interface SettingDef {
  key: string
  type: SettingType
  default: boolean | number | string | readonly string[]
  min?: number
  max?: number
  /** Dynamic settings can be changed with PUT /_cluster/settings and override the node file. */
  dynamic: boolean
  /** Secrets are masked wherever settings are printed. */
  secret?: boolean
  /** Allowed values for string settings that are enumerations. */
  oneOf?: readonly string[]
  /** Most elements a list setting may hold (svc-ext binds one address where OpenSearch binds several). */
  maxItems?: number
  meaning: string
}

type Row = readonly [
  key: string,
  type: SettingType,
  def: SettingDef['default'],
  range: readonly [number?, number?] | null,
  dynamic: boolean,
  meaning: string,
  extra?: Partial<Omit<SettingDef, 'key'>>,
]

const CTI_API = 'https://cti-pre.svc.example/api/v1'

const node = [
  ['node.name', 'string', 'svc-node-1', null, false, 'Name of this node, shown by GET / and _cat/nodes.'],
  ['cluster.name', 'string', 'svc-cluster', null, false, 'Name of the cluster, shown by GET / and _cluster/health.'],
  // A list in OpenSearch; one address here, so the list form of opensearch.yml still starts.
  ['http.host', 'list', ['127.0.0.1'], null, false, 'Address the REST API listens on.', { maxItems: 1 }],
  ['http.port', 'integer', 9201, [0, 65535], false, 'Port the REST API listens on (0 picks a free port).'],
  ['http.tls.certificate', 'string', '', null, false, 'PEM certificate file; HTTPS is served when set together with http.tls.key.'],
  ['http.tls.key', 'string', '', null, false, 'PEM private key file for http.tls.certificate.'],
  [
    'http.max_body_bytes',
    'long',
    104857600,
    [1024, 1073741824],
    false,
    'Largest request body any route accepts (bulk); smaller per-route limits apply first.',
  ],
  ['http.compression', 'boolean', true, null, false, 'Compress responses for clients that accept gzip or deflate.'],
  ['http.compression_level', 'integer', 3, [1, 9], false, 'Compression level of responses (1 fastest, 9 smallest).'],
  ['http.shutdown_grace_seconds', 'integer', 30, [0, 600], false, 'How long SIGTERM waits for in-flight requests before closing.'],
  ['path.data', 'string', './data', null, false, 'Directory of the embedded store, the node journal and the generated admin password.'],
  ['path.repo', 'list', [], null, false, 'Directories where snapshot repositories of type fs may be registered; empty: none.'],
  [
    'storage.platform.url',
    'list',
    [],
    null,
    false,
    "URLs of the OpenSearch cluster's nodes (requests stick to one, failing over to the next); empty means the embedded store.",
  ],
  ['storage.platform.username', 'string', '', null, false, "Service account used for the service's own platform calls."],
  ['storage.platform.password', 'string', '', null, false, 'Password of storage.platform.username.', { secret: true }],
  ['storage.platform.insecure', 'boolean', false, null, false, 'Skip TLS verification of the platform (testing only).'],
  [
    'storage.platform.ssl.certificate_authorities',
    'string',
    '',
    null,
    false,
    "PEM file of the CA(s) that signed the platform's HTTP certificate (a cluster with its own CA, as the security plugin's demo setup makes); empty: the system's CAs.",
  ],
  [
    'security.auth_cache.ttl_seconds',
    'integer',
    300,
    [0, 86400],
    false,
    'How long a successful authentication is cached (0 disables the cache).',
  ],
  ['security.auth_cache.max_entries', 'integer', 10000, [0, 1000000], false, 'Bound of the authentication cache.'],
  [
    'security.auth_failures.max_attempts',
    'integer',
    10,
    [0, 1000],
    false,
    'Failed logins from one address before it is blocked (0 disables blocking).',
  ],
  [
    'security.auth_failures.block_seconds',
    'integer',
    60,
    [1, 86400],
    false,
    'How long an address stays blocked after too many failed logins.',
  ],
  ['log.level', 'string', 'info', null, false, 'Lowest level written to the log.', { oneOf: ['debug', 'info', 'warn', 'error'] }],
  // OpenSearch's own search limits, with its names and defaults (embedded store); dynamic, as in
  // OpenSearch, so `PUT _cluster/settings` changes them on a running node.
  [
    'indices.query.bool.max_clause_count',
    'integer',
    1024,
    [1, 2147483647],
    true,
    'Most clauses one boolean query, and one whole query, may hold.',
  ],
  ['search.max_buckets', 'integer', 65535, [0, 2147483647], true, 'Most aggregation buckets one search may create.'],
  [
    'search.allow_expensive_queries',
    'boolean',
    true,
    null,
    true,
    'Whether searches may run the slow queries (prefix, wildcard, regexp, fuzzy, string ranges, joins).',
  ],
  ['search.default_search_timeout', 'time', '-1', null, true, 'Time budget of a search without `timeout` (-1: none), e.g. 30s.'],
  ['search.max_open_pit_context', 'integer', 300, [0, 2147483647], true, 'Most points in time open at once on this node.'],
  ['point_in_time.max_keep_alive', 'time', '24h', null, true, 'Longest keep_alive a point in time may ask for.'],
] as const satisfies readonly Row[]

const setup = [
  ['plugins.setup.timeout', 'integer', 30, [5, 120], false, 'Seconds, index and search operations.'],
  ['plugins.setup.backoff', 'integer', 15, [5, 60], false, 'Seconds between retries of initialization tasks.'],
  ['plugins.setup.max_retries', 'integer', 1, [0, 10], false, 'Re-attempts of a failed initialization task; 0 disables.'],
  [
    'plugins.setup.settings_update.enabled',
    'boolean',
    true,
    null,
    false,
    'When false PUT /_plugins/_setup/settings returns 403 for everyone.',
  ],
] as const satisfies readonly Row[]

const contentManager = [
  ['plugins.content_manager.cti.api', 'string', CTI_API, null, false, 'Base URL for catalog and console calls.'],
  ['plugins.content_manager.catalog.sync_interval', 'integer', 60, [10, 1440], true, 'Minutes between scheduled syncs.'],
  ['plugins.content_manager.setup_wait.max_retries', 'integer', 4, [0, 10], false, 'Retries while waiting for Setup readiness.'],
  ['plugins.content_manager.setup_wait.backoff_base_seconds', 'integer', 20, [1, 120], false, 'Base of base * 2^n backoff.'],
  ['plugins.content_manager.max_items_per_bulk', 'integer', 1000, [10, 1000], false, 'Documents per bulk request.'],
  ['plugins.content_manager.max_concurrent_bulks', 'integer', 5, [1, 5], false, 'Concurrent bulk operations.'],
  ['plugins.content_manager.max_bulk_bytes', 'long', 5242880, [1048576, 104857600], false, 'Bytes per bulk request body.'],
  ['plugins.content_manager.logtest.max_body_bytes', 'long', 1048576, [1024, 16777216], true, 'Logtest body bytes; 413 beyond.'],
  ['plugins.content_manager.client.timeout', 'long', 10, [10, 50], false, 'Seconds, CTI HTTP client.'],
  ['plugins.content_manager.client.max_retries', 'integer', 3, [0, 10], false, 'Retries after HTTP 429.'],
  [
    'plugins.content_manager.client.retry_backoff_base_seconds',
    'integer',
    30,
    [1, 300],
    false,
    'Base of base * 2^n when Retry-After is missing or unusable.',
  ],
  ['plugins.content_manager.pit_keepalive', 'long', 120, [60, 600], false, 'Seconds, point-in-time keepalive.'],
  ['plugins.content_manager.engine.mock', 'boolean', false, null, false, 'Bypass Engine socket calls with mocked answers; testing only.'],
  ['plugins.content_manager.catalog.update_on_start', 'boolean', true, null, false, 'Sync at plugin start.'],
  ['plugins.content_manager.catalog.update_on_schedule', 'boolean', true, null, true, 'Periodic sync; false refuses scheduled runs.'],
  ['plugins.content_manager.catalog.ruleset', 'string', '', null, false, 'Full CTI consumer URL for ruleset content.'],
  ['plugins.content_manager.catalog.iocs', 'string', '', null, false, 'Consumer URL for IoC content.'],
  ['plugins.content_manager.catalog.vulnerabilities', 'string', '', null, false, 'Consumer URL for vulnerabilities content.'],
  ['plugins.content_manager.catalog.create_detectors', 'boolean', true, null, false, 'Auto-create detectors from CTI content.'],
  ['plugins.content_manager.telemetry.enabled', 'boolean', true, null, true, 'Daily update check.'],
  ['plugins.content_manager.catalog.update_on_demand', 'boolean', true, null, false, 'False makes POST /update return 403.'],
  ['plugins.content_manager.catalog.policy_update.enabled', 'boolean', true, null, false, 'False makes PUT /policy/{space} return 403.'],
  ['plugins.content_manager.max_integrations', 'integer', 100, [0], true, 'Creation limit; 400 beyond.'],
  ['plugins.content_manager.max_decoders', 'integer', 200, [0], true, 'Creation limit; 400 beyond.'],
  ['plugins.content_manager.max_rules', 'integer', 200, [0], true, 'Creation limit; 400 beyond.'],
  ['plugins.content_manager.max_kvdbs', 'integer', 100, [0], true, 'Creation limit; 400 beyond.'],
  ['plugins.content_manager.max_filters', 'integer', 100, [0], true, 'Creation limit per space; 400 beyond.'],
  ['plugins.content_manager.cti.console.timeout', 'integer', 5, [1, 120], false, 'Seconds for console calls.'],
  ['plugins.content_manager.bulk.retry.shed.max_retries', 'integer', 3, [0, 10], true, 'Resubmissions of a shed bulk.'],
  ['plugins.content_manager.bulk.retry.shed.initial_backoff_millis', 'long', 1000, [100, 60000], true, 'First delay; doubles each retry.'],
  ['plugins.content_manager.bulk.retry.shed.max_backoff_millis', 'long', 30000, [100, 60000], true, 'Backoff ceiling.'],
  [
    'plugins.content_manager.bulk.retry.topology.max_retries',
    'integer',
    5,
    [0, 10],
    true,
    'Resubmissions of a bulk deferred by a topology change.',
  ],
  ['plugins.content_manager.bulk.retry.topology.initial_backoff_millis', 'long', 5000, [100, 60000], true, 'First delay; doubles.'],
  ['plugins.content_manager.bulk.retry.topology.max_backoff_millis', 'long', 30000, [100, 60000], true, 'Ceiling.'],
  ['plugins.content_manager.job_schedule.max_retries', 'integer', 3, [0, 10], false, 'Job registration attempts.'],
  ['plugins.content_manager.job_schedule.retry_backoff_seconds', 'integer', 15, [1, 300], false, 'Linear backoff base.'],
  ['plugins.content_manager.resource_lock.max_retries', 'integer', 20, [1, 100], true, 'Lock attempts before 503.'],
  ['plugins.content_manager.resource_lock.retry_backoff_millis', 'long', 100, [10, 10000], true, 'Delay between lock attempts.'],
  [
    'plugins.content_manager.resource_lock.stale_threshold_millis',
    'long',
    30000,
    [5000, 600000],
    true,
    'Age after which a lock is stolen.',
  ],
  [
    'plugins.content_manager.user_overrides.max_update_attempts',
    'integer',
    3,
    [1, 20],
    true,
    'Attempts to write the user-overrides document on version conflict.',
  ],
  [
    'plugins.content_manager.integration.max_update_attempts',
    'integer',
    5,
    [1, 20],
    true,
    'Attempts to update an integration on conflict when linking/unlinking.',
  ],
  [
    'plugins.content_manager.engine.socket_path',
    'string',
    '/usr/share/svc-indexer/engine/sockets/engine-api-http.sock',
    null,
    false,
    'Engine Unix socket.',
  ],
  [
    'plugins.content_manager.engine.reload_timeout_minutes',
    'integer',
    10,
    [1, 1440],
    false,
    'Maximum time a single Engine reload may stay in flight.',
  ],
  [
    'plugins.content_manager.engine.not_ready_grace_minutes',
    'integer',
    5,
    [1, 1440],
    false,
    'Time before an unready-content deferral escalates to a warning.',
  ],
  ['plugins.content_manager.security_analytics.sync_timeout_seconds', 'integer', 60, [1, 3600], false, 'Bulk sync step timeout.'],
  [
    'plugins.content_manager.security_analytics.detector_timeout_seconds',
    'integer',
    30,
    [1, 3600],
    false,
    'Wait for first detector creation.',
  ],
  [
    'plugins.content_manager.security_analytics.cleanup_timeout_seconds',
    'integer',
    120,
    [120, 3600],
    false,
    'Wait for deletion of stale rules/integrations after a swap.',
  ],
  [
    'plugins.content_manager.security_analytics.detector_interval',
    'integer',
    2,
    [1, 10080],
    true,
    'Minutes; used when the CTI integration gives none or an out-of-bounds one.',
  ],
  ['plugins.content_manager.update_sub_batch_size', 'integer', 50, [1, 1000], false, 'UPDATE offsets per multi-get plus bulk.'],
  ['plugins.content_manager.offset_flush_interval', 'integer', 10, [1, 1000], false, 'Batches between consumer-offset checkpoints.'],
  ['plugins.content_manager.search_page_size', 'integer', 10000, [100, 10000], false, 'Page size of the IoC reconciliation scan.'],
] as const satisfies readonly Row[]

// Reference 5.11: every Ruleset Management setting is dynamic except the rule-cache size.
const rulesetManagement = [
  ['plugins.security_analytics.alert_finding_enabled', 'boolean', false, null, true, 'Rollover of finding history indices.'],
  ['plugins.security_analytics.alert_finding_max_docs', 'long', 1000, [0], true, 'Deprecated.'],
  ['plugins.security_analytics.alert_finding_rollover_period', 'time', '12h', null, true, 'Finding rollover period.'],
  ['plugins.security_analytics.alert_history_enabled', 'boolean', false, null, true, 'Rollover of alert history indices.'],
  ['plugins.security_analytics.alert_history_max_age', 'time', '30d', null, true, 'Alert history max age.'],
  ['plugins.security_analytics.alert_history_max_docs', 'long', 1000, [0], true, 'Alert history max docs.'],
  ['plugins.security_analytics.alert_history_retention_period', 'time', '60d', null, true, 'Deletion age.'],
  ['plugins.security_analytics.alert_history_rollover_period', 'time', '12h', null, true, 'Alert rollover period.'],
  // The peer's IoC findings history (`IocFindingService`): its enabled key has no `_history`, as on the peer.
  ['plugins.security_analytics.ioc_finding_enabled', 'boolean', true, null, true, 'Rollover of IoC finding history indices.'],
  ['plugins.security_analytics.ioc_finding_history_max_age', 'time', '30d', null, true, 'IoC finding history max age.'],
  ['plugins.security_analytics.ioc_finding_history_max_docs', 'long', 1000, [0], true, 'IoC finding history max docs.'],
  ['plugins.security_analytics.ioc_finding_history_retention_period', 'time', '60d', null, true, 'IoC finding history deletion age.'],
  ['plugins.security_analytics.ioc_finding_history_rollover_period', 'time', '12h', null, true, 'IoC finding rollover period.'],
  ['plugins.security_analytics.auto_correlations_enabled', 'boolean', false, null, true, 'Automatic correlations.'],
  ['plugins.security_analytics.correlation.detector_cache_ttl', 'time', '5m', null, true, '0s disables the cache.'],
  [
    'plugins.security_analytics.correlation.events_backpressure.enabled',
    'boolean',
    true,
    null,
    true,
    'Write-block events indices when backlog fills.',
  ],
  [
    'plugins.security_analytics.correlation.events_backpressure.high_watermark_percent',
    'integer',
    100,
    [1, 100],
    true,
    'Percent of max_pending_findings; block at or above.',
  ],
  // svc-ext's own (beyond the peer): rule preview and threat-intel retro-hunt.
  [
    'plugins.security_analytics.preview.max_events',
    'long',
    1000000,
    [1, 100000000],
    true,
    'Most stored events one rule preview scans (caps its terminate_after).',
  ],
  ['plugins.security_analytics.preview.timeout', 'time', '30s', null, true, 'Longest time one rule preview runs (caps its timeout).'],
  [
    'plugins.security_analytics.preview.max_size',
    'integer',
    1000,
    [0, 10000],
    true,
    'Most matches one rule preview answers (caps its size).',
  ],
  [
    'plugins.security_analytics.threat_intel.retro_hunt.enabled',
    'boolean',
    true,
    null,
    true,
    'Search stored events for IoCs the sync adds.',
  ],
  [
    'plugins.security_analytics.threat_intel.retro_hunt.lookback_days',
    'integer',
    7,
    [1, 365],
    true,
    'Days of stored events a retro-hunt searches back.',
  ],
  [
    'plugins.security_analytics.threat_intel.retro_hunt.events_per_second',
    'integer',
    50000,
    [100, 10000000],
    true,
    'Pace of a retro-hunt: stored events read per second, so the node keeps serving.',
  ],
  [
    'plugins.security_analytics.threat_intel.retro_hunt.max_events',
    'long',
    10000000,
    [1, 1000000000],
    true,
    'Most stored events one retro-hunt reads.',
  ],
  [
    'plugins.security_analytics.correlation.events_backpressure.low_watermark_percent',
    'integer',
    60,
    [0, 99],
    true,
    'Unblock at or below.',
  ],
  ['plugins.security_analytics.correlation.max_in_flight_findings', 'integer', 50, [1, 1000], true, 'Findings correlated concurrently.'],
  ['plugins.security_analytics.correlation.max_pending_findings', 'integer', 10000, [1, 1000000], true, 'Beyond it new findings are shed.'],
  ['plugins.security_analytics.correlation.metadata_cache_ttl', 'time', '5m', null, true, '0s disables both caches.'],
  ['plugins.security_analytics.correlation_history_max_age', 'time', '30d', null, true, 'Correlation history max age.'],
  ['plugins.security_analytics.correlation_history_max_docs', 'long', 1000, [0], true, 'Correlation history max docs.'],
  ['plugins.security_analytics.correlation_history_retention_period', 'time', '60d', null, true, 'Correlation retention.'],
  ['plugins.security_analytics.correlation_history_rollover_period', 'time', '12h', null, true, 'Correlation rollover period.'],
  ['plugins.security_analytics.correlation_time_window', 'time', '5m', null, true, 'Correlation time window.'],
  ['plugins.security_analytics.enable_detectors_with_dedicated_query_indices', 'boolean', true, null, true, 'Dedicated query indices.'],
  ['plugins.security_analytics.enable_workflow_usage', 'boolean', true, null, true, 'Workflow usage.'],
  ['plugins.security_analytics.enriched_findings_bulk_size', 'integer', 100, [10, 1000], true, 'Enriched findings per bulk.'],
  ['plugins.security_analytics.enriched_findings_enrich_batch_size', 'integer', 100, [1, 1000], true, 'Findings enriched per batch.'],
  ['plugins.security_analytics.enriched_findings_flush_interval', 'integer', 5, [1, 60], true, 'Seconds between flushes.'],
  ['plugins.security_analytics.enriched_findings_index_enabled', 'boolean', true, null, true, 'Index enriched findings.'],
  ['plugins.security_analytics.enriched_findings_max_in_flight', 'integer', 5, [1, 10], true, 'Enrichment batches in flight.'],
  ['plugins.security_analytics.enriched_findings_rule_cache_max_size', 'integer', 10000, [0], false, 'Rule cache size (LRU); static.'],
  [
    'plugins.security_analytics.filter_by_backend_roles',
    'boolean',
    false,
    null,
    true,
    'Restrict detectors, rules and findings by backend roles.',
  ],
  ['plugins.security_analytics.finding_history_max_age', 'time', '30d', null, true, 'Finding history max age.'],
  ['plugins.security_analytics.finding_history_retention_period', 'time', '60d', null, true, 'Finding retention.'],
  ['plugins.security_analytics.index_timeout', 'time', '60s', null, true, 'Index operation timeout.'],
  [
    'plugins.security_analytics.max_case_management_bulk_size',
    'integer',
    10,
    [0, 100],
    true,
    'Findings per update request; 0 disables the endpoint.',
  ],
  ['plugins.security_analytics.max_detectors', 'integer', 10, [0], true, 'User detectors (content-manager detectors excluded).'],
  ['plugins.security_analytics.max_rules_per_detector', 'integer', 50, [0], true, 'Rules per detector.'],
  [
    'plugins.security_analytics.mappings.default_schema',
    'string',
    'ecs',
    null,
    true,
    'Schema used to map Sigma field names when a log type declares none.',
  ],
  // svc-ext's own (the peer's runs are Alerting's jobs): how soon another node resumes a dead node's run.
  [
    'plugins.security_analytics.detector_run_lease_stale_millis',
    'long',
    900000,
    [5000, 86400000],
    false,
    'Age after which the run lease of a node that stopped renewing it is taken over; equal on all nodes.',
  ],
] as const satisfies readonly Row[]

// Notification channels and alert delivery: OpenSearch Notifications' core settings under their
// names and defaults where they exist (static here: they shape outbound connections at start), then
// svc-ext's own delivery settings (the peer does not retry, so it has none of them).
const notifications = [
  [
    'opensearch.notifications.core.allowed_config_types',
    'string',
    'slack,chime,microsoft_teams,webhook,email,sns,ses_account,smtp_account,email_group',
    null,
    false,
    'Channel types a config may have (comma-separated); svc-ext delivers slack, chime, microsoft_teams, mattermost and webhook.',
  ],
  [
    'opensearch.notifications.core.http.connection_timeout',
    'integer',
    5000,
    [1, 600000],
    false,
    'Milliseconds to resolve and connect to a channel host.',
  ],
  [
    'opensearch.notifications.core.http.socket_timeout',
    'integer',
    50000,
    [1, 600000],
    false,
    'Milliseconds one delivery may take, answer included.',
  ],
  [
    'opensearch.notifications.core.http.host_deny_list',
    'string',
    '',
    null,
    false,
    'Hosts, IP addresses and CIDR ranges (comma-separated) no channel may reach; checked against every resolved address.',
  ],
  [
    'plugins.notifications.http.host_allow_list',
    'string',
    '',
    null,
    false,
    'When set, the only hosts (names, addresses or CIDR ranges, comma-separated) a channel may reach.',
  ],
  ['plugins.notifications.http.max_body_bytes', 'integer', 1048576, [1024, 104857600], false, 'Largest message sent and answer read.'],
  ['plugins.notifications.delivery.max_retries', 'integer', 5, [0, 50], false, 'Retries of a failed delivery before it is dead-lettered.'],
  [
    'plugins.notifications.delivery.backoff_base_millis',
    'integer',
    1000,
    [1, 3600000],
    false,
    'First retry delay; each retry doubles it, with jitter.',
  ],
  [
    'plugins.notifications.delivery.poll_interval_millis',
    'integer',
    1000,
    [10, 600000],
    false,
    'How often pending deliveries are looked for.',
  ],
  [
    'plugins.security_analytics.case_notification.channel_id',
    'string',
    '',
    null,
    true,
    'Notification channel told of every case update on a finding (empty: none).',
  ],
] as const satisfies readonly Row[]

const ROWS = [...node, ...setup, ...contentManager, ...rulesetManagement, ...notifications]

// The key and value types come from the table itself, so a misspelt key or a read of the wrong
// type fails the typecheck instead of throwing at run time.
type AnyRow = (typeof ROWS)[number]
/** Every setting key the table declares. */
export type SettingKey = AnyRow[0]
/** The keys of settings declared with one of the types `T`. */
export type SettingKeyOf<T extends SettingType> = Extract<AnyRow, readonly [string, T, ...unknown[]]>[0]
interface ValueOfType {
  boolean: boolean
  integer: number
  long: number
  string: string
  time: string
  list: readonly string[]
}
/** The value type of setting `K`, from its declared type. */
export type SettingValueOf<K extends SettingKey> = ValueOfType[Extract<AnyRow, readonly [K, ...unknown[]]>[1]]

function toDef([key, type, def, range, dynamic, meaning, extra]: AnyRow): SettingDef & { key: SettingKey } {
  return { key, type, default: def, min: range?.[0], max: range?.[1], dynamic, meaning, ...extra }
}

export const SETTINGS: readonly (SettingDef & { key: SettingKey })[] = ROWS.map(toDef)

const byKey = new Map<string, SettingDef>(SETTINGS.map((s) => [s.key, s]))

export function settingDef(key: string): SettingDef | undefined {
  return byKey.get(key)
}

/** Prefixes whose keys belong to svc-ext in PUT /_cluster/settings (architecture decision 3). */
export const OWNED_PREFIXES = ['plugins.setup.', 'plugins.content_manager.', 'plugins.security_analytics.']

export function isOwnedKey(key: string): boolean {
  return OWNED_PREFIXES.some((p) => key.startsWith(p))
}

/**
 * A real server with everything alerts touch: Ruleset Management (detectors, rules, runs), the
 * notification channels and their dispatcher, the findings routes (case updates) and the index API,
 * on the embedded store, over HTTP. Node settings make retries fast (back-off base, poll interval,
 * timeouts), so the fault tests run in seconds.
 */
import type { Deps } from '../../src/deps'
import type { Logger } from '../../src/http/log'
import type { Store } from '../../src/store/port'
import { indexApiRoutes } from '../../src/indexer/routes'
import { createNotifications, type Notifications } from '../../src/notifications'
import { caseNotifier } from '../../src/notifications/case'
import { createRuleset, type Ruleset } from '../../src/ruleset'
import { forgetCorrelationAlerts } from '../../src/ruleset/alerts/correlation'
import { forgetAlertIndices } from '../../src/ruleset/alerts/indices'
import { findingsRoutes } from '../../src/ruleset/findings/routes'
import { forgetEnsured } from '../../src/ruleset/indices'
import { type Reply, startTestApp, type TestApp } from '../helpers/app'
import { SA } from '../helpers/calls'
import { ctiRule, EVENTS, LINUX } from '../ruleset/harness'

export const PASSWORD = 'pw-123456'
export { SA } from '../helpers/calls'
export const NOTIFY = '/_plugins/_notifications'

/**
 * `admin`: all_access. `blue` / `red`: every Security Analytics action, read on the event streams
 * and every notifications action (mapped by user name), with backend roles `blue` / `red`. `reader`: channel configs
 * get only. `nobody`: nothing.
 */
const USERS: Record<string, string[]> = { admin: ['admin'], blue: ['blue'], red: ['red'], reader: ['reader'], nobody: [], dana: ['dls'] }
const ROLES = {
  detector_manager: {
    cluster_permissions: ['cluster:admin/platform/securityanalytics/*', 'cluster:admin/platform/notifications/*'],
    index_permissions: [{ index_patterns: ['svc-events-v5-*', '.ds-svc-events-v5-*'], allowed_actions: ['read'] }],
  },
  channel_reader: { cluster_permissions: ['cluster:admin/platform/notifications/configs/get'] },
  /** Reads only bob's events (document-level security), for the paths that read events for a caller. */
  bob_events_only: {
    cluster_permissions: ['cluster:admin/platform/securityanalytics/*'],
    index_permissions: [
      { index_patterns: ['svc-events-v5-*', '.ds-svc-events-v5-*'], allowed_actions: ['read'], dls: '{"term": {"user.name": "bob"}}' },
    ],
  },
}
const MAPPING = {
  detector_manager: { users: ['blue', 'red'] },
  channel_reader: { backend_roles: ['reader'] },
  bob_events_only: { backend_roles: ['dls'] },
}

/** Fast retries: 50 ms back-off base, 6 retries (at least 1.6 s from first to last), 50 ms polls, 1.5 s per attempt. */
export const FAST = {
  'plugins.notifications.delivery.backoff_base_millis': 50,
  'plugins.notifications.delivery.max_retries': 6,
  'plugins.notifications.delivery.poll_interval_millis': 50,
  'opensearch.notifications.core.http.socket_timeout': 1500,
  'opensearch.notifications.core.http.connection_timeout': 500,
}

export interface AlertingServer {
  app: TestApp
  deps: Deps
  ruleset: Ruleset
  notifications: Notifications
  request(method: string, path: string, opts?: { body?: unknown; user?: string | null }): Promise<Reply>
  /** Indexes events (refreshed); answers their ids. */
  index(events: Array<Record<string, unknown>>): Promise<Array<{ _id: string; _index: string }>>
  /** Runs the detector now through its monitor's `_execute`. */
  run(detectorId: string): Promise<Reply>
  stop(): Promise<void>
}

export async function startAlertingServer(
  node: Record<string, unknown> = {},
  opts: { log?: Logger; wrapStore?: (store: Store) => Store } = {},
): Promise<AlertingServer> {
  let ruleset!: Ruleset
  let notifications!: Notifications
  const app = await startTestApp({
    log: opts.log,
    wrapStore: opts.wrapStore,
    users: Object.entries(USERS).map(([name, backend_roles]) => ({ name, password: PASSWORD, backend_roles })),
    roles: ROLES,
    rolesMapping: MAPPING,
    node: { ...FAST, ...node },
    routes: (deps) => {
      notifications = createNotifications(deps)
      ruleset = createRuleset(
        deps,
        {},
        {
          onPending: () => notifications.dispatcher.kick(),
          destinationExists: async (id) => (await notifications.channels.stored(id)) !== undefined,
        },
      )
      notifications.dispatcher.start()
      return {
        pluginRoutes: [
          ...ruleset.routes,
          ...notifications.routes,
          ...findingsRoutes(deps, caseNotifier({ ...deps, onPending: () => notifications.dispatcher.kick() })),
        ],
        groups: [indexApiRoutes(deps)],
        async stop() {
          await notifications.stop()
          await ruleset.stop()
          forgetEnsured(deps.store)
          forgetAlertIndices(deps.store)
          forgetCorrelationAlerts()
        },
      }
    },
  })
  const request = (method: string, path: string, opts: { body?: unknown; user?: string | null } = {}) =>
    app.request(method, path, { body: opts.body, user: opts.user === undefined ? 'admin' : opts.user })
  return {
    app,
    get deps() {
      return app.deps
    },
    get ruleset() {
      return ruleset
    },
    get notifications() {
      return notifications
    },
    request,
    async index(events) {
      const lines = events.flatMap((e) => [{ create: { _index: EVENTS } }, { '@timestamp': new Date().toISOString(), ...e }])
      const r = await app.deps.store.bulk({ body: lines, refresh: true })
      if (r.errors) throw new Error('events not indexed')
      return r.items.map((i) => ({ _id: i.create!._id!, _index: i.create!._index }))
    },
    async run(detectorId) {
      const d = await request('GET', `${SA}/detectors/${detectorId}`)
      return request('POST', `/_plugins/_alerting/monitors/${d.body.detector.monitor_id[0]}/_execute`)
    },
    stop: () => app.stop(),
  }
}

/** The linux log type and custom rules `r-<action>` (level, tags) matching `event.action: <action>`. */
export async function linuxRules(s: AlertingServer, rules: Array<{ action: string; level?: string; tags?: string[] }>): Promise<void> {
  await s.ruleset.sync.upsertIntegration('standard', LINUX, false)
  for (const r of rules)
    await s.ruleset.sync.upsertRule(
      'custom',
      ctiRule(`r-${r.action}`, { sel: { 'event.action': r.action }, condition: 'sel' }, { level: r.level ?? 'medium', tags: r.tags ?? [] }),
      LINUX.id,
      false,
    )
}

/** A webhook channel to `url`; answers its id. */
export async function webhook(s: AlertingServer, url: string, extra: Record<string, unknown> = {}, id?: string): Promise<string> {
  const r = await s.request('POST', `${NOTIFY}/configs`, {
    body: { ...(id ? { config_id: id } : {}), config: { name: 'hook', config_type: 'webhook', webhook: { url, ...extra } } },
  })
  if (r.status !== 200) throw new Error(`channel not created: ${r.text}`)
  return r.body.config_id
}

/** Posts a Sigma rule (YAML) of the linux log type through the rules API as the admin; answers its id. */
export async function postRule(s: AlertingServer, yaml: string): Promise<string> {
  const r = await s.app.request('POST', `${SA}/rules?category=linux`, {
    body: yaml,
    user: 'admin',
    headers: { 'content-type': 'application/yaml' },
  })
  if (r.status !== 201) throw new Error(`rule not created: ${r.status} ${r.text}`)
  return r.body._id
}

/** A user detector over the events stream with these custom rules and triggers, created by `user`; answers its id. */
export async function detectorWith(
  s: AlertingServer,
  rules: string[],
  triggers: unknown[],
  name = 'alerting',
  user = 'admin',
): Promise<string> {
  const r = await s.request('POST', `${SA}/detectors`, {
    user,
    body: {
      type: 'detector',
      name,
      detector_type: 'linux',
      enabled: true,
      schedule: { period: { interval: 60, unit: 'MINUTES' } },
      inputs: [
        { detector_input: { description: 'alerts', indices: [EVENTS], custom_rules: rules.map((id) => ({ id })), pre_packaged_rules: [] } },
      ],
      triggers,
    },
  })
  if (r.status !== 201) throw new Error(`detector not created: ${r.status} ${r.text}`)
  return r.body._id
}

/** Polls `probe` until it answers a value (not undefined), for at most `ms`. */
export async function eventually<T>(probe: () => Promise<T | undefined>, ms = 10_000, what = 'condition'): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = await probe()
    if (v !== undefined) return v
    if (Date.now() > until) throw new Error(`${what} not reached within ${ms} ms`)
    await Bun.sleep(25)
  }
}

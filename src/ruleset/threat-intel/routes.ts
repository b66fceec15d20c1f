/** Threat intelligence REST surface (reference 3.2): thin routes over the IoC findings, IoCs, sources and monitors. */
import { Type as T } from '@sinclair/typebox'
import { type BodyLimit, SMALL_BODY } from '../../http/body'
import { ApiError, json } from '../../http/errors'
import { objectBody, route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS, PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import { type Caller, noPermissions, type Security } from '../../http/caller'
import type { Store } from '../../store/port'
import { ReadableEvents } from './readable-events'
import { SEARCH_BODY, searchOf } from '../search-body'
import { searchIocFindings } from './ioc-findings'
import { listIocs } from './iocs'
import { listIocAlerts, updateIocAlertStatus } from './ioc-alerts'
import { type ThreatIntelMonitors } from './monitors'
import { createSource, deleteSource, getSource, refreshSource, searchSources, type SourcesDeps, updateSource } from './sources'
import { CTI_FEED_ID } from './ioc-findings'

const BASE = '/_plugins/_security_analytics/threat_intel'
/** Search DSL over sources: the built-in source is answered first, users' sources are searched with it. */
const SEARCH = objectBody(SMALL_BODY, T.Object({}, { additionalProperties: true }), { name: 'search body', optional: true })
/** An upload carries its IoCs: up to MAX_UPLOAD_IOCS of them. */
const UPLOAD_BODY: BodyLimit = { limit: 64 * 1024 * 1024, status: 413 }
// Sources and monitors are checked by their services, which word each refusal as the peer does
// (the IoC that fails its type, the monitor field); the route reads a JSON object.
const SOURCE = objectBody(UPLOAD_BODY, T.Object({}, { additionalProperties: true }), { name: 'source body' })
const MONITOR = objectBody(SMALL_BODY, T.Object({}, { additionalProperties: true }), { name: 'monitor body' })

/** 201 with the new resource's address, as the peer answers a creation of a source or monitor. */
const created = (kind: 'sources' | 'monitors', view: Record<string, unknown>, id: string) =>
  json(view, 201, { location: `${BASE}/${kind}/${id}` })

export function threatIntelRoutes(
  deps: {
    store: Store
    now: () => number
    monitors: ThreatIntelMonitors
    security: Pick<Security, 'documentFilter' | 'hasDocumentFilters' | 'hasClusterPermission'>
  } & SourcesDeps,
): PluginRoute[] {
  // Findings and alerts name events: the caller sees those it may read (its document-level security).
  const events = (caller: Caller) =>
    deps.security.hasDocumentFilters(caller)
      ? new ReadableEvents(deps.store, (index) => deps.security.documentFilter(caller, index))
      : undefined
  return [
    route('GET', `${BASE}/findings/_search`, A.threatIntelFindingsGet, ({ query, caller }) =>
      searchIocFindings(deps.store, query, events(caller)),
    ),
    route('GET', `${BASE}/iocs`, A.threatIntelIocsList, ({ query }) => listIocs(deps.store, query)),
    route('GET', `${BASE}/alerts`, A.threatIntelAlertsGet, ({ query, caller }) => listIocAlerts(deps.store, query, events(caller))),
    route('PUT', `${BASE}/alerts/status`, A.threatIntelAlertsStatus, ({ query, caller }) =>
      updateIocAlertStatus(deps.store, deps.now, query, events(caller)),
    ),
    route('POST', `${BASE}/sources/_search`, A.threatIntelSourcesSearch, ({ body }) => searchSources(deps, body), SEARCH),
    route('GET', `${BASE}/sources/:id`, A.threatIntelSourcesGet, ({ params }) => getSource(deps, params.id)),
    route(
      'POST',
      `${BASE}/sources`,
      A.threatIntelSourcesWrite,
      async ({ body, caller }) => {
        const view = await createSource(deps, body, caller.name || null)
        return created('sources', view, view._id)
      },
      SOURCE,
    ),
    route(
      'PUT',
      `${BASE}/sources/:id`,
      A.threatIntelSourcesWrite,
      ({ body, params, caller }) => updateSource(deps, params.id, body, caller.name || null),
      SOURCE,
    ),
    route('DELETE', `${BASE}/sources/:id`, A.threatIntelSourcesDelete, ({ params }) => deleteSource(deps, params.id)),
    route('POST', `${BASE}/sources/:id/_refresh`, A.threatIntelSourcesRefresh, ({ params, caller }) => {
      // Refreshing the built-in source runs a content sync pass: the caller needs that right too.
      if (params.id === CTI_FEED_ID && !deps.security.hasClusterPermission(caller, CONTENT_MANAGER_ACTIONS.updateTrigger))
        throw new ApiError(403, noPermissions(CONTENT_MANAGER_ACTIONS.updateTrigger, caller))
      return refreshSource(deps, params.id)
    }),
    route('POST', `${BASE}/monitors/_search`, A.threatIntelMonitorsSearch, ({ body }) => deps.monitors.search(searchOf(body)), SEARCH_BODY),
    route(
      'POST',
      `${BASE}/monitors`,
      A.threatIntelMonitorsWrite,
      async ({ body }) => {
        const view = await deps.monitors.create(body)
        return created('monitors', view, view.id)
      },
      MONITOR,
    ),
    route('GET', `${BASE}/monitors/:id`, A.threatIntelMonitorsGet, ({ params }) => deps.monitors.get(params.id)),
    route('PUT', `${BASE}/monitors/:id`, A.threatIntelMonitorsWrite, ({ body, params }) => deps.monitors.update(params.id, body), MONITOR),
    route('DELETE', `${BASE}/monitors/:id`, A.threatIntelMonitorsDelete, ({ params }) => deps.monitors.delete(params.id)),
  ]
}

/** Threat intelligence REST surface (reference 3.2): thin routes over the IoC findings, IoCs, sources and monitors. */
import { Type as T } from '@sinclair/typebox'
import { type BodyLimit, readJson, readJsonObject, SMALL_BODY } from '../../http/body'
import { ApiError, json } from '../../http/errors'
import { route, type PluginRoute, type RouteBody } from '../../http/route'
import { PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import type { Store } from '../../store/port'
import { readSearchBody, SEARCH_BODY } from '../search-body'
import { searchIocFindings } from './ioc-findings'
import { listIocs } from './iocs'
import { listIocAlerts, updateIocAlertStatus } from './ioc-alerts'
import { ThreatIntelMonitorBody, type ThreatIntelMonitors } from './monitors'
import { createSource, deleteSource, getSource, searchSources, type SourcesDeps, updateSource } from './sources'
import { SourceConfigBody } from './user-sources'

const BASE = '/_plugins/_security_analytics/threat_intel'
/** Search DSL over sources: the built-in source is answered first, users' sources are searched with it. */
const SEARCH: RouteBody = { limit: SMALL_BODY, schema: T.Object({}, { additionalProperties: true }) }
/** An upload carries its IoCs: up to MAX_UPLOAD_IOCS of them. */
const UPLOAD_BODY: BodyLimit = { limit: 64 * 1024 * 1024, status: 413 }
const SOURCE: RouteBody = { limit: UPLOAD_BODY, schema: SourceConfigBody }
const MONITOR: RouteBody = { limit: SMALL_BODY, schema: ThreatIntelMonitorBody }

/** 201 with the new resource's address, as the peer answers a creation of a source or monitor. */
const created = (kind: 'sources' | 'monitors', view: Record<string, unknown>, id: string) =>
  json(view, 201, { location: `${BASE}/${kind}/${id}` })

export function threatIntelRoutes(deps: { store: Store; now: () => number; monitors: ThreatIntelMonitors } & SourcesDeps): PluginRoute[] {
  const sourceBody = (request: Request) => readJsonObject(request, UPLOAD_BODY, 'Invalid source body.')
  const monitorBody = (request: Request) => readJsonObject(request, SMALL_BODY, 'Invalid monitor body.')
  return [
    route('GET', `${BASE}/findings/_search`, A.threatIntelFindingsGet, ({ query }) => searchIocFindings(deps.store, query)),
    route('GET', `${BASE}/iocs`, A.threatIntelIocsList, ({ query }) => listIocs(deps.store, query)),
    route('GET', `${BASE}/alerts`, A.threatIntelAlertsGet, ({ query }) => listIocAlerts(deps.store, query)),
    route('PUT', `${BASE}/alerts/status`, A.threatIntelAlertsStatus, ({ query }) => updateIocAlertStatus(deps.store, deps.now, query)),
    route(
      'POST',
      `${BASE}/sources/_search`,
      A.threatIntelSourcesSearch,
      async ({ request }) => {
        const read = await readJson(request, SMALL_BODY)
        if (read.empty) return searchSources(deps, {})
        if ('invalid' in read || typeof read.value !== 'object' || read.value === null || Array.isArray(read.value))
          throw new ApiError(400, 'Invalid search body.')
        return searchSources(deps, read.value as Record<string, unknown>)
      },
      SEARCH,
    ),
    route('GET', `${BASE}/sources/:id`, A.threatIntelSourcesGet, ({ params }) => getSource(deps, params.id)),
    route(
      'POST',
      `${BASE}/sources`,
      A.threatIntelSourcesWrite,
      async ({ request, caller }) => {
        const view = await createSource(deps, await sourceBody(request), caller.name || null)
        return created('sources', view, view._id)
      },
      SOURCE,
    ),
    route(
      'PUT',
      `${BASE}/sources/:id`,
      A.threatIntelSourcesWrite,
      async ({ request, params, caller }) => updateSource(deps, params.id, await sourceBody(request), caller.name || null),
      SOURCE,
    ),
    route('DELETE', `${BASE}/sources/:id`, A.threatIntelSourcesDelete, ({ params }) => deleteSource(deps, params.id)),
    route(
      'POST',
      `${BASE}/monitors/_search`,
      A.threatIntelMonitorsSearch,
      async ({ request }) => deps.monitors.search(await readSearchBody(request)),
      SEARCH_BODY,
    ),
    route(
      'POST',
      `${BASE}/monitors`,
      A.threatIntelMonitorsWrite,
      async ({ request }) => {
        const view = await deps.monitors.create(await monitorBody(request))
        return created('monitors', view, view.id)
      },
      MONITOR,
    ),
    route('GET', `${BASE}/monitors/:id`, A.threatIntelMonitorsGet, ({ params }) => deps.monitors.get(params.id)),
    route(
      'PUT',
      `${BASE}/monitors/:id`,
      A.threatIntelMonitorsWrite,
      async ({ request, params }) => deps.monitors.update(params.id, await monitorBody(request)),
      MONITOR,
    ),
    route('DELETE', `${BASE}/monitors/:id`, A.threatIntelMonitorsDelete, ({ params }) => deps.monitors.delete(params.id)),
  ]
}

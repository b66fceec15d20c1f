/** Threat intelligence REST surface (reference 3.2): thin routes over the IoC findings, IoCs and sources. */
import { Type as T } from '@sinclair/typebox'
import { readJson, readJsonObject, SMALL_BODY } from '../../http/body'
import { ApiError } from '../../http/errors'
import { route, type PluginRoute, type RouteBody } from '../../http/route'
import { PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import type { Store } from '../../store/port'
import { searchIocFindings } from './ioc-findings'
import { listIocs } from './iocs'
import { listIocAlerts, updateIocAlertStatus } from './ioc-alerts'
import { createSource, getSource, searchSources, type SourcesDeps } from './sources'

const BASE = '/_plugins/_security_analytics/threat_intel'
/** Search DSL: only `from` and `size` are read (one source exists); the rest is accepted as the peer accepts it. */
const SEARCH: RouteBody = { limit: SMALL_BODY, schema: T.Object({}, { additionalProperties: true }) }
const SOURCE: RouteBody = { limit: SMALL_BODY, schema: T.Object({}, { additionalProperties: true }) }

export function threatIntelRoutes(deps: { store: Store; now: () => number } & SourcesDeps): PluginRoute[] {
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
      async ({ request }) => createSource(await readJsonObject(request, SMALL_BODY, 'Invalid source body.')),
      SOURCE,
    ),
  ]
}

/** Threat intelligence REST surface (reference 3.2): thin routes over the IoC findings, IoCs and sources. */
import { Type as T } from '@sinclair/typebox'
import { SMALL_BODY } from '../../http/body'
import { objectBody, route, type PluginRoute } from '../../http/route'
import { PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import type { Store } from '../../store/port'
import { searchIocFindings } from './ioc-findings'
import { listIocs } from './iocs'
import { listIocAlerts, updateIocAlertStatus } from './ioc-alerts'
import { createSource, getSource, searchSources, type SourcesDeps } from './sources'

const BASE = '/_plugins/_security_analytics/threat_intel'
/** Search DSL: only `from` and `size` are read (one source exists); the rest is accepted as the peer accepts it. */
const SEARCH = objectBody(SMALL_BODY, T.Object({}, { additionalProperties: true }), { name: 'search body', optional: true })
const SOURCE = objectBody(SMALL_BODY, T.Object({}, { additionalProperties: true }), { name: 'source body' })

export function threatIntelRoutes(deps: { store: Store; now: () => number } & SourcesDeps): PluginRoute[] {
  return [
    route('GET', `${BASE}/findings/_search`, A.threatIntelFindingsGet, ({ query }) => searchIocFindings(deps.store, query)),
    route('GET', `${BASE}/iocs`, A.threatIntelIocsList, ({ query }) => listIocs(deps.store, query)),
    route('GET', `${BASE}/alerts`, A.threatIntelAlertsGet, ({ query }) => listIocAlerts(deps.store, query)),
    route('PUT', `${BASE}/alerts/status`, A.threatIntelAlertsStatus, ({ query }) => updateIocAlertStatus(deps.store, deps.now, query)),
    route('POST', `${BASE}/sources/_search`, A.threatIntelSourcesSearch, ({ body }) => searchSources(deps, body), SEARCH),
    route('GET', `${BASE}/sources/:id`, A.threatIntelSourcesGet, ({ params }) => getSource(deps, params.id)),
    route('POST', `${BASE}/sources`, A.threatIntelSourcesWrite, ({ body }) => createSource(body), SOURCE),
  ]
}

/** Threat intelligence REST surface (reference 3.2): thin routes over the IoC findings. */
import { route, type PluginRoute } from '../../http/route'
import { PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import type { Store } from '../../store/port'
import { searchIocFindings } from './ioc-findings'

const BASE = '/_plugins/_security_analytics/threat_intel'

export function threatIntelRoutes(deps: { store: Store }): PluginRoute[] {
  return [route('GET', `${BASE}/findings/_search`, A.threatIntelFindingsGet, ({ query }) => searchIocFindings(deps.store, query))]
}

// POST /update (reference 4.10, spec Authentication 7): an on-demand pass, disabled for everyone
// by `catalog.update_on_demand: false`; 409 while a pass runs here or holds the cluster lock
// elsewhere, else 202 and the pass runs in the background.
import type { ClusterSettings } from '../../config/cluster-settings'
import { ApiError, envelope } from '../../http/errors'
import { route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../../security/actions'
import type { StartResult } from './service'

export const UPDATE_PATH = '/_plugins/_content_manager/update'

export function updateRoutes(deps: { settings: ClusterSettings; start(): Promise<StartResult> }): PluginRoute[] {
  return [
    route('POST', UPDATE_PATH, CONTENT_MANAGER_ACTIONS.updateTrigger, async () => {
      const s = await deps.settings.snapshot()
      if (!s.bool('plugins.content_manager.catalog.update_on_demand'))
        throw new ApiError(403, 'On-demand content updates are disabled on this deployment.')
      const started = await deps.start()
      if (started !== 'started') return envelope(409, 'A content update is already in progress.')
      return envelope(202, 'The update request has been accepted for processing.')
    }),
  ]
}

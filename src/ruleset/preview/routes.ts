/**
 * `POST /_plugins/_security_analytics/rules/_preview` (svc-ext, beyond the peer): named as the
 * peer names its rule actions (`rules/_validate`), under `rules` since a preview runs a rule, a
 * correlation rule or an IoC match without a detector. The caller must be allowed to search the
 * indices it previews, as a search of them would require.
 */
import { SMALL_BODY } from '../../http/body'
import type { Security } from '../../http/caller'
import { objectBody, route, type PluginRoute } from '../../http/route'
import type { ClusterSettings } from '../../config/cluster-settings'
import { INDEX_ACTIONS, PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import { preview, PreviewBody, type PreviewDeps } from './preview'

const PREVIEW = objectBody(SMALL_BODY, PreviewBody, { name: 'preview request' })

export function previewRoutes(
  deps: PreviewDeps & { settings: ClusterSettings; security: Pick<Security, 'authorizeIndices' | 'documentFilter'> },
): PluginRoute[] {
  return [
    route(
      'POST',
      '/_plugins/_security_analytics/rules/_preview',
      A.rulesPreview,
      async ({ body, caller }) => {
        deps.security.authorizeIndices(caller, INDEX_ACTIONS.search, body.indices)
        return preview(deps, body, await deps.settings.snapshot(), (index) => deps.security.documentFilter(caller, index))
      },
      PREVIEW,
    ),
  ]
}

import type { Deps } from '../../deps'
import type { BodyLimit } from '../../http/body'
import { json } from '../../http/errors'
import { objectBody, route, type PluginRoute } from '../../http/route'
import { PLATFORM_SA_ACTIONS } from '../../security/actions'
import { searchFindings, parseFindingsQuery } from './search'
import { updateFindings } from './update'
import { findingsOf, parseUpdates, UpdateFindingsBody } from './update-request'
import { findingsFilter } from './visibility'
import type { CaseNotifier } from '../../notifications/case'

export { findingsReadFilter } from './visibility'

export const MAX_CASE_BULK = 'plugins.security_analytics.max_case_management_bulk_size'

/** At most 100 findings with their comment threads; far beyond that is not a case update. */
const UPDATE_BODY: BodyLimit = { limit: 10 * 1024 * 1024, status: 413 }
/** Checked by hand in the reference's order (findingsOf, then parseUpdates with this request's setting). */
const UPDATE = objectBody(UPDATE_BODY, UpdateFindingsBody, { parse: findingsOf, malformed: (why) => `Invalid JSON body: ${why}` })

const BASE = '/_plugins/_security_analytics/findings'

/**
 * Case management on findings. The update has no permission upstream (it is a
 * bulk under the caller's identity, reference 4.1); here it is the declared
 * `findings/update` action, held by `all_access` only unless a role grants it,
 * and each item additionally needs `indices:data/write/update` on its index.
 */
export function findingsRoutes(deps: Deps, caseNotifier?: CaseNotifier): PluginRoute[] {
  return [
    route(
      'PUT',
      `${BASE}/_update`,
      PLATFORM_SA_ACTIONS.findingsUpdate,
      async ({ body, caller }) => {
        const settings = await deps.settings.snapshot()
        const updates = parseUpdates(body, settings.num(MAX_CASE_BULK))
        const answer = await updateFindings(deps, caller, updates)
        // Only what was written is told; a failure to queue is logged, the update stands.
        const written = updates.filter((_, i) => answer.items[i].status === 200 || answer.items[i].status === 201)
        await caseNotifier?.(written, caller.name).catch((e) =>
          deps.log.warn('case update notifications not queued', { error: e as Error }),
        )
        return json(answer, answer.errors ? 207 : 200)
      },
      UPDATE,
    ),
    route('GET', `${BASE}/_search`, PLATFORM_SA_ACTIONS.findingsGet, async ({ query, caller }) => {
      const q = parseFindingsQuery(query)
      const settings = await deps.settings.snapshot()
      return searchFindings(deps.store, q, await findingsFilter(deps.store, settings, caller))
    }),
  ]
}

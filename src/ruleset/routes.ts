/**
 * Ruleset Management's REST surface under `/_plugins/_security_analytics` (reference 5.3):
 * detectors CRUD and search, rules create/update/get/delete/search, log type search. Findings
 * routes are in `./findings/routes`.
 */
import { readBody, readJsonObject, SMALL_BODY, type BodyLimit } from '../http/body'
import { ApiError, json } from '../http/errors'
import { route, type PluginRoute, type RouteBody } from '../http/route'
import { PLATFORM_SA_ACTIONS } from '../security/actions'
import type { Ruleset } from './index'
import { DetectorBody } from './model'
import { readSearchBody as searchBody, SEARCH_BODY } from './search-body'

const BASE = '/_plugins/_security_analytics'
const RULE_BODY: BodyLimit = { limit: 1024 * 1024, status: 413, kind: 'yaml' }
const RULE: RouteBody = { limit: RULE_BODY }
const DETECTOR: RouteBody = { limit: SMALL_BODY, schema: DetectorBody }
const A = PLATFORM_SA_ACTIONS

const flag = (v: string | undefined) => v === '' || v === 'true'

export function rulesetRoutes(r: Ruleset): PluginRoute[] {
  return [
    route(
      'POST',
      `${BASE}/detectors`,
      A.detectorWrite,
      async ({ request, caller }) => {
        const view = await r.detectors.create(await readJsonObject(request, SMALL_BODY, 'Invalid detector body.'), caller)
        return json(view, 201, { location: `${BASE}/detectors/${view._id}` })
      },
      DETECTOR,
    ),
    route(
      'POST',
      `${BASE}/detectors/_search`,
      A.detectorSearch,
      async ({ request, caller }) => r.detectors.search(await searchBody(request), caller),
      SEARCH_BODY,
    ),
    route(
      'PUT',
      `${BASE}/detectors/:detector_id`,
      A.detectorWrite,
      async ({ request, params, caller }) =>
        r.detectors.update(params.detector_id, await readJsonObject(request, SMALL_BODY, 'Invalid detector body.'), caller),
      DETECTOR,
    ),
    route('GET', `${BASE}/detectors/:detector_id`, A.detectorGet, ({ params, caller }) => r.detectors.get(params.detector_id, caller)),
    route('DELETE', `${BASE}/detectors/:detector_id`, A.detectorDelete, ({ params, caller }) =>
      r.detectors.delete(params.detector_id, caller),
    ),
    // Alerting's monitor execute API: the monitor id names a detector, which runs now (detector write permission).
    route('POST', '/_plugins/_alerting/monitors/:monitor_id/_execute', A.detectorWrite, ({ params, caller }) =>
      r.executeMonitor(params.monitor_id, caller),
    ),

    route(
      'POST',
      `${BASE}/rules`,
      A.ruleWrite,
      async ({ request, query, caller }) => {
        const view = await r.rules.create({ body: await ruleText(request), category: query.category || undefined, caller })
        return json(view, 201, { location: `${BASE}/rules/${view._id}` })
      },
      RULE,
    ),
    route(
      'POST',
      `${BASE}/rules/_search`,
      A.ruleSearch,
      async ({ request, query, caller }) =>
        r.rules.search(query.pre_packaged === undefined || flag(query.pre_packaged), await searchBody(request), caller),
      SEARCH_BODY,
    ),
    route(
      'PUT',
      `${BASE}/rules/:rule_id`,
      A.ruleWrite,
      async ({ request, params, query, caller }) =>
        r.rules.update(
          params.rule_id,
          { body: await ruleText(request), category: query.category || undefined, caller },
          flag(query.forced),
        ),
      RULE,
    ),
    route('GET', `${BASE}/rules/:rule_id`, A.ruleSearch, ({ params, caller }) => r.rules.get(params.rule_id, caller)),
    route('DELETE', `${BASE}/rules/:rule_id`, A.ruleDelete, ({ params, query, caller }) =>
      r.rules.deleteCustom(params.rule_id, flag(query.forced), caller),
    ),

    route(
      'GET',
      `${BASE}/logtype/_search`,
      A.logtypeSearch,
      async ({ request }) => r.logTypes.search(await searchBody(request)),
      SEARCH_BODY,
    ),
    route(
      'POST',
      `${BASE}/logtype/_search`,
      A.logtypeSearch,
      async ({ request }) => r.logTypes.search(await searchBody(request)),
      SEARCH_BODY,
    ),
  ]
}

/** A rule body is Sigma YAML text (upstream sends it raw). */
async function ruleText(request: Request): Promise<string> {
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(await readBody(request, RULE_BODY))
  } catch (e) {
    if (e instanceof ApiError) throw e
    throw new ApiError(400, 'Rule body must be UTF-8 text.')
  }
  if (text.trim() === '') throw new ApiError(400, 'Rule body is empty.')
  return text
}

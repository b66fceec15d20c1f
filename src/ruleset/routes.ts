/**
 * Ruleset Management's REST surface under `/_plugins/_security_analytics` (reference 5.3):
 * detectors CRUD and search, rules create/update/get/delete/search, log type search. Findings
 * routes are in `./findings/routes`.
 */
import { readBody, readJson, readJsonObject, SMALL_BODY } from '../http/body'
import { ApiError, json } from '../http/errors'
import { route, type PluginRoute } from '../http/route'
import { PLATFORM_SA_ACTIONS } from '../security/actions'
import type { SearchBody } from '../store/port'
import type { Ruleset } from './index'

const BASE = '/_plugins/_security_analytics'
const RULE_BODY = { limit: 1024 * 1024, status: 413 }
const A = PLATFORM_SA_ACTIONS

const flag = (v: string | undefined) => v === '' || v === 'true'

async function searchBody(request: Request): Promise<SearchBody> {
  const read = await readJson(request, SMALL_BODY)
  if (read.empty) return {}
  if ('invalid' in read || typeof read.value !== 'object' || read.value === null || Array.isArray(read.value))
    throw new ApiError(400, 'Invalid search request body.')
  return read.value as SearchBody
}

export function rulesetRoutes(r: Ruleset): PluginRoute[] {
  return [
    route('POST', `${BASE}/detectors`, A.detectorWrite, async ({ request, caller }) => {
      const view = await r.detectors.create(await readJsonObject(request, SMALL_BODY, 'Invalid detector body.'), caller)
      return json(view, 201, { location: `${BASE}/detectors/${view._id}` })
    }),
    route('POST', `${BASE}/detectors/_search`, A.detectorSearch, async ({ request, caller }) =>
      r.detectors.search(await searchBody(request), caller),
    ),
    route('PUT', `${BASE}/detectors/:detector_id`, A.detectorWrite, async ({ request, params, caller }) =>
      r.detectors.update(params.detector_id, await readJsonObject(request, SMALL_BODY, 'Invalid detector body.'), caller),
    ),
    route('GET', `${BASE}/detectors/:detector_id`, A.detectorGet, ({ params, caller }) => r.detectors.get(params.detector_id, caller)),
    route('DELETE', `${BASE}/detectors/:detector_id`, A.detectorDelete, ({ params, caller }) => r.detectors.delete(params.detector_id, caller)),

    route('POST', `${BASE}/rules`, A.ruleWrite, async ({ request, query, caller }) => {
      const view = await r.rules.create({ body: await ruleText(request), category: query.category || undefined, caller })
      return json(view, 201, { location: `${BASE}/rules/${view._id}` })
    }),
    route('POST', `${BASE}/rules/_search`, A.ruleSearch, async ({ request, query, caller }) =>
      r.rules.search(query.pre_packaged === undefined || flag(query.pre_packaged), await searchBody(request), caller),
    ),
    route('PUT', `${BASE}/rules/:rule_id`, A.ruleWrite, async ({ request, params, query, caller }) =>
      r.rules.update(params.rule_id, { body: await ruleText(request), category: query.category || undefined, caller }, flag(query.forced)),
    ),
    route('GET', `${BASE}/rules/:rule_id`, A.ruleSearch, ({ params, caller }) => r.rules.get(params.rule_id, caller)),
    route('DELETE', `${BASE}/rules/:rule_id`, A.ruleDelete, ({ params, query, caller }) =>
      r.rules.deleteCustom(params.rule_id, flag(query.forced), caller),
    ),

    route('GET', `${BASE}/logtype/_search`, A.logtypeSearch, async ({ request }) => r.logTypes.search(await searchBody(request))),
    route('POST', `${BASE}/logtype/_search`, A.logtypeSearch, async ({ request }) => r.logTypes.search(await searchBody(request))),
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

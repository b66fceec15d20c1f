/**
 * Ruleset Management's REST surface under `/_plugins/_security_analytics` (reference 5.3):
 * detectors CRUD and search, rules create/update/get/delete/search, log type search. Findings
 * routes are in `./findings/routes`.
 */
import { SMALL_BODY, type BodyLimit } from '../http/body'
import { json } from '../http/errors'
import { objectBody, route, textBody, type PluginRoute } from '../http/route'
import { PLATFORM_SA_ACTIONS } from '../security/actions'
import type { Caller } from '../http/caller'
import type { MonitorRunResult } from './detection/monitor'
import type { Detectors } from './detectors'
import type { LogTypes } from './log-types'
import { DetectorBody } from './model'
import type { Rules } from './rules'
import { SEARCH_BODY, searchOf } from './search-body'

const BASE = '/_plugins/_security_analytics'
const RULE_BODY: BodyLimit = { limit: 1024 * 1024, status: 413, kind: 'yaml' }
/** A rule body is Sigma YAML text (upstream sends it raw); the rule parser judges it. */
const RULE = textBody(RULE_BODY, { empty: 'Rule body is empty.', invalid: 'Rule body must be UTF-8 text.' })
const DETECTOR = objectBody(SMALL_BODY, DetectorBody, { name: 'detector body' })
const A = PLATFORM_SA_ACTIONS

const flag = (v: string | undefined) => v === '' || v === 'true'
/** 201 with the new resource's address, as the reference answers a creation. */
const created = (kind: 'detectors' | 'rules', view: { _id: string }) => json(view, 201, { location: `${BASE}/${kind}/${view._id}` })

/** What the routes call: the services of `createRuleset` (routes never import the assembly). */
export interface RulesetApi {
  detectors: Detectors
  rules: Rules
  logTypes: LogTypes
  /** Alerting's monitor `_execute`: runs the detector behind the monitor id now. */
  executeMonitor(monitorId: string, caller: Caller | undefined): Promise<MonitorRunResult>
}

export function rulesetRoutes(r: RulesetApi): PluginRoute[] {
  return [
    route(
      'POST',
      `${BASE}/detectors`,
      A.detectorWrite,
      async ({ body, caller }) => created('detectors', await r.detectors.create(body, caller)),
      DETECTOR,
    ),
    route(
      'POST',
      `${BASE}/detectors/_search`,
      A.detectorSearch,
      async ({ body, caller }) => r.detectors.search(searchOf(body), caller),
      SEARCH_BODY,
    ),
    route(
      'PUT',
      `${BASE}/detectors/:detector_id`,
      A.detectorWrite,
      async ({ body, params, caller }) => r.detectors.update(params.detector_id, body, caller),
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
      async ({ body, query, caller }) => created('rules', await r.rules.create({ body, category: query.category || undefined, caller })),
      RULE,
    ),
    route(
      'POST',
      `${BASE}/rules/_search`,
      A.ruleSearch,
      async ({ body, query, caller }) =>
        r.rules.search(query.pre_packaged === undefined || flag(query.pre_packaged), searchOf(body), caller),
      SEARCH_BODY,
    ),
    route(
      'PUT',
      `${BASE}/rules/:rule_id`,
      A.ruleWrite,
      async ({ body, params, query, caller }) =>
        r.rules.update(params.rule_id, { body, category: query.category || undefined, caller }, flag(query.forced)),
      RULE,
    ),
    route('GET', `${BASE}/rules/:rule_id`, A.ruleSearch, ({ params, caller }) => r.rules.get(params.rule_id, caller)),
    route('DELETE', `${BASE}/rules/:rule_id`, A.ruleDelete, ({ params, query, caller }) =>
      r.rules.deleteCustom(params.rule_id, flag(query.forced), caller),
    ),

    // Log type search answers GET and POST alike (the body is the search in both).
    ...(['GET', 'POST'] as const).map((method) =>
      route(method, `${BASE}/logtype/_search`, A.logtypeSearch, async ({ body }) => r.logTypes.search(searchOf(body)), SEARCH_BODY),
    ),
  ]
}

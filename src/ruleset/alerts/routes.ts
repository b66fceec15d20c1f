/** Detector alerts' REST surface (reference 1.5, 1.6). */
import { Type as T } from '@sinclair/typebox'
import { readJsonObject, SMALL_BODY } from '../../http/body'
import { route, type PluginRoute, type RouteBody } from '../../http/route'
import { PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import { check } from '../model'
import type { CorrelationAlerts } from './correlation'
import type { Alerts } from './service'

const BASE = '/_plugins/_security_analytics'
/** Other keys are ignored, as the peer ignores them. */
const AckBody = T.Object({ alerts: T.Array(T.String()) }, { additionalProperties: true })
const ACK: RouteBody = { limit: SMALL_BODY, schema: AckBody }
const CorrelationAckBody = T.Object({ alertIds: T.Array(T.String()) }, { additionalProperties: true })
const CORRELATION_ACK: RouteBody = { limit: SMALL_BODY, schema: CorrelationAckBody }

export function alertsRoutes(alerts: Alerts, correlationAlerts: CorrelationAlerts): PluginRoute[] {
  return [
    route('GET', `${BASE}/alerts`, A.alertsGet, ({ query, caller }) => alerts.list(query, caller)),
    route(
      'POST',
      `${BASE}/detectors/:detector_id/_acknowledge/alerts`,
      A.alertsAck,
      async ({ request, params, caller }) => {
        const body = check(AckBody, await readJsonObject(request, SMALL_BODY, 'Invalid acknowledge body.'), 'acknowledge body')
        return alerts.acknowledge(params.detector_id, body.alerts, caller)
      },
      ACK,
    ),
    route('GET', `${BASE}/correlationAlerts`, A.correlationAlertsGet, ({ query, caller }) => correlationAlerts.list(query, caller)),
    route(
      'POST',
      `${BASE}/_acknowledge/correlationAlerts`,
      A.correlationAlertsAck,
      async ({ request, caller }) => {
        const body = check(CorrelationAckBody, await readJsonObject(request, SMALL_BODY, 'Invalid acknowledge body.'), 'acknowledge body')
        return correlationAlerts.acknowledge(body.alertIds, caller)
      },
      CORRELATION_ACK,
    ),
  ]
}

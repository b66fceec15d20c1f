/** Detector alerts' REST surface (reference 1.5, 1.6). */
import { Type as T } from '@sinclair/typebox'
import { SMALL_BODY } from '../../http/body'
import { objectBody, route, type PluginRoute } from '../../http/route'
import { PLATFORM_SA_ACTIONS as A } from '../../security/actions'
import type { CorrelationAlerts } from './correlation'
import type { Alerts } from './service'

const BASE = '/_plugins/_security_analytics'
/** Other keys are ignored, as the peer ignores them. */
const AckBody = T.Object({ alerts: T.Array(T.String()) }, { additionalProperties: true })
const ACK = objectBody(SMALL_BODY, AckBody, { name: 'acknowledge body' })
const CorrelationAckBody = T.Object({ alertIds: T.Array(T.String()) }, { additionalProperties: true })
const CORRELATION_ACK = objectBody(SMALL_BODY, CorrelationAckBody, { name: 'acknowledge body' })

export function alertsRoutes(alerts: Alerts, correlationAlerts: CorrelationAlerts): PluginRoute[] {
  return [
    route('GET', `${BASE}/alerts`, A.alertsGet, ({ query, caller }) => alerts.list(query, caller)),
    route(
      'POST',
      `${BASE}/detectors/:detector_id/_acknowledge/alerts`,
      A.alertsAck,
      ({ body, params, caller }) => alerts.acknowledge(params.detector_id, body.alerts, caller),
      ACK,
    ),
    route('GET', `${BASE}/correlationAlerts`, A.correlationAlertsGet, ({ query, caller }) => correlationAlerts.list(query, caller)),
    route(
      'POST',
      `${BASE}/_acknowledge/correlationAlerts`,
      A.correlationAlertsAck,
      ({ body, caller }) => correlationAlerts.acknowledge(body.alertIds, caller),
      CORRELATION_ACK,
    ),
  ]
}

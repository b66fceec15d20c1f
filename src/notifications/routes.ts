/**
 * OpenSearch Notifications' REST surface (reference 2.1, 2.2): channel configs and the test send.
 * Readers without `configs/update` see channel secrets masked.
 */
import type { ClusterSettings } from '../config/cluster-settings'
import { SMALL_BODY } from '../http/body'
import { ApiError } from '../http/errors'
import { objectBody, route, type PluginRoute } from '../http/route'
import { NOTIFICATIONS_ACTIONS as N } from '../security/actions'
import type { Caller, Security } from '../http/caller'
import type { Channels } from './configs'
import { CreateConfigBody, UpdateConfigBody } from './model'
import { deliver } from './send'

const BASE = '/_plugins/_notifications'
const CREATE = objectBody(SMALL_BODY, CreateConfigBody, { name: 'notification config' })
const UPDATE = objectBody(SMALL_BODY, UpdateConfigBody, { name: 'notification config' })

export function notificationsRoutes(d: {
  channels: Channels
  settings: ClusterSettings
  security: Pick<Security, 'hasClusterPermission'>
}): PluginRoute[] {
  const secretsFor = (caller: Caller) => d.security.hasClusterPermission(caller, N.configUpdate)
  const test = async ({ params }: { params: Record<string, string> }) => {
    const id = params.config_id
    const stored = await d.channels.stored(id)
    if (!stored) throw new ApiError(404, `Config ${id} not found`)
    const title = `Test Message Title-${id}`
    const delivery = await deliver(stored, { title, text: `Test message content body for config id ${id}` }, await d.settings.snapshot())
    const status = {
      config_id: id,
      config_type: stored.config.config_type,
      config_name: stored.config.name,
      email_recipient_status: [],
      delivery_status: { status_code: delivery.status_code, status_text: delivery.status_text },
    }
    if (!delivery.ok) {
      const code = Number(delivery.status_code)
      throw new ApiError(
        code >= 400 && code < 600 ? code : 500,
        `Failed to send the test message: ${delivery.status_text}`,
        {},
        { event_status_list: [status] },
      )
    }
    return { event_source: { title, reference_id: id, severity: 'info', tags: [] }, status_list: [status] }
  }
  return [
    route('POST', `${BASE}/configs`, N.configCreate, ({ body }) => d.channels.create(body), CREATE),
    route('PUT', `${BASE}/configs/:config_id`, N.configUpdate, ({ body, params }) => d.channels.update(params.config_id, body), UPDATE),
    route('GET', `${BASE}/configs/:config_id`, N.configGet, ({ params, caller }) => d.channels.get(params.config_id, secretsFor(caller))),
    route('GET', `${BASE}/configs`, N.configGet, ({ query, caller }) => d.channels.list(query, secretsFor(caller))),
    route('DELETE', `${BASE}/configs/:config_id`, N.configDelete, ({ params }) => d.channels.delete([params.config_id])),
    route('DELETE', `${BASE}/configs`, N.configDelete, ({ query }) =>
      d.channels.delete((query.config_id_list ?? '').split(',').filter(Boolean)),
    ),
    route('POST', `${BASE}/feature/test/:config_id`, N.featureSend, test),
    // Deprecated by the peer, still served.
    route('GET', `${BASE}/feature/test/:config_id`, N.featureSend, test),
  ]
}

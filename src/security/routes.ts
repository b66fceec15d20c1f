import { route, type PluginRoute } from '../http/route'
import { AUTHENTICATED_ONLY } from './actions'
import type { Caller, Security } from '../http/caller'

export const AUTHINFO_PATH = '/_plugins/_security/authinfo'

/**
 * The platform's authinfo answer for the caller. Like the platform, it needs
 * authentication only: every user may ask who they are.
 */
export function authInfo(caller: Caller, remoteAddress?: string) {
  return {
    user: `User [name=${caller.name}, backend_roles=[${caller.backendRoles.join(', ')}], requestedTenant=null]`,
    user_name: caller.name,
    user_requested_tenant: null,
    remote_address: remoteAddress ?? null,
    backend_roles: caller.backendRoles,
    custom_attribute_names: Object.keys(caller.attributes).map((k) => `attr.internal.${k}`),
    roles: caller.roles,
    tenants: { global_tenant: true, [caller.name]: true },
    principal: null,
    peer_certificates: '0',
    sso_logout_url: null,
  }
}

export function securityRoutes(_security?: Security): PluginRoute[] {
  const handler = ({ caller, remoteAddress }: { caller: Caller; remoteAddress?: string }) => authInfo(caller, remoteAddress)
  return [route('GET', AUTHINFO_PATH, AUTHENTICATED_ONLY, handler), route('POST', AUTHINFO_PATH, AUTHENTICATED_ONLY, handler)]
}

/**
 * A small cluster for platform-mode tests: one embedded svc-ext as "the platform" (it speaks
 * the platform's REST API) and svc-ext nodes in platform mode pointed at it, all in-process
 * over real HTTP.
 */
import { ADMIN, startTestServer, type TestServer, type TestServerOptions, type TestUser } from '../helpers/server'

/** The nodes' service account: all_access plus the explicit system-index grant the platform asks for. */
export const SERVICE_ACCOUNT = { name: 'svc-service', password: 'Svc-service-pass-1' }
export const SERVICE_ROLE = 'svc_service_account'
/** The explicit system-index grant a service account needs besides all_access. */
export const SERVICE_ROLE_DEF = {
  index_permissions: [{ index_patterns: ['.svc-internal-state'], allowed_actions: ['system:admin/system_index'] }],
}

export async function startPlatform(
  opts: { users?: TestUser[]; roles?: Record<string, unknown>; rolesMapping?: Record<string, unknown>; logLines?: string[] } = {},
): Promise<TestServer> {
  return startTestServer({
    users: [{ ...SERVICE_ACCOUNT, roles: ['all_access', SERVICE_ROLE] }, ...(opts.users ?? [])],
    roles: {
      [SERVICE_ROLE]: SERVICE_ROLE_DEF,
      ...opts.roles,
    },
    rolesMapping: {
      // The sessions DLS of svc_ai_assistant must not reach the service account, or the nodes could not
      // count anyone's sessions: the role goes to the people, not to everyone (the built-in maps it to *).
      svc_ai_assistant: { users: [ADMIN.name, ...(opts.users ?? []).map((u) => u.name)] },
      ...opts.rolesMapping,
    },
    logLines: opts.logLines,
  })
}

/** A node in platform mode; its security files (roles.yml for OUR actions) come from `opts`. */
export function startNode(platform: TestServer, opts: TestServerOptions = {}): Promise<TestServer> {
  return startTestServer({
    ...opts,
    settings: {
      'storage.platform.url': platform.url,
      'storage.platform.username': SERVICE_ACCOUNT.name,
      'storage.platform.password': SERVICE_ACCOUNT.password,
      ...opts.settings,
    },
  })
}

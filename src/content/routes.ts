// Thin HTTP layer of the content resources, policy and space routes: parse, call a service, shape
// the `{message, status}` answer. Authorization of the cluster action happens before a handler runs.
import { ApiError, envelope } from '../http/errors'
import type { BodyLimit } from '../http/body'
import { objectBody, route, type PluginRoute } from '../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../security/actions'
import { KINDS, type ResourceKind } from './kinds'
import type { PolicyService } from './policy/service'
import { PolicyBody, resourceBody } from './resources/bodies'
import type { ResourceService } from './resources/service'

export const CONTENT_PREFIX = '/_plugins/_content_manager'

/** Resource documents can carry whole KVDBs; anything larger is refused before it is buffered. */
const RESOURCE_BODY: BodyLimit = { limit: 10 * 1024 * 1024, status: 413 }
/** The same, for the kinds that also take YAML (reference 4.1: decoders, KVDBs, filters). */
const YAML_RESOURCE_BODY: BodyLimit = { ...RESOURCE_BODY, kind: 'yaml' }
const ID = /^[A-Za-z0-9_-]+$/

/** Creation names the parser's complaint in its 400 (reference 4.2.2); update and the policy do not. */
const bodyOf = (kind: ResourceKind, op: 'create' | 'update') =>
  objectBody(KINDS[kind].yaml ? YAML_RESOURCE_BODY : RESOURCE_BODY, resourceBody(kind, op), { detail: op === 'create' })
const POLICY_BODY = objectBody(RESOURCE_BODY, PolicyBody)

function checkId(id: string | undefined): string {
  if (!id || !ID.test(id)) throw new ApiError(400, "Invalid 'id' format.")
  return id
}

export function contentResourceRoutes(resources: ResourceService, policies: PolicyService): PluginRoute[] {
  const routes: PluginRoute[] = []
  for (const info of Object.values(KINDS)) {
    const kind: ResourceKind = info.kind
    const actions = CONTENT_MANAGER_ACTIONS[kind]
    const base = `${CONTENT_PREFIX}/${info.plural}`
    routes.push(
      route(
        'POST',
        base,
        actions.create,
        async ({ body, caller }) => envelope(201, await resources.create(kind, body, caller)),
        bodyOf(kind, 'create'),
      ),
      {
        ...route(
          'PUT',
          `${base}/:id`,
          actions.update,
          async ({ body, params, caller }) => envelope(200, await resources.update(kind, checkId(params.id), body, caller)),
          bodyOf(kind, 'update'),
        ),
        // A malformed id answers before the body is looked at.
        before: ({ params }) => void checkId(params.id),
      },
      route('DELETE', `${base}/:id`, actions.delete, async ({ params, caller }) => {
        return envelope(200, await resources.remove(kind, checkId(params.id), caller))
      }),
    )
  }
  routes.push(
    {
      ...route(
        'PUT',
        `${CONTENT_PREFIX}/policy/:space`,
        CONTENT_MANAGER_ACTIONS.policyUpdate,
        async ({ body, params, caller }) => envelope(200, await policies.update(params.space ?? '', body, caller)),
        POLICY_BODY,
      ),
      // The disable switch answers before the body is even looked at.
      before: () => policies.assertUpdatesEnabled(),
    },
    route('DELETE', `${CONTENT_PREFIX}/space/:space`, CONTENT_MANAGER_ACTIONS.spaceDelete, async ({ params, caller }) => {
      const space = params.space ?? ''
      await policies.reset(space, caller)
      return envelope(200, `Successfully reset space [${space}].`)
    }),
  )
  return routes
}

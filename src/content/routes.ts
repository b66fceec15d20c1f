// Thin HTTP layer of the content resources, policy and space routes: parse, call a service, shape
// the `{message, status}` answer. Authorization of the cluster action happens before a handler runs.
import { ApiError, envelope } from '../http/errors'
import { BodySyntaxError, decodeUtf8, parseJson, parseYaml, readBody, sentAsYaml, type BodyLimit } from '../http/body'
import { Type as T } from '@sinclair/typebox'
import { route, type PluginRoute, type RouteBody } from '../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../security/actions'
import { KINDS, type ResourceKind } from './kinds'
import type { PolicyService } from './policy/service'
import { isObject, type Doc } from './repository'
import type { ResourceService } from './resources/service'

export const CONTENT_PREFIX = '/_plugins/_content_manager'

/** Resource documents can carry whole KVDBs; anything larger is refused before it is buffered. */
const RESOURCE_BODY: BodyLimit = { limit: 10 * 1024 * 1024, status: 413 }
/** The same, for the kinds that also take YAML (reference 4.1: decoders, KVDBs, filters). */
const YAML_RESOURCE_BODY: BodyLimit = { ...RESOURCE_BODY, kind: 'yaml' }
const ID = /^[A-Za-z0-9_-]+$/

/**
 * Declared bodies (reference 4.2.2): the resource itself, plus the parent integration when a
 * decoder, KVDB or rule is created and the space of a filter. The service checks them in the
 * reference's order.
 */
const Resource = T.Record(T.String(), T.Unknown())
const bodyOf = (kind: ResourceKind, op: 'create' | 'update'): RouteBody => ({
  limit: KINDS[kind].yaml ? YAML_RESOURCE_BODY : RESOURCE_BODY,
  schema: T.Object({
    resource: Resource,
    ...(op === 'create' && (kind === 'decoder' || kind === 'kvdb' || kind === 'rule') ? { integration: T.String() } : {}),
    ...(kind === 'filter' ? { space: T.String() } : {}),
  }),
})
const POLICY_BODY: RouteBody = { limit: RESOURCE_BODY, schema: T.Object({ resource: Resource }) }

/** JSON, or YAML where the kind accepts it (reference 4.1); `detail` adds the parser's complaint. */
async function readResourceBody(request: Request, yamlAllowed: boolean, detail: boolean): Promise<Doc> {
  const bytes = await readBody(request, yamlAllowed ? YAML_RESOURCE_BODY : RESOURCE_BODY)
  const invalid = (why?: string) => new ApiError(400, detail && why ? `Invalid request body. ${why}` : 'Invalid request body.')
  const yaml = yamlAllowed && sentAsYaml(request)
  let value: unknown
  try {
    const text = decodeUtf8(bytes)
    if (text.trim() === '') throw invalid()
    value = yaml ? parseYaml(text) : parseJson(text)
  } catch (e) {
    if (e instanceof BodySyntaxError) throw invalid(e.message)
    throw e
  }
  if (!isObject(value)) throw invalid('The body must be an object.')
  return value
}

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
        async ({ request, caller }) => {
          const body = await readResourceBody(request, info.yaml, true)
          return envelope(201, await resources.create(kind, body, caller))
        },
        bodyOf(kind, 'create'),
      ),
      route(
        'PUT',
        `${base}/:id`,
        actions.update,
        async ({ request, params, caller }) => {
          const id = checkId(params.id)
          const body = await readResourceBody(request, info.yaml, false)
          return envelope(200, await resources.update(kind, id, body, caller))
        },
        bodyOf(kind, 'update'),
      ),
      route('DELETE', `${base}/:id`, actions.delete, async ({ params, caller }) => {
        return envelope(200, await resources.remove(kind, checkId(params.id), caller))
      }),
    )
  }
  routes.push(
    route(
      'PUT',
      `${CONTENT_PREFIX}/policy/:space`,
      CONTENT_MANAGER_ACTIONS.policyUpdate,
      async ({ request, params, caller }) => {
        // The disable switch answers before the body is even looked at.
        await policies.assertUpdatesEnabled()
        const body = await readResourceBody(request, false, false)
        return envelope(200, await policies.update(params.space ?? '', body, caller))
      },
      POLICY_BODY,
    ),
    route('DELETE', `${CONTENT_PREFIX}/space/:space`, CONTENT_MANAGER_ACTIONS.spaceDelete, async ({ params, caller }) => {
      const space = params.space ?? ''
      await policies.reset(space, caller)
      return envelope(200, `Successfully reset space [${space}].`)
    }),
  )
  return routes
}

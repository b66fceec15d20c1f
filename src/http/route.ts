import { type Caller, noPermissions, type Security } from './caller'
import type { TObject } from '@sinclair/typebox'
import type { BodyLimit } from './body'
import { ApiError, json } from './errors'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD'

export interface RouteInput {
  request: Request
  params: Record<string, string>
  query: Record<string, string | undefined>
  caller: Caller
  remoteAddress?: string
}

/**
 * A plugin route declares the cluster action it implements; authorization
 * happens before the handler runs, so no route can forget it. The table of
 * these declarations is also what the permission test walks.
 */
export interface PluginRoute {
  method: Method
  path: string
  /** Cluster action checked before the handler; every plugin route has one. */
  action: string
  handler: (input: RouteInput) => Promise<unknown> | unknown
  /** The body the route reads, when it reads one: declared so that limits and fields can be checked from outside. */
  body?: RouteBody
  /**
   * The permission (action or action group) `?perform_permission_check=true` evaluates. Routes
   * that set it answer such a request, as the platform's security layer does, with
   * `{accessAllowed, missingPrivileges}` without running the handler.
   */
  permissionCheck?: string
  /** Further cluster actions the caller must hold (e.g. logtest detection runs rules/evaluate on the caller's behalf). */
  alsoRequires?: string[]
}

/**
 * What a route's handler reads: the limit it passes to `readBody` (the same
 * constant, so the declaration cannot drift) and, for JSON bodies, the schema
 * of the top-level object. Sigma rules are YAML text and have no schema.
 */
export interface RouteBody {
  limit: BodyLimit
  schema?: TObject
}

export function route(method: Method, path: string, action: string, handler: PluginRoute['handler'], body?: RouteBody): PluginRoute {
  return body ? { method, path, action, handler, body } : { method, path, action, handler }
}

export async function runPluginRoute(
  r: PluginRoute,
  security: Security,
  ctx: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; remoteAddress?: string },
): Promise<Response> {
  if (r.permissionCheck && ctx.query.perform_permission_check === 'true') {
    const caller = await security.authenticate(ctx.request, ctx.remoteAddress)
    const missing = security.missingPrivileges
      ? security.missingPrivileges(caller, r.permissionCheck)
      : security.hasClusterPermission(caller, r.action)
        ? []
        : [r.action]
    return json({ accessAllowed: missing.length === 0, missingPrivileges: missing })
  }
  const caller = await security.authorize(ctx.request, r.action, ctx.remoteAddress)
  for (const action of r.alsoRequires ?? []) {
    if (!security.hasClusterPermission(caller, action)) throw new ApiError(403, noPermissions(action, caller))
  }
  const result = await r.handler({ ...ctx, caller })
  return result instanceof Response ? result : json(result)
}

import { type Caller, noPermissions, type Security } from './caller'
import { ApiError, json } from './errors'
import { readRouteBody, type BodyOf, type RouteBody } from './route-body'

export { objectBody, textBody, type RouteBody } from './route-body'

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD'

export interface RouteInput<B = undefined> {
  request: Request
  params: Record<string, string>
  query: Record<string, string | undefined>
  caller: Caller
  remoteAddress?: string
  /** The body as the route declares it, read and checked before the handler runs. */
  body: B
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
  handler: (input: RouteInput<any>) => Promise<unknown> | unknown
  /** The body the route reads, when it reads one: the runner reads and checks it with this declaration. */
  body?: RouteBody
  /** Checks the spec puts before the body (a setting that disables the endpoint); run after authorization. */
  before?: (input: RouteInput) => Promise<void> | void
  /**
   * The permission (action or action group) `?perform_permission_check=true` evaluates. Routes
   * that set it answer such a request, as the platform's security layer does, with
   * `{accessAllowed, missingPrivileges}` without running the handler.
   */
  permissionCheck?: string
  /** Further cluster actions the caller must hold (e.g. logtest detection runs rules/evaluate on the caller's behalf). */
  alsoRequires?: string[]
}

/** A plugin route; the handler's `body` is typed from the declared one (`Static` of its schema). */
export function route<B extends RouteBody | undefined = undefined>(
  method: Method,
  path: string,
  action: string,
  handler: (input: RouteInput<BodyOf<B>>) => Promise<unknown> | unknown,
  body?: B,
): PluginRoute {
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
  await r.before?.({ ...ctx, caller, body: undefined })
  const body = r.body ? await readRouteBody(ctx.request, r.body) : undefined
  const result = await r.handler({ ...ctx, caller, body })
  return result instanceof Response ? result : json(result)
}

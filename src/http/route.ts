import type { Caller, Security } from "../security/caller";
import { json } from "./errors";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE" | "HEAD";

export interface RouteInput {
  request: Request;
  params: Record<string, string>;
  query: Record<string, string | undefined>;
  caller: Caller;
  remoteAddress?: string;
}

/**
 * A plugin route declares the cluster action it implements; authorization
 * happens before the handler runs, so no route can forget it. The table of
 * these declarations is also what the permission test walks.
 */
export interface PluginRoute {
  method: Method;
  path: string;
  /** Cluster action checked before the handler; every plugin route has one. */
  action: string;
  handler: (input: RouteInput) => Promise<unknown> | unknown;
}

export function route(method: Method, path: string, action: string, handler: PluginRoute["handler"]): PluginRoute {
  return { method, path, action, handler };
}

export async function runPluginRoute(
  r: PluginRoute,
  security: Security,
  ctx: { request: Request; params: Record<string, string>; query: Record<string, string | undefined>; remoteAddress?: string },
): Promise<Response> {
  const caller = await security.authorize(ctx.request, r.action, ctx.remoteAddress);
  const result = await r.handler({ ...ctx, caller });
  return result instanceof Response ? result : json(result);
}

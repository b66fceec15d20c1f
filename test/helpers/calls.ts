// The HTTP helpers tests share: a Basic auth header, a JSON call to a node, a route path with its
// parameters filled in, and the paths detection tests call.
import type { SpawnedServer } from './spawn-binary'

export { basicAuth } from './app'

/** The Security Analytics API's path prefix. */
export const SA = '/_plugins/_security_analytics'
/** The security events data stream detectors read by default. */
export const EVENTS = 'svc-events-v5-security'

/** A JSON call to a spawned node as its admin (or with `auth`): its status and parsed body. */
export async function nodeCall(
  s: Pick<SpawnedServer, 'url' | 'auth'>,
  method: string,
  path: string,
  body?: unknown,
  opts: { auth?: string; timeoutMs?: number } = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(s.url + path, {
    method,
    headers: { authorization: opts.auth ?? s.auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...(opts.timeoutMs !== undefined ? { signal: AbortSignal.timeout(opts.timeoutMs) } : {}),
  })
  return { status: res.status, body: await res.json().catch(() => undefined) }
}

/** A route pattern (`/a/:id/b`) with each `:param` replaced by `value(param)`. */
export const fillPath = (path: string, value: (param: string) => string): string => path.replace(/:([a-z_]+)/gi, (_, name) => value(name))

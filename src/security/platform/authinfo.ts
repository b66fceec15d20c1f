/**
 * The platform's `GET /_plugins/_security/authinfo`, asked with the caller's own Authorization
 * header: the platform authenticates the caller and says who they are.
 */
import { Type as T, type Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { platformFetch, type PlatformEndpoint } from './endpoint'

export const AUTHINFO_PATH = '/_plugins/_security/authinfo'

export const AuthInfo = T.Object(
  {
    user_name: T.String(),
    backend_roles: T.Array(T.String()),
    roles: T.Array(T.String()),
    custom_attribute_names: T.Optional(T.Array(T.String())),
  },
  { additionalProperties: true },
)
export type AuthInfo = Static<typeof AuthInfo>

export type AuthInfoAnswer =
  | { kind: 'ok'; info: AuthInfo }
  /** The platform refused the credentials. */
  | { kind: 'rejected' }
  /** No usable answer: unreachable, 5xx, or a body that is not authinfo. */
  | { kind: 'unavailable'; detail: string }

export async function askAuthInfo(endpoint: PlatformEndpoint, authorization: string, timeoutMillis = 10_000): Promise<AuthInfoAnswer> {
  let res: Response
  try {
    res = await platformFetch(endpoint, AUTHINFO_PATH, {
      method: 'GET',
      headers: { authorization, accept: 'application/json' },
      signal: AbortSignal.timeout(timeoutMillis),
    })
  } catch (e) {
    return { kind: 'unavailable', detail: e instanceof Error ? `${e.name}: ${e.message}` : String(e) }
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel()
    return { kind: 'rejected' }
  }
  if (res.status !== 200) {
    await res.body?.cancel()
    return { kind: 'unavailable', detail: `authinfo answered HTTP ${res.status}` }
  }
  let body: unknown
  try {
    body = await res.json()
  } catch {
    return { kind: 'unavailable', detail: 'authinfo answered a body that is not JSON' }
  }
  if (!Value.Check(AuthInfo, body)) return { kind: 'unavailable', detail: 'authinfo answered an unexpected shape' }
  return { kind: 'ok', info: body }
}

/**
 * Whether the platform authenticates callers at all: a development cluster without the security
 * plugin has no authinfo route ("no handler found"). Asked at start with the service account;
 * while the platform cannot answer, asked again until `waitMillis` ran out, and then assumed to
 * have the plugin, so a node never serves unauthenticated requests for want of an answer.
 */
export async function platformHasSecurity(
  endpoint: PlatformEndpoint,
  authorization: string,
  opts: { waitMillis?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<boolean> {
  const deadline = Date.now() + (opts.waitMillis ?? 30_000)
  for (;;) {
    let res: Response | undefined
    try {
      res = await platformFetch(endpoint, AUTHINFO_PATH, {
        method: 'GET',
        headers: { authorization, accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      })
    } catch {
      res = undefined
    }
    if (res) {
      const text = await res.text().catch(() => '')
      if (res.status < 500)
        return !(res.status === 400 || res.status === 404) || !text.includes(`no handler found for uri [${AUTHINFO_PATH}`)
    }
    if (Date.now() >= deadline) return true
    await (opts.sleep ?? Bun.sleep)(1000)
  }
}

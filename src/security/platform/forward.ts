/**
 * The index API in platform mode: requests are streamed to the platform as they came (method,
 * path, query, headers with the caller's Authorization, body) and its answer streamed back, so
 * index rights, DLS and every OpenSearch shape are the platform's own. What stays on this node is
 * decided by `./router`.
 */
import type { Logger } from '../../http/log'
import { remoteAddressOf } from '../../http/remote'
import { platformFetch, type PlatformEndpoint } from './endpoint'

/** Connection-level headers (RFC 9110 7.6.1) and those the forwarding itself sets. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
  'host',
  'content-length',
  // Asked for plain bodies: fetch would inflate a compressed answer and the header would then lie.
  'accept-encoding',
])

function forwardedHeaders(request: Request): Headers {
  const out = new Headers()
  request.headers.forEach((value, name) => {
    if (!HOP_BY_HOP.has(name.toLowerCase())) out.append(name, value)
  })
  const address = remoteAddressOf(request)
  if (address) out.set('x-forwarded-for', [request.headers.get('x-forwarded-for'), address].filter(Boolean).join(', '))
  return out
}

function answeredHeaders(res: Response): Headers {
  const out = new Headers()
  res.headers.forEach((value, name) => {
    const n = name.toLowerCase()
    if (!HOP_BY_HOP.has(n) && n !== 'content-encoding') out.append(name, value)
  })
  return out
}

export async function forwardToPlatform(endpoint: PlatformEndpoint, request: Request, log: Logger): Promise<Response> {
  const url = new URL(request.url)
  const hasBody = request.method !== 'GET' && request.method !== 'HEAD' && request.body !== null
  let res: Response
  try {
    // Streamed to a single node; held for a platform of several, so that a request whose
    // connection was refused can go to the next node (a stream cannot be sent twice).
    const body = !hasBody ? undefined : endpoint.nodes.nodes.length > 1 ? await request.arrayBuffer() : request.body
    res = await platformFetch(endpoint, url.pathname + url.search, {
      method: request.method,
      headers: forwardedHeaders(request),
      ...(hasBody ? { body, duplex: 'half' } : {}),
      signal: request.signal,
    } as RequestInit)
  } catch (e) {
    log.warn('platform not reachable for a forwarded request', {
      method: request.method,
      path: url.pathname,
      error: e instanceof Error ? e.message : String(e),
    })
    const cause = { type: 'platform_unavailable_exception', reason: 'the platform is not reachable' }
    return new Response(JSON.stringify({ error: { root_cause: [cause], ...cause }, status: 503 }), {
      status: 503,
      headers: { 'content-type': 'application/json; charset=UTF-8' },
    })
  }
  return new Response(request.method === 'HEAD' ? null : res.body, {
    status: res.status,
    statusText: res.statusText,
    headers: answeredHeaders(res),
  })
}

import { carriesBody, refusedContentType, unsupportedContentTypeMessage } from './body'
import { envelope, json } from './errors'
import { carryRemoteAddress } from './remote'

/**
 * Elysia finds the path by searching for "/" from index 11 of the URL, that
 * is past "http://" and a host of at least four characters. Behind a proxy
 * that forwards `Host: es` on port 80 the search starts inside the path and
 * every route is lost (`/_cat/indices` would read index "indices").
 */
const PATH_SEARCH_FROM = 11

/**
 * Every request passes here before routing. A Host header the server could
 * not turn into a URL (empty, with spaces or slashes, an unclosed IPv6
 * bracket) is a 400, as HTTP/1.1 asks; a valid but short host is replaced by
 * a placeholder in the URL used for routing (the Host header is untouched).
 * A body of a type no route reads is a 406 before anything else runs, and a
 * body left unread is never waited for (see `closingUnreadBody`).
 */
export async function frontDoor(request: Request, handle: (request: Request) => Promise<Response>): Promise<Response> {
  const url = request.url
  const scheme = url.indexOf('://')
  if (scheme === -1 || !URL.canParse(url)) return closingUnreadBody(request, envelope(400, 'Invalid Host header.'))
  const refused = refusedContentType(request)
  if (refused !== undefined) return closingUnreadBody(request, notAcceptable(url, refused))
  const path = url.indexOf('/', scheme + 3)
  if (path >= PATH_SEARCH_FROM) return closingUnreadBody(request, await handle(request))
  const routable = new Request(url.slice(0, scheme + 3) + 'localhost' + (path === -1 ? '/' : url.slice(path)), request)
  carryRemoteAddress(request, routable)
  return closingUnreadBody(routable, await handle(routable))
}

/**
 * OpenSearch's 406 (`{"error": "...", "status": 406}`) on the index API; the spec's envelope on
 * plugin routes. The route's own body reader refines this per kind (an NDJSON type on a JSON route).
 */
function notAcceptable(url: string, header: string): Response {
  const message = unsupportedContentTypeMessage(header)
  return new URL(url).pathname.startsWith('/_plugins/') ? envelope(406, message) : json({ error: message, status: 406 }, 406)
}

/**
 * A refused request (401, 403, 406, 413, ...) that announced a body gets its answer and then
 * `Connection: close`, so the server never reads or waits for a body it will not use: a client
 * that declares a large Content-Length and sends nothing would otherwise hold the connection
 * (and a descriptor) until the idle timeout. Bodies a handler did not read are treated the same.
 */
export function closingUnreadBody(request: Request, response: Response): Response {
  if (!carriesBody(request) || (response.status < 400 && request.bodyUsed)) return response
  const headers = new Headers(response.headers)
  headers.set('connection', 'close')
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
}

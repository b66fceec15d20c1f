import { envelope } from './errors'
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
 */
export function frontDoor(request: Request, handle: (request: Request) => Promise<Response>): Promise<Response> {
  const url = request.url
  const scheme = url.indexOf('://')
  if (scheme === -1 || !URL.canParse(url)) return Promise.resolve(envelope(400, 'Invalid Host header.'))
  const path = url.indexOf('/', scheme + 3)
  if (path >= PATH_SEARCH_FROM) return handle(request)
  const routable = new Request(url.slice(0, scheme + 3) + 'localhost' + (path === -1 ? '/' : url.slice(path)), request)
  carryRemoteAddress(request, routable)
  return handle(routable)
}

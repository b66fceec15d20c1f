// Consumer URLs (settings, plan features, stored consumers, manifests) are checked before use
// (reference 1.1): a plan or a stored document must not be able to point the service at another
// host than the configured CTI API.

/**
 * The normalised consumer URL, or undefined when it is unusable (then the feed counts as
 * unreachable). It must be absolute, have a host equal to the host of `cti.api`, and use HTTPS;
 * plain HTTP is accepted only when `cti.api` itself is plain HTTP (an operator's explicit choice,
 * which is how local CTI test servers are reached).
 */
export function normalizeConsumerUrl(raw: string | undefined, ctiApi: string): string | undefined {
  const text = raw?.trim()
  if (!text) return undefined
  const parsed = parseBoth(text, ctiApi)
  if (!parsed) return undefined
  const [url, api] = parsed
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && api.protocol === 'http:')) return undefined
  if (!url.hostname || url.hostname.toLowerCase() !== api.hostname.toLowerCase()) return undefined
  return text.replace(/\/+$/, '')
}

const IDENTITY = /.*\/catalog\/contexts\/([^/]+)\/consumers\/([^/?#]+)([/?#].*)?$/

/** `context` and consumer `name` of a consumer URL; empty strings when it does not have that shape. */
export function consumerIdentity(url: string | undefined): { context: string; name: string } {
  const m = url?.match(IDENTITY)
  return { context: m?.[1] ?? '', name: m?.[2] ?? '' }
}

/**
 * Whether two consumer URLs name the same resource (reference 2.3 step 2): scheme and host
 * case-insensitive, same port, path ignoring one trailing `/`, same raw query and fragment.
 */
export function sameResource(a: string, b: string): boolean {
  const parsed = parseBoth(a, b)
  if (!parsed) return a === b
  const [x, y] = parsed
  const path = (u: URL) => u.pathname.replace(/\/$/, '')
  return (
    x.protocol === y.protocol &&
    x.hostname === y.hostname &&
    x.port === y.port &&
    path(x) === path(y) &&
    x.search === y.search &&
    x.hash === y.hash
  )
}

/** Both URLs parsed, or undefined when either is not a URL. */
function parseBoth(a: string, b: string): [URL, URL] | undefined {
  try {
    return [new URL(a), new URL(b)]
  } catch {
    return undefined
  }
}

/** A URL safe to log: signed URLs carry a signature in the query, so the query is never logged. */
export const loggable = (url: string): string => url.replace(/[?#].*$/, '')

/** Joins the CTI base URL and a path (`/ping`), whatever trailing slash the setting has. */
export const apiUrl = (base: string, path: string): string => base.replace(/\/+$/, '') + path

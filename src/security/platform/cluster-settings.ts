/**
 * `_cluster/settings` in platform mode: keys under `plugins.setup.`, `plugins.content_manager.`
 * and `plugins.security_analytics.` are ours (validated and stored by this service, shared
 * through the store); every other key is the platform's and goes to it with the caller's
 * credentials. A PUT mixing both applies ours first (a 400 there stops everything), then
 * forwards the rest; if the platform then refuses, our part stays applied and the platform's
 * answer is returned. GET merges both views (ours alone when the caller may not read the
 * platform's).
 */
import { flattenKeys } from '../../store/flat-keys'
import { isOwnedKey } from '../../config/registry'
import { readBody, refusedContentType } from '../../http/body'
import { ApiError } from '../../http/errors'
import type { Logger } from '../../http/log'
import { carryRemoteAddress } from '../../http/remote'
import { forwardToPlatform } from './forward'
import type { PlatformEndpoint } from './endpoint'
import { isObject } from '../../json'

const BODY_LIMIT = 1024 * 1024
type Scopes = { persistent?: Record<string, unknown>; transient?: Record<string, unknown> }
type Local = (request: Request) => Promise<Response>

/** Splits each scope's keys into ours and the platform's; undefined when the body is not a settings body. */
function split(body: unknown): { ours: Scopes; theirs: Scopes; hasOurs: boolean; hasTheirs: boolean } | undefined {
  if (!isObject(body) || Object.keys(body).some((k) => k !== 'persistent' && k !== 'transient')) return undefined
  const ours: Scopes = {}
  const theirs: Scopes = {}
  let hasOurs = false
  let hasTheirs = false
  for (const scope of ['persistent', 'transient'] as const) {
    const given = body[scope]
    if (given === undefined) continue
    if (!isObject(given)) return undefined
    for (const [k, v] of Object.entries(flattenKeys(given))) {
      const side = isOwnedKey(k) ? ours : theirs
      ;(side[scope] ??= {})[k] = v
      if (side === ours) hasOurs = true
      else hasTheirs = true
    }
  }
  return { ours, theirs, hasOurs, hasTheirs }
}

function withBody(request: Request, body: unknown): Request {
  const headers = new Headers(request.headers)
  headers.set('content-type', 'application/json')
  headers.delete('content-length')
  return carried(request, new Request(request.url, { method: request.method, headers, body: JSON.stringify(body) }))
}

/** A rebuilt request keeps the client's address (role mappings by host, x-forwarded-for). */
function carried(from: Request, to: Request): Request {
  carryRemoteAddress(from, to)
  return to
}

function deepMerge(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a }
  for (const [k, v] of Object.entries(b)) out[k] = isObject(out[k]) && isObject(v) ? deepMerge(out[k] as Record<string, unknown>, v) : v
  return out
}

async function jsonOf(res: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const v = await res.json()
    return isObject(v) ? v : undefined
  } catch {
    return undefined
  }
}

function answer(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json; charset=UTF-8' } })
}

export async function platformClusterSettings(endpoint: PlatformEndpoint, request: Request, local: Local, log: Logger): Promise<Response> {
  if (request.method === 'GET') return mergedGet(endpoint, request, local, log)
  if (request.method !== 'PUT') return local(request)
  // The local route answers refusals it can decide without reading (Content-Type, declared size).
  const length = Number(request.headers.get('content-length') ?? 0)
  if (length > BODY_LIMIT || refusedContentType(request, ['json']) !== undefined) return local(request)
  let bytes: Uint8Array
  try {
    // Bounded even when chunked (no Content-Length): the body reader stops at the limit.
    bytes = await readBody(request, { limit: BODY_LIMIT, status: 413 })
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    const cause = { type: 'content_too_long_exception', reason: e.message }
    return answer({ error: { root_cause: [cause], ...cause }, status: e.status }, e.status)
  }
  const text = new TextDecoder().decode(bytes)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return local(withRaw(request, text)) // the local route answers OpenSearch's parse error
  }
  const parts = split(parsed)
  if (!parts || !parts.hasTheirs) return local(withRaw(request, text))
  if (!parts.hasOurs) return forwardToPlatform(endpoint, withRaw(request, text), log)
  const ours = await local(withBody(request, parts.ours))
  if (ours.status !== 200) return ours
  const theirs = await forwardToPlatform(endpoint, withBody(request, parts.theirs), log)
  if (theirs.status !== 200) return theirs
  const [a, b] = [await jsonOf(ours), await jsonOf(theirs)]
  if (!a || !b) return answer({ acknowledged: true })
  return answer({ ...deepMerge(b, a), acknowledged: a.acknowledged === true && b.acknowledged === true })
}

function withRaw(request: Request, text: string): Request {
  const headers = new Headers(request.headers)
  headers.delete('content-length')
  return carried(request, new Request(request.url, { method: request.method, headers, body: text }))
}

async function mergedGet(endpoint: PlatformEndpoint, request: Request, local: Local, log: Logger): Promise<Response> {
  const ours = await local(request)
  if (ours.status !== 200) return ours
  const theirs = await forwardToPlatform(
    endpoint,
    carried(request, new Request(request.url, { method: 'GET', headers: request.headers })),
    log,
  )
  const [a, b] = [await jsonOf(ours), theirs.status === 200 ? await jsonOf(theirs) : undefined]
  if (!a) return answer({}, 502)
  return answer(b ? deepMerge(b, a) : a)
}

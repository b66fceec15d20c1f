import { decodedBody, undecodableBody } from './compression'
import { ApiError, UnsupportedContentType } from './errors'

export { UnsupportedContentType, unsupportedContentTypeMessage } from './errors'

/**
 * What a route's body is, and so which Content-Types it accepts (a request without one is
 * taken as the route's kind): JSON routes `application/json` and `application/*+json`; NDJSON
 * routes (`_bulk`, `_msearch`) also `application/x-ndjson`; routes taking a Sigma rule's YAML
 * `application/yaml`, `text/yaml` (and `application/x-yaml`) or JSON. Anything else, notably the
 * types a browser may send cross-site without asking (text/plain, form-encoded, multipart), is
 * OpenSearch's 406: a page visited by a user with stored credentials cannot write (CSRF).
 */
export type BodyKind = 'json' | 'ndjson' | 'yaml'

const JSON_TYPE = /^application\/([a-z0-9.+-]+\+)?json$/
const YAML_TYPES = new Set(['application/yaml', 'text/yaml', 'application/x-yaml'])
const MEDIA_TYPES: Record<BodyKind, (mediaType: string) => boolean> = {
  json: (t) => JSON_TYPE.test(t),
  ndjson: (t) => t === 'application/x-ndjson' || JSON_TYPE.test(t),
  yaml: (t) => YAML_TYPES.has(t) || JSON_TYPE.test(t),
}
const ANY_KIND = Object.keys(MEDIA_TYPES) as BodyKind[]

/** True when the request says a body follows (a positive Content-Length, or chunked). */
export function carriesBody(request: Request): boolean {
  const length = request.headers.get('content-length')
  if (length !== null) return Number(length) > 0 || Number.isNaN(Number(length))
  return request.headers.has('transfer-encoding')
}

/** The media type of the request's Content-Type (lower case, parameters dropped), if any. */
function mediaTypeOf(request: Request): string | undefined {
  return request.headers.get('content-type')?.split(';', 1)[0]!.trim().toLowerCase()
}

/** True when the body is declared as YAML (routes of the `yaml` kind parse JSON otherwise). */
export function sentAsYaml(request: Request): boolean {
  return YAML_TYPES.has(mediaTypeOf(request) ?? '')
}

/**
 * The Content-Type header when the request carries a body of a type none of `kinds` accepts;
 * undefined when it is acceptable, absent, or there is no body (as OpenSearch, which checks
 * only requests with content).
 */
export function refusedContentType(request: Request, kinds: BodyKind[] = ANY_KIND): string | undefined {
  const header = request.headers.get('content-type')
  if (header === null || !carriesBody(request)) return undefined
  const mediaType = mediaTypeOf(request)!
  return kinds.some((k) => MEDIA_TYPES[k](mediaType)) ? undefined : header
}

export interface BodyLimit {
  /** Largest accepted body in bytes. */
  limit: number
  /** What the body is (default `json`): decides the Content-Types accepted. */
  kind?: BodyKind
  /** The status the spec gives an over-size body on this route (400 for sessions, 413 for logtest). */
  status?: number
  message?: string
}

/**
 * Reads a request body, refusing it before it is buffered whole: a Content-Type the route's
 * kind does not accept is a 406 and a declared Content-Length over the limit a 413, both
 * without reading; a streamed (chunked) body is counted as it arrives and abandoned at the limit.
 */
export async function readBody(request: Request, limit: BodyLimit): Promise<Uint8Array> {
  const chunks = await readBodyChunks(request, limit)
  if (chunks.length === 1) return chunks[0]
  const size = chunks.reduce((n, c) => n + c.byteLength, 0)
  const out = new Uint8Array(size)
  let at = 0
  for (const c of chunks) {
    out.set(c, at)
    at += c.byteLength
  }
  return out
}

/** The same, as the chunks it arrived in: a reader that walks them needs no second, joined copy (bulk). */
export async function readBodyChunks(request: Request, { limit, status = 413, message, kind = 'json' }: BodyLimit): Promise<Uint8Array[]> {
  const refused = refusedContentType(request, [kind])
  if (refused !== undefined) throw new UnsupportedContentType(refused)
  const tooLarge = () => new ApiError(status, message ?? `Request body exceeds the limit of ${limit} bytes.`)
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge()
  // The limits hold for the decoded bytes: a compressed body is counted as it expands.
  const body = decodedBody(request)
  if (!body) return []
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = body.getReader()
  for (;;) {
    const { done, value } = await reader.read().catch((e: unknown) => {
      throw undecodableBody(request, e) ?? e
    })
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  return chunks
}

const decoder = new TextDecoder('utf-8', { fatal: true })

/**
 * Deepest nesting a request body may have: the platform's JSON parser
 * refuses beyond 1,000 levels, and everything downstream (query planning,
 * hashing, storage) walks documents recursively.
 */
export const MAX_JSON_DEPTH = 1000
/**
 * Most values a parsed YAML body may expand to. JSON text cannot hold more
 * values than it has bytes, but YAML aliases can repeat a subtree without
 * limit ("billion laughs"), and every later walk would expand them.
 */
export const MAX_YAML_NODES = 1_000_000

/** A body that is not acceptable JSON (or YAML); `message` says why, in the parser's words. */
export class BodySyntaxError extends Error {}

/** Whether JSON text nests deeper than `max`, counted on the text so that nothing recursive runs first. */
export function nestsDeeper(text: string, max = MAX_JSON_DEPTH): boolean {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 0x22) {
      // Skip the string, escapes included.
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i)
        if (d === 0x5c) i++
        else if (d === 0x22) break
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > max) return true
    } else if (c === 0x7d || c === 0x5d) {
      depth--
    }
  }
  return false
}

/** `JSON.parse` with the depth bound; throws `BodySyntaxError`. */
export function parseJson(text: string): unknown {
  if (nestsDeeper(text)) throw new BodySyntaxError(`The body nests deeper than ${MAX_JSON_DEPTH} levels.`)
  try {
    return JSON.parse(text)
  } catch (e) {
    throw new BodySyntaxError(e instanceof Error ? e.message : 'Malformed JSON.')
  }
}

/** `Bun.YAML.parse` with the depth bound and a bound on what aliases expand to; throws `BodySyntaxError`. */
export function parseYaml(text: string): unknown {
  let value: unknown
  try {
    value = Bun.YAML.parse(text)
  } catch (e) {
    throw new BodySyntaxError(e instanceof Error ? e.message : 'Malformed YAML.')
  }
  checkExpandedShape(value, MAX_JSON_DEPTH, MAX_YAML_NODES)
  return value
}

/** Walks a parsed value without recursion, counting shared subtrees each time they are reached. */
function checkExpandedShape(value: unknown, maxDepth: number, maxNodes: number): void {
  const stack: Array<[unknown, number]> = [[value, 0]]
  let nodes = 0
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!
    if (++nodes > maxNodes) throw new BodySyntaxError(`The body expands to more than ${maxNodes} values.`)
    if (typeof v !== 'object' || v === null) continue
    if (depth >= maxDepth) throw new BodySyntaxError(`The body nests deeper than ${maxDepth} levels.`)
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1])
  }
}

/** UTF-8 text of a body; invalid byte sequences are a `BodySyntaxError`, never replaced silently. */
export function decodeUtf8(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes)
  } catch {
    throw new BodySyntaxError('The body is not valid UTF-8.')
  }
}

/** Default limit for plugin routes that take small JSON bodies. */
export const SMALL_BODY: BodyLimit = { limit: 1024 * 1024, status: 413 }

/**
 * Errors that carry their HTTP answer, and the one mapping of anything thrown to an answer
 * (`errorAnswer`). Plugin routes answer the spec's envelope `{message, status}`; the index API
 * answers OpenSearch's shape `{error: {root_cause, type, reason}, status}`. Errors are told apart
 * by their class: ApiError, the store's typed StoreError, OpenSearchHttpError.
 */
import { StoreError } from '../store/errors'
import { jsonBody } from './json-body'

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Extra members of the envelope (e.g. `id` of a deleted session). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message)
  }
}

/** OpenSearch's words for a refused Content-Type, the header quoted as sent. */
export function unsupportedContentTypeMessage(header: string): string {
  return `Content-Type header [${header}] is not supported`
}

/** A 406: the request's Content-Type is not one the route reads. */
export class UnsupportedContentType extends ApiError {
  constructor(readonly header: string) {
    super(406, unsupportedContentTypeMessage(header))
  }
}

/** An error in OpenSearch's shape, for the index API. */
export class OpenSearchHttpError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly reason: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(reason)
  }
}

/**
 * A client-supplied value as it may appear in a message: strings as they
 * are, anything else as JSON, both cut short. Never throws (`String(x)`
 * does on objects whose `toString` is not a function).
 */
export function shown(value: unknown, max = 200): string {
  let text: string
  if (typeof value === 'string') text = value
  else {
    try {
      text = JSON.stringify(value) ?? typeof value
    } catch {
      text = typeof value
    }
  }
  return text.length > max ? `${text.slice(0, max)}...` : text
}

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(jsonBody(body), { status, headers: { 'content-type': 'application/json; charset=UTF-8', ...headers } })
}

export function envelope(
  status: number,
  message: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Response {
  return json({ message, status, ...extra }, status, headers)
}

function openSearchError(status: number, type: string, reason: string, details: Record<string, unknown> = {}): Response {
  return json(openSearchBody(status, type, reason, details), status)
}

function openSearchBody(status: number, type: string, reason: string, details: Record<string, unknown> = {}) {
  const { caused_by, ...rest } = details
  const cause = { type, reason, ...rest }
  // The root cause is the error itself, as OpenSearch answers for an exception it wraps (its `caused_by` beside it only).
  return { error: { root_cause: [cause], ...cause, ...(caused_by === undefined ? {} : { caused_by }) }, status }
}

/** A store error or one built in OpenSearch's shape: it has OpenSearch's `type` and `reason`. */
export function hasOpenSearchType(error: unknown): error is StoreError | OpenSearchHttpError {
  return error instanceof StoreError || error instanceof OpenSearchHttpError
}

/** Who is answered: a plugin route (the spec's envelope) or the index API (OpenSearch's shape). */
export type ErrorFamily = 'plugin' | 'index'

export interface ErrorAnswer {
  status: number
  body: unknown
  headers?: Record<string, string>
  /** Not a typed error, or a failure of our own storage: the caller logs it (the answer does not say what it was). */
  unexpected?: true
}

const INTERNAL: Record<ErrorFamily, ErrorAnswer> = {
  plugin: { status: 500, body: { message: 'Internal Server Error.', status: 500 }, unexpected: true },
  index: { status: 500, body: openSearchBody(500, 'exception', 'internal error'), unexpected: true },
}

/**
 * The answer to anything a route threw. On plugin routes a store (or OpenSearch) failure below 500
 * keeps its reason; one of the 5xx kind describes our storage, not the request, so it is logged and
 * answered with the generic message. The index API keeps OpenSearch's shape and its metadata
 * (`index`, `resource.id`, ...); an ApiError there takes the type the security plugin or OpenSearch
 * gives its status, and a refused Content-Type is OpenSearch's plain message.
 */
export function errorAnswer(error: unknown, family: ErrorFamily, nodeId?: string): ErrorAnswer {
  const typed = hasOpenSearchType(error)
  if (family === 'plugin') {
    if (error instanceof ApiError)
      return { status: error.status, body: { message: error.message, status: error.status, ...error.extra }, headers: error.headers }
    if (typed && error.status < 500) return { status: error.status, body: { message: error.reason, status: error.status } }
    return INTERNAL.plugin
  }
  if (error instanceof StoreError)
    return { status: error.status, body: { error: withShardNodes(error.toOpenSearch(), nodeId), status: error.status } }
  if (error instanceof OpenSearchHttpError)
    return { status: error.status, body: openSearchBody(error.status, error.type, error.reason, error.details) }
  if (error instanceof UnsupportedContentType) return { status: 406, body: { error: error.message, status: 406 } }
  if (error instanceof ApiError)
    return { status: error.status, body: openSearchBody(error.status, apiErrorType(error.status), error.message), headers: error.headers }
  return INTERNAL.index
}

/** Each failed shard names the node that held it (this one), after its index, as OpenSearch's do. */
function withShardNodes<T extends Record<string, unknown>>(error: T, nodeId: string | undefined): T {
  if (nodeId === undefined || !Array.isArray(error.failed_shards)) return error
  const failedShards = error.failed_shards.map((f: Record<string, unknown>) =>
    f.node !== undefined ? f : { shard: f.shard, index: f.index, node: nodeId, ...f },
  )
  return { ...error, failed_shards: failedShards }
}

/** Authentication and authorization failures as the security plugin types them; an over-size body as OpenSearch. */
function apiErrorType(status: number): string {
  if (status === 401 || status === 403) return 'security_exception'
  return status === 413 ? 'content_too_long_exception' : 'status_exception'
}

/** An `errorAnswer` as a JSON response. */
export function errorResponseOf(answer: ErrorAnswer): Response {
  return json(answer.body, answer.status, answer.headers)
}

/**
 * Errors that carry their HTTP answer. Plugin routes answer the spec's
 * envelope `{message, status}`; the index API answers OpenSearch's shape
 * `{error: {root_cause, type, reason}, status}`.
 */
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

export function openSearchError(status: number, type: string, reason: string, details: Record<string, unknown> = {}): Response {
  const cause = { type, reason, ...details }
  return json({ error: { root_cause: [cause], ...cause }, status }, status)
}

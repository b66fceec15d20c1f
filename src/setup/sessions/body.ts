import { decodeUtf8, parseJson, readBody, type BodyLimit } from '../../http/body'
import { ApiError } from '../../http/errors'

/** Spec "Limits": 5 MiB of UTF-8, exactly 5 MiB passes; checked before any parsing. */
export const SESSION_BODY_LIMIT = 5 * 1024 * 1024
export const PAYLOAD_TOO_LARGE = 'Session payload must be 5 MiB or smaller.'
export const INVALID_BODY = 'Invalid request body.'
export const SESSION_LIMIT: BodyLimit = { limit: SESSION_BODY_LIMIT, status: 400, message: PAYLOAD_TOO_LARGE }
export const EMPTY_BODY = 'Validation Failed: 1: request body must not be empty;'

/**
 * Reads a JSON-object body in the reference's order: size (400, before the
 * body is buffered whole), emptiness (the request-validation message), then
 * parsing (anything but a JSON object is an invalid body).
 */
export async function readObjectBody(request: Request, limit: BodyLimit = SESSION_LIMIT): Promise<Record<string, unknown>> {
  const bytes = await readBody(request, limit)
  let text: string
  try {
    text = decodeUtf8(bytes)
  } catch {
    throw new ApiError(400, INVALID_BODY)
  }
  if (text.trim() === '') throw new ApiError(400, EMPTY_BODY)
  let value: unknown
  try {
    value = parseJson(text)
  } catch {
    throw new ApiError(400, INVALID_BODY)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ApiError(400, INVALID_BODY)
  return value as Record<string, unknown>
}

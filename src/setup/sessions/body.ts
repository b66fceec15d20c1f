import type { BodyLimit } from '../../http/body'

/** Spec "Limits": 5 MiB of UTF-8, exactly 5 MiB passes; checked before any parsing. */
export const SESSION_BODY_LIMIT = 5 * 1024 * 1024
export const PAYLOAD_TOO_LARGE = 'Session payload must be 5 MiB or smaller.'
export const SESSION_LIMIT: BodyLimit = { limit: SESSION_BODY_LIMIT, status: 400, message: PAYLOAD_TOO_LARGE }
/** The reference's request-validation words for an empty session body (other bad bodies are INVALID_BODY). */
export const EMPTY_BODY = 'Validation Failed: 1: request body must not be empty;'

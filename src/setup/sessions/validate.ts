import { Type as T } from '@sinclair/typebox'
import { ApiError } from '../../http/errors'

export const MAX_TITLE_LENGTH = 200
export const MAX_MESSAGES = 1000
export const MAX_SESSIONS_PER_OWNER = 500

export const MESSAGES = {
  titleRequired: 'Session title is required.',
  titleTooLong: `Session title must be ${MAX_TITLE_LENGTH} characters or fewer.`,
  messagesRequired: 'Session messages are required.',
  tooManyMessages: `A session cannot hold more than ${MAX_MESSAGES} messages.`,
  capReached: `You have reached the maximum of ${MAX_SESSIONS_PER_OWNER} saved sessions.`,
  conflict: 'Session was updated by another session since you last loaded it. Refresh and retry.',
  blankId: 'Validation Failed: 1: session id must not be blank;',
  notFound: (id: string) => `Session not found: ${id}`,
} as const

/**
 * The bodies of the session write routes, as declared on the routes. Validation itself is done
 * field by field below, in the reference's order and with its messages; other keys are discarded.
 */
export const CreateSessionBody = T.Object({ title: T.String(), messages: T.Array(T.Unknown()) })
export const ReplaceSessionBody = T.Object({
  messages: T.Array(T.Unknown()),
  title: T.Optional(T.String()),
  expected_version: T.Optional(T.String()),
})
export const RenameSessionBody = T.Object({ title: T.String() })

/** Trimmed title; length counts UTF-16 code units, as the reference's Java strings do. */
export function validTitle(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ApiError(400, MESSAGES.titleRequired)
  const title = value.trim()
  if (title.length > MAX_TITLE_LENGTH) throw new ApiError(400, MESSAGES.titleTooLong)
  return title
}

/** The transcript is opaque: only its being an array and its length are checked. */
export function validMessages(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new ApiError(400, MESSAGES.messagesRequired)
  if (value.length > MAX_MESSAGES) throw new ApiError(400, MESSAGES.tooManyMessages)
  return value
}

export interface Version {
  seqNo: number
  primaryTerm: number
}

export const formatVersion = (seqNo: number, primaryTerm: number) => `${seqNo}:${primaryTerm}`

/** Only a `"<n>:<n>"` string is a version; anything else counts as absent, never as an error. */
export function decodeVersion(value: unknown): Version | undefined {
  if (typeof value !== 'string') return undefined
  const m = /^(\d+):(\d+)$/.exec(value)
  if (!m) return undefined
  const seqNo = Number(m[1])
  const primaryTerm = Number(m[2])
  return Number.isSafeInteger(seqNo) && Number.isSafeInteger(primaryTerm) ? { seqNo, primaryTerm } : undefined
}

export function validId(id: string | undefined): string {
  if (id === undefined || id.trim() === '') throw new ApiError(400, MESSAGES.blankId)
  return id
}

import { Type as T, type Static } from '@sinclair/typebox'
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

// Title: present, not blank, at most MAX_TITLE_LENGTH UTF-16 code units once trimmed (the
// reference's Java strings count code units; so does a RegExp without the `u` flag).
const TRIMMED_TITLE = `^\\s*(?:\\S[\\s\\S]{0,${MAX_TITLE_LENGTH - 2}}\\S|\\S)\\s*$`
const Title = T.Intersect(
  [T.String({ pattern: '\\S', message: MESSAGES.titleRequired }), T.String({ pattern: TRIMMED_TITLE, message: MESSAGES.titleTooLong })],
  { message: MESSAGES.titleRequired },
)
/** The transcript is opaque: only its being an array and its length are checked. */
const Messages = T.Intersect(
  [
    T.Array(T.Unknown(), { message: MESSAGES.messagesRequired }),
    T.Array(T.Unknown(), { maxItems: MAX_MESSAGES, message: MESSAGES.tooManyMessages }),
  ],
  { message: MESSAGES.messagesRequired },
)

/**
 * The bodies of the session write routes: declared on the routes, which check them before the handler,
 * field by field in the reference's order and with its messages; other keys are discarded.
 */
export const CreateSessionBody = T.Object({ title: Title, messages: Messages })
export const ReplaceSessionBody = T.Object({
  messages: Messages,
  title: T.Optional(Title),
  /** Only a `"<n>:<n>"` string is a version; anything else counts as absent, never as an error (decodeVersion). */
  expected_version: T.Optional(T.Unknown()),
})
export const RenameSessionBody = T.Object({ title: Title })
export type CreateSessionBody = Static<typeof CreateSessionBody>
export type ReplaceSessionBody = Static<typeof ReplaceSessionBody>
export type RenameSessionBody = Static<typeof RenameSessionBody>

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

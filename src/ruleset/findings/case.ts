import { Type as T, type Static } from '@sinclair/typebox'
import { isObject } from '../../json'

/**
 * The case a user attaches to a finding (`svc.case`). The schema is the type
 * and the list of accepted keys; the checks themselves are hand-written below
 * because the reference fixes their order and wording (first failure wins).
 */

export const CASE_STATUSES = ['active', 'acknowledged', 'completed', 'error', 'deleted', 'audit'] as const
export const CASE_SEVERITIES = ['informational', 'low', 'medium', 'high', 'critical'] as const
export const CASE_PRIORITIES = ['low', 'medium', 'high', 'urgent'] as const
export const CASE_TLPS = ['TLP:RED', 'TLP:AMBER', 'TLP:GREEN', 'TLP:CLEAR'] as const

const Text = T.Union([T.String(), T.Null()])
/** Dates arrive as ISO strings or epoch millis; the store's date mapping decides whether they parse. */
const Stamp = T.Union([T.String(), T.Number(), T.Null()])
const OneOf = (values: readonly string[]) => T.Union([...values.map((v) => T.Literal(v)), T.Null()])

export const CaseComment = T.Object(
  {
    author: T.Optional(Text),
    comment: T.Optional(Text),
    created_at: T.Optional(Stamp),
    updated_at: T.Optional(Stamp),
  },
  { additionalProperties: false },
)
export type CaseComment = Static<typeof CaseComment>

export const CaseUser = T.Object({ name: T.Optional(Text) }, { additionalProperties: false })

export const Case = T.Object(
  {
    title: T.Optional(Text),
    description: T.Optional(Text),
    status: T.Optional(OneOf(CASE_STATUSES)),
    severity: T.Optional(OneOf(CASE_SEVERITIES)),
    priority: T.Optional(OneOf(CASE_PRIORITIES)),
    tlp: T.Optional(OneOf(CASE_TLPS)),
    tags: T.Optional(T.Union([T.Array(T.String()), T.Null()])),
    created_at: T.Optional(Stamp),
    updated_at: T.Optional(Stamp),
    user: T.Optional(T.Union([CaseUser, T.Null()])),
    comments: T.Optional(T.Union([T.Array(CaseComment), T.Null()])),
  },
  { additionalProperties: false },
)
export type Case = Static<typeof Case>

const CASE_KEYS = new Set(Object.keys(Case.properties))
const USER_KEYS = new Set(Object.keys(CaseUser.properties))
const COMMENT_KEYS = new Set(Object.keys(CaseComment.properties))

export type CaseCheck = { ok: Case } | { error: string }

type Json = Record<string, unknown>
/** The reference treats `null` as "not sent" while validating; the null is still merged. */
const present = (v: unknown) => v !== undefined && v !== null
const isStamp = (v: unknown) => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))

/**
 * Validates and normalizes one `case` object in the reference's check order:
 * unknown keys, the enums (status, severity, priority lowercased; tlp
 * uppercased, prefix required), text fields, timestamps, tags, user, comments.
 */
export function checkCase(raw: Json): CaseCheck {
  for (const key of Object.keys(raw)) if (!CASE_KEYS.has(key)) return { error: `unknown case field "${key}"` }
  const out: Json = { ...raw }

  const enums: Array<[string, readonly string[], (s: string) => string]> = [
    ['status', CASE_STATUSES, (s) => s.toLowerCase()],
    ['severity', CASE_SEVERITIES, (s) => s.toLowerCase()],
    ['priority', CASE_PRIORITIES, (s) => s.toLowerCase()],
    ['tlp', CASE_TLPS, (s) => s.toUpperCase()],
  ]
  for (const [key, allowed, normalize] of enums) {
    const v = raw[key]
    if (!present(v)) continue
    if (typeof v !== 'string') return { error: `${key} must be a string` }
    const n = normalize(v)
    if (!allowed.includes(n)) return { error: `invalid ${key} value "${v}"; allowed values: [${allowed.join(', ')}]` }
    out[key] = n
  }

  for (const key of ['title', 'description']) {
    if (present(raw[key]) && typeof raw[key] !== 'string') return { error: `${key} must be a string` }
  }
  for (const key of ['created_at', 'updated_at']) {
    if (present(raw[key]) && !isStamp(raw[key])) return { error: `${key} must be a string or number` }
  }
  if (present(raw.tags) && !(Array.isArray(raw.tags) && raw.tags.every((t) => typeof t === 'string'))) {
    return { error: 'tags must be an array of strings' }
  }

  const user = raw.user
  if (present(user)) {
    if (!isObject<Json>(user)) return { error: 'user must be an object' }
    for (const key of Object.keys(user)) if (!USER_KEYS.has(key)) return { error: `unknown user field "${key}"` }
    if (present(user.name) && typeof user.name !== 'string') return { error: 'user.name must be a string' }
  }

  const comments = raw.comments
  if (present(comments)) {
    if (!Array.isArray(comments)) return { error: 'comments must be an array' }
    for (let j = 0; j < comments.length; j++) {
      const reason = checkComment(comments[j], j)
      if (reason) return { error: reason }
    }
  }
  return { ok: out as Case }
}

function checkComment(c: unknown, j: number): string | undefined {
  if (!isObject<Json>(c)) return `comment at index ${j} must be an object`
  for (const key of Object.keys(c)) if (!COMMENT_KEYS.has(key)) return `unknown comment field "${key}" at index ${j}`
  for (const key of ['comment', 'author']) {
    if (present(c[key]) && typeof c[key] !== 'string') return `comment.${key} at index ${j} must be a string`
  }
  for (const key of ['created_at', 'updated_at']) {
    if (present(c[key]) && !isStamp(c[key])) return `comment.${key} at index ${j} must be a string or number`
  }
  return undefined
}

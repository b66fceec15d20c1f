// The four spaces of reference 4.2.3, shared by the Content Manager and Ruleset Management. All of
// them live in the same indices, told apart by `space.name`.
import { type Static, Type as T } from '@sinclair/typebox'

export const SPACES = ['standard', 'draft', 'test', 'custom'] as const
/** Schema and type of a space name. */
export const Space = T.Union(SPACES.map((s) => T.Literal(s)))
export type Space = Static<typeof Space>

/** Spaces whose default policy the service creates; `standard` comes from CTI. */
export const USER_SPACES = ['draft', 'test', 'custom'] as const satisfies readonly Space[]

export const isSpace = (value: unknown): value is Space => typeof value === 'string' && (SPACES as readonly string[]).includes(value)

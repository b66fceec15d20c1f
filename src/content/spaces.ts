// The four spaces of reference 4.2.3. All of them live in the same indices, told apart by `space.name`.

export const SPACES = ['standard', 'draft', 'test', 'custom'] as const
export type Space = (typeof SPACES)[number]

/** Spaces whose default policy the service creates; `standard` comes from CTI. */
export const USER_SPACES = ['draft', 'test', 'custom'] as const satisfies readonly Space[]

export const isSpace = (value: unknown): value is Space => typeof value === 'string' && (SPACES as readonly string[]).includes(value)

// The promotion chain draft -> test -> custom, and the reference's messages (4.6) for a space
// that is missing, unknown, or at the end of the chain.
import { ApiError, shown } from '../../http/errors'
import { isMissing } from '../resources/normalize'
import { isSpace, type Space } from '../spaces'

export const NEXT_SPACE = { draft: 'test', test: 'custom' } as const satisfies Partial<Record<Space, Space>>
export type SourceSpace = keyof typeof NEXT_SPACE
export type TargetSpace = (typeof NEXT_SPACE)[SourceSpace]

export function sourceSpace(value: unknown): SourceSpace {
  if (isMissing(value)) throw new ApiError(400, 'Missing [space] field.')
  if (!isSpace(value)) throw new ApiError(400, `Unknown space: [${shown(value)}].`)
  if (!(value in NEXT_SPACE)) throw new ApiError(400, `Space [${value}] cannot be promoted.`)
  return value as SourceSpace
}

import type { Static, TSchema } from '@sinclair/typebox'
import { Value, ValueErrorType, type ValueError } from '@sinclair/typebox/value'
import { ApiError } from './errors'
import { isObject } from '../json'

/**
 * A schema's own answer when a value fails it: `T.String({ message: 'Session title is required.' })`,
 * and optionally another when the value is absent (`missing`). The route's schema is then both
 * the type and the validation, with the spec's wording.
 */
export interface Worded {
  message?: string
  missing?: string
}

/** The schema's own answer for a failure (`missing` when the value is absent). */
export const wordOf = (schema: TSchema | undefined, absent = false): string | undefined => {
  const w = schema as Worded | undefined
  return (absent ? w?.missing : undefined) ?? w?.message
}

/**
 * The first failure in the order the schema lists its properties (TypeBox reports every missing
 * property before any mistyped one; the spec's checks go field by field).
 */
function firstFailure(schema: TSchema, value: unknown): ValueError | undefined {
  const properties = (schema as { properties?: Record<string, TSchema> }).properties
  if (schema.type === 'object' && properties && isObject(value)) {
    const errors = [...Value.Errors(schema, value)]
    for (const [key, property] of Object.entries(properties)) {
      const error = errors.find((e) => e.path === `/${key}` || e.path.startsWith(`/${key}/`))
      if (error) return wordOf(error.schema, true) || !wordOf(property, true) ? error : { ...error, schema: property }
    }
    return errors[0]
  }
  return Value.Errors(schema, value).First()
}

/** Why a value fails its schema: the schema's own words when it has them, else the field (dotted path) and the failure. */
export type Failure = { worded: string } | { field?: string; why: string }

/** The first failure of `value` against `schema` (undefined when it passes): the one TypeBox validation behind every body check. */
export function failureOf(schema: TSchema, value: unknown): Failure | undefined {
  if (Value.Check(schema, value)) return undefined
  const first = firstFailure(schema, value)
  const worded =
    wordOf(first?.schema, first?.type === ValueErrorType.ObjectRequiredProperty) ?? (first?.path === '' ? wordOf(schema) : undefined)
  if (worded) return { worded }
  const field = first && first.path !== '' ? first.path.slice(1).replaceAll('/', '.') : undefined
  return { field, why: first ? first.message.charAt(0).toLowerCase() + first.message.slice(1) : 'unexpected shape' }
}

/**
 * Checks a parsed body against its TypeBox schema before anything else
 * touches it: the first failing field answers 400 with its schema's `message`
 * when it has one, else a message naming the field, instead of a TypeError
 * deep inside a service or the store.
 */
export function checkBody<T extends TSchema>(schema: T, value: unknown, what = 'request body'): Static<T> {
  const failure = failureOf(schema, value)
  if (!failure) return value as Static<T>
  if ('worded' in failure) throw new ApiError(400, failure.worded)
  throw new ApiError(400, failure.field ? `Invalid ${what}: field [${failure.field}] ${failure.why}.` : `Invalid ${what}: ${failure.why}.`)
}

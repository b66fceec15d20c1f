import type { Static, TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ApiError } from './errors'

/**
 * Checks a parsed body against its TypeBox schema before anything else
 * touches it: a mistyped field is a 400 naming the field, instead of a
 * TypeError deep inside a service or the store.
 */
export function checkBody<T extends TSchema>(schema: T, value: unknown, what = 'request body'): Static<T> {
  if (Value.Check(schema, value)) return value as Static<T>
  const first = Value.Errors(schema, value).First()
  const field = first && first.path !== '' ? first.path.slice(1).replaceAll('/', '.') : undefined
  const why = first ? first.message.charAt(0).toLowerCase() + first.message.slice(1) : 'unexpected shape'
  throw new ApiError(400, field ? `Invalid ${what}: field [${field}] ${why}.` : `Invalid ${what}: ${why}.`)
}

// Parsing of `POST /promote` bodies with the reference's 400 messages (4.7), in its order: body,
// space, the changes object, its six lists, then each item.
import { ApiError, shown } from '../../http/errors'
import { isObject } from '../repository'
import { sourceSpace, type SourceSpace } from './chain'
import { t } from 'elysia'
import { CHANGE_LISTS, Changes, emptyChanges, type Change, type Operation } from './changes'

export interface PromoteRequest {
  space: SourceSpace
  changes: Changes
}

/** The declared body of `POST /promote`; parsed by hand below for the reference's messages. */
export const PromoteBody = t.Object({ space: t.String(), changes: Changes })

const OPERATIONS: readonly Operation[] = ['add', 'update', 'remove']

export function parsePromoteRequest(body: unknown): PromoteRequest {
  if (!isObject(body)) throw new ApiError(400, 'Invalid request body.')
  const space = sourceSpace(body.space)
  if (!isObject(body.changes)) throw new ApiError(400, 'Changes object is required')
  const given = body.changes
  if (!CHANGE_LISTS.every((list) => Array.isArray(given[list]))) {
    throw new ApiError(400, 'All resource type lists (policy, integrations, kvdbs, decoders, filters, rules) are required in changes')
  }
  const changes = emptyChanges()
  for (const list of CHANGE_LISTS) {
    const seen = new Set<string>()
    for (const item of given[list] as unknown[]) {
      const change = parseChange(item)
      if (list === 'policy' && change.operation !== 'update') throw new ApiError(400, "Only 'update' operation is supported for policy.")
      // One forward step per resource, or the rollback would restore a version this request wrote.
      if (seen.has(change.id)) throw new ApiError(400, `Resource '${change.id}' is listed more than once in '${list}'.`)
      seen.add(change.id)
      changes[list].push(change)
    }
  }
  return { space, changes }
}

function parseChange(item: unknown): Change {
  if (!isObject(item)) throw new ApiError(400, 'Invalid request body.')
  const operation = typeof item.operation === 'string' ? item.operation.toLowerCase() : item.operation
  if (!OPERATIONS.includes(operation as Operation)) throw new ApiError(400, `Unknown operation: ${shown(item.operation)}`)
  if (typeof item.id !== 'string' || item.id.trim() === '') throw new ApiError(400, 'Missing [id] field.')
  return { operation: operation as Operation, id: item.id }
}

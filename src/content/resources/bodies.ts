// The request bodies of the resource and policy routes (reference 4.2.2): declared on the routes
// and checked by the route runner before the services run, in the reference's order and with its messages.
// What lies inside `resource` is checked after its metadata is nested (requireFields), since the
// reference accepts metadata keys at the root of the resource too.
import { Type as T, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { ResourceKind } from '../kinds'

const present = (field: string) => `Missing [${field}] field.`

export const Resource = T.Record(T.String(), T.Unknown(), { message: present('resource') })

/** A parent integration id: a non-blank string. */
const Integration = T.String({ pattern: '\\S', message: present('integration') })

/** The spaces a filter lives in. */
export const FILTER_SPACES = ['draft', 'standard'] as const
const FilterSpace = T.Intersect(
  [
    T.String({ pattern: '\\S', message: present('space') }),
    T.Union(
      FILTER_SPACES.map((s) => T.Literal(s)),
      { message: 'Invalid space value.' },
    ),
  ],
  { message: present('space') },
)

const CHILD_KINDS: ResourceKind[] = ['decoder', 'kvdb', 'rule']

function build(kind: ResourceKind, op: 'create' | 'update') {
  return T.Object({
    resource: Resource,
    ...(op === 'create' && CHILD_KINDS.includes(kind) ? { integration: Integration } : {}),
    ...(kind === 'filter' ? { space: FilterSpace } : {}),
  })
}

/** What every resource body may carry; each kind's schema requires its part of it. */
export type ResourceBody = Static<typeof AnyResourceBody>
const AnyResourceBody = T.Object({ resource: Resource, integration: T.Optional(Integration), space: T.Optional(FilterSpace) })

const cache = new Map<string, TObject>()
/** The body schema of creating or updating one kind of resource (typed as the union of them all). */
export function resourceBody(kind: ResourceKind, op: 'create' | 'update'): ResourceBodySchema {
  const key = `${kind}/${op}`
  let schema = cache.get(key)
  if (!schema) cache.set(key, (schema = build(kind, op)))
  return schema as unknown as ResourceBodySchema
}
/** A kind's body schema, whose checked value is a `ResourceBody`. */
export type ResourceBodySchema = TSchema & { type: 'object'; properties: TProperties; static: ResourceBody }

/** `PUT /policy/{space}`. */
export const PolicyBody = T.Object({ resource: Resource })
export type PolicyBody = Static<typeof PolicyBody>

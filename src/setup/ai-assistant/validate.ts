import { Type as T, type Static, type TSchema } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ApiError } from '../../http/errors'

/**
 * Payloads of the AI assistant settings and providers (reference 3.8, flat
 * documents in `.svc-internal-state`). The reference leaves validation to the
 * strict mapping; we check the same shapes up front so a mistake is a clear
 * 400 naming the field instead of a mapping error.
 */

export const PROVIDER_MESSAGES = {
  idRequired: 'Provider id is required.',
  idNotUuid: 'Provider id must be a valid UUID.',
  idReserved: 'Provider id is reserved.',
  saved: 'Provider saved.',
  deleted: 'Provider deleted.',
  notFound: (id: string) => `Provider not found: ${id}`,
} as const

export const FieldPolicyEntry = T.Object(
  { field: T.String({ minLength: 1 }), action: T.String({ minLength: 1 }), kind: T.Optional(T.String()) },
  { additionalProperties: false },
)

/** Every field of both documents is optional: a PUT carries what it sets. */
export const AssistantSettings = T.Partial(
  T.Object({
    privacy_default_on: T.Boolean(),
    privacy_default_per_provider: T.Record(T.String(), T.Unknown()),
    user_can_override: T.Boolean(),
    field_policy: T.Array(FieldPolicyEntry),
  }),
  { additionalProperties: false },
)
export type AssistantSettings = Static<typeof AssistantSettings>

export const Provider = T.Partial(
  T.Object({
    name: T.String(),
    type: T.String(),
    base_url: T.String(),
    model: T.String(),
    /** Opaque to us: the dashboard encrypts it (`enc:v1:` prefix). */
    api_key: T.String(),
    is_default: T.Boolean(),
  }),
  { additionalProperties: false },
)
export type Provider = Static<typeof Provider>
/** `POST /providers` carries the id (a UUID) in the body; `PUT /providers/{id}` in the path. */
export const NewProvider = T.Composite([T.Object({ id: T.String() }), Provider], { additionalProperties: false })

export const SETTINGS_KEYS = Object.keys(AssistantSettings.properties) as (keyof AssistantSettings)[]
const PROVIDER_KEYS = new Set(Object.keys(Provider.properties))

const typeName = (schema: TSchema): string => {
  if (schema.type === 'array') return 'array'
  if (schema.type === 'object') return 'object'
  return String(schema.type)
}

/** Checks `value` against one property schema; the message names the field and the expected type. */
function checkField(name: string, schema: TSchema, value: unknown): void {
  if (Value.Check(schema, value)) return
  if (schema === AssistantSettings.properties.field_policy && Array.isArray(value)) {
    const bad = (value as unknown[]).findIndex((entry) => !Value.Check(FieldPolicyEntry, entry))
    throw new ApiError(
      400,
      `Field 'field_policy[${bad}]' must be an object with non-empty string 'field' and 'action', an optional string 'kind', and no other keys.`,
    )
  }
  throw new ApiError(400, `Field '${name}' must be of type ${typeName(schema)}.`)
}

/** Keeps the four settings keys (everything else is dropped, as the reference does); null means absent. */
export function pickSettings(body: Record<string, unknown>): AssistantSettings {
  const out: Record<string, unknown> = {}
  for (const key of SETTINGS_KEYS) {
    const value = body[key]
    if (value === undefined || value === null) continue
    checkField(key, (AssistantSettings.properties as Record<string, TSchema>)[key], value)
    out[key] = value
  }
  return out as AssistantSettings
}

/** A provider body without `id` and `updated_at` (both owned by the server). Unknown keys are refused. */
export function validProvider(body: Record<string, unknown>): Provider {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    if (key === 'id' || key === 'updated_at' || key === '_id') continue
    if (!PROVIDER_KEYS.has(key)) throw new ApiError(400, `Unknown provider field: '${key}'.`)
    if (value === null) continue
    checkField(key, (Provider.properties as Record<string, TSchema>)[key], value)
    out[key] = value
  }
  return out as Provider
}

/** `POST /providers`: the id the body must carry (a UUID), then the provider as `validProvider` keeps it. */
export function newProvider(body: Record<string, unknown>): { id: string; provider: Provider } {
  const id = body.id
  if (id === undefined || id === null || id === '') throw new ApiError(400, PROVIDER_MESSAGES.idRequired)
  if (typeof id !== 'string' || !isUuid(id)) throw new ApiError(400, PROVIDER_MESSAGES.idNotUuid)
  return { id, provider: validProvider(body) }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
export const isUuid = (s: string) => UUID.test(s)

/**
 * OpenSearch Notifications' channel config (`cu/notifications/model/NotificationConfig.kt`): the
 * request envelope `{config_id?, config}` and the stored document. The schemas are the validation
 * and the types; the type-specific checks the schema cannot say (the data object matches
 * `config_type`, webhook URLs are http(s)) are in `validateConfig`.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { ApiError } from '../http/errors'

/** Channel types whose messages svc-ext delivers (HTTP). */
export const DELIVERABLE_TYPES = ['webhook', 'slack', 'chime', 'microsoft_teams', 'mattermost'] as const
/** Types the peer knows that need SMTP or AWS: accepted by neither the API nor delivery here. */
export const UNSUPPORTED_TYPES = ['email', 'sns', 'ses_account', 'smtp_account', 'email_group'] as const
export type ChannelType = (typeof DELIVERABLE_TYPES)[number]

const Url = T.Object({ url: T.String({ minLength: 1, maxLength: 2048 }) }, { additionalProperties: false })
const Webhook = T.Object(
  {
    url: T.String({ minLength: 1, maxLength: 2048 }),
    header_params: T.Optional(T.Record(T.String({ maxLength: 256 }), T.String({ maxLength: 4096 }))),
    method: T.Optional(T.String()),
  },
  { additionalProperties: false },
)

export const Config = T.Object(
  {
    name: T.String({ minLength: 1, maxLength: 512 }),
    description: T.Optional(T.String({ maxLength: 4096 })),
    config_type: T.String({ minLength: 1 }),
    is_enabled: T.Optional(T.Boolean()),
    webhook: T.Optional(Webhook),
    slack: T.Optional(Url),
    chime: T.Optional(Url),
    microsoft_teams: T.Optional(Url),
    mattermost: T.Optional(Url),
    // The peer's e-mail and AWS types: parsed so the answer can name them, then refused.
    email: T.Optional(T.Unknown()),
    sns: T.Optional(T.Unknown()),
    ses_account: T.Optional(T.Unknown()),
    smtp_account: T.Optional(T.Unknown()),
    email_group: T.Optional(T.Unknown()),
  },
  { additionalProperties: false },
)
export type Config = Static<typeof Config>

/** The peer's id alphabet (`[A-Za-z0-9+/_-]`), bounded. */
export const CONFIG_ID = '^[A-Za-z0-9+/_-]{1,512}$'

export const CreateConfigBody = T.Object(
  { config_id: T.Optional(T.String({ pattern: CONFIG_ID })), config: Config },
  { additionalProperties: false },
)
export type CreateConfigBody = Static<typeof CreateConfigBody>

export const UpdateConfigBody = T.Object({ config: Config }, { additionalProperties: false })
export type UpdateConfigBody = Static<typeof UpdateConfigBody>

/** `_source` in `.opensearch-notifications-config`. */
export interface StoredConfig {
  config_id: string
  created_time_ms: number
  last_updated_time_ms: number
  config: Config & { description: string; is_enabled: boolean }
}

const WEBHOOK_METHODS = new Set(['POST', 'PUT', 'PATCH'])

/** Type-level checks, defaults applied (`description` "", `is_enabled` true, webhook method POST). */
export function validateConfig(config: Config, allowedTypes: Set<string>): StoredConfig['config'] {
  const type = config.config_type
  if ((UNSUPPORTED_TYPES as readonly string[]).includes(type))
    throw new ApiError(
      400,
      `Channel type [${type}] is not supported by svc-ext: use a webhook, slack, chime, microsoft_teams or mattermost channel.`,
    )
  if (!(DELIVERABLE_TYPES as readonly string[]).includes(type)) throw new ApiError(400, `Unknown config_type [${type}].`)
  if (!allowedTypes.has(type)) throw new ApiError(400, `Channel type [${type}] is not allowed on this cluster.`)
  const data = (config as Record<string, unknown>)[type] as { url: string; method?: string } | undefined
  const others = [...DELIVERABLE_TYPES, ...UNSUPPORTED_TYPES].filter(
    (t) => t !== type && (config as Record<string, unknown>)[t] !== undefined,
  )
  if (!data || others.length > 0) throw new ApiError(400, `ConfigType: ${type} and data doesn't match`)
  let url: URL
  try {
    url = new URL(data.url)
  } catch {
    throw new ApiError(400, `Invalid URL for the ${type} channel.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ApiError(400, `The ${type} channel URL must be http or https.`)
  const out = { ...config, description: config.description ?? '', is_enabled: config.is_enabled ?? true }
  // An unknown method falls back to POST, as the peer's HttpMethodType does.
  if (type === 'webhook')
    out.webhook = {
      ...config.webhook!,
      method: WEBHOOK_METHODS.has((data.method ?? '').toUpperCase()) ? data.method!.toUpperCase() : 'POST',
    }
  return out
}

export const MASK = '*****'

/**
 * What a reader without the update permission sees: the URL's scheme and host only (tokens live
 * in paths and query strings), header names without their values.
 */
export function masked(config: StoredConfig['config']): StoredConfig['config'] {
  const type = config.config_type as ChannelType
  const data = (config as Record<string, unknown>)[type] as { url: string; header_params?: Record<string, string> } | undefined
  if (!data) return config
  let shown = MASK
  try {
    const u = new URL(data.url)
    shown = `${u.protocol}//${u.host}/${MASK}`
  } catch {}
  const out: Record<string, unknown> = { ...data, url: shown }
  if (data.header_params) out.header_params = Object.fromEntries(Object.keys(data.header_params).map((k) => [k, MASK]))
  return { ...config, [type]: out }
}

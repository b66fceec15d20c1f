/**
 * One delivery of a message to a channel, as the peer's `WebhookDestinationTransport` sends it:
 * the message text verbatim for a webhook, `{"text"}` for Slack, Teams and Mattermost, `{"Content"}`
 * for Chime; the user's `header_params`, or `Content-Type: application/json` when there are none;
 * only 200-207 is a success. Unlike the peer, every delivery carries an `Idempotency-Key` header
 * (the same on every retry of one delivery), so a receiver can drop the repeats that at-least-once
 * delivery may produce. Bounded by the connection timeout (resolution and TCP connect, checked first)
 * and `boundedFetch` (total timeout, answer size, no redirect followed).
 */
import type { SettingsSnapshot } from '../config/cluster-settings'
import { boundedFetch, OutboundError } from '../http/outbound'
import { checkDestination, connectWithin, DestinationRefused, hostList, type HostPolicy } from './destination'
import type { StoredConfig } from './model'

export interface Message {
  title: string
  text: string
}

/** The peer's `delivery_status`, plus whether trying again could help. */
export interface Delivery {
  ok: boolean
  status_code: string
  status_text: string
  /** False when the same request cannot succeed later (refused host, muted channel, oversized message). */
  retryable: boolean
}

export const IDEMPOTENCY_HEADER = 'Idempotency-Key'
const MAX_STATUS_TEXT = 1000

export function hostPolicy(settings: SettingsSnapshot): HostPolicy {
  return {
    allow: hostList(settings.str('plugins.notifications.http.host_allow_list')),
    deny: hostList(settings.str('opensearch.notifications.core.http.host_deny_list')),
    connectTimeoutMs: settings.num('opensearch.notifications.core.http.connection_timeout'),
  }
}

export function requestBody(config: StoredConfig['config'], msg: Message): string {
  const text = `${msg.title}\n\n${msg.text}`
  switch (config.config_type) {
    case 'webhook':
      return msg.text
    case 'chime':
      return JSON.stringify({ Content: text })
    default:
      return JSON.stringify({ text })
  }
}

export async function deliver(
  stored: StoredConfig,
  msg: Message,
  settings: SettingsSnapshot,
  opts: { idempotencyKey?: string; signal?: AbortSignal } = {},
): Promise<Delivery> {
  const config = stored.config
  if (!config.is_enabled) return { ok: false, status_code: 'LOCKED', status_text: 'The channel is muted', retryable: true }
  const data = (config as Record<string, unknown>)[config.config_type] as {
    url: string
    method?: string
    header_params?: Record<string, string>
  }
  const body = requestBody(config, msg)
  const maxBytes = settings.num('plugins.notifications.http.max_body_bytes')
  if (Buffer.byteLength(body) > maxBytes)
    return { ok: false, status_code: '400', status_text: `Message is larger than ${maxBytes} bytes`, retryable: false }
  const url = new URL(data.url)
  const policy = hostPolicy(settings)
  try {
    await checkDestination(url, policy)
    await connectWithin(url, policy.connectTimeoutMs)
  } catch (e) {
    if (e instanceof DestinationRefused) return { ok: false, status_code: '403', status_text: e.message, retryable: false }
    return { ok: false, status_code: '500', status_text: `Failed to send webhook message Failed: ${(e as Error).message}`, retryable: true }
  }
  const params = data.header_params ?? {}
  const headers: Record<string, string> = Object.keys(params).length > 0 ? { ...params } : { 'content-type': 'application/json' }
  if (opts.idempotencyKey) headers[IDEMPOTENCY_HEADER] = opts.idempotencyKey
  try {
    const res = await boundedFetch(url.href, {
      method: data.method ?? 'POST',
      headers,
      body,
      timeoutMs: settings.num('opensearch.notifications.core.http.socket_timeout'),
      signal: opts.signal,
      redirect: 'manual',
      maxResponseBytes: maxBytes,
      // The host only: the path and query of a channel URL are its secret.
      what: `channel host ${url.host}`,
    })
    const text = (await res.text()).slice(0, MAX_STATUS_TEXT)
    if (res.status >= 200 && res.status <= 207) return { ok: true, status_code: '200', status_text: text || '{}', retryable: false }
    const why = res.status >= 300 && res.status < 400 ? 'a redirect, which is not followed' : text
    return {
      ok: false,
      status_code: '500',
      status_text: `Failed to send webhook message Failed: ${res.status} ${why}`.slice(0, MAX_STATUS_TEXT),
      retryable: true,
    }
  } catch (e) {
    const reason = e instanceof OutboundError ? e.message : (e as Error).message
    return { ok: false, status_code: '500', status_text: `Failed to send webhook message Failed: ${reason}`, retryable: true }
  }
}

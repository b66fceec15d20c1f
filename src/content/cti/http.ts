// The one way the service talks HTTP to the CTI API: common headers (spec background 10: the
// `<product> Indexer <version>` User-Agent and `Accept-Encoding: gzip`), a per-call timeout, and
// the 429 policy of spec background 5 (Retry-After when usable, else base * 2^n seconds, surfaced
// after `client.max_retries` retries). Nothing here logs a header value or a query string.
import type { TSchema, Static } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { Logger } from '../../http/log'
import { boundedFetch, OutboundError } from '../../http/outbound'
import { CtiError } from './errors'
import { sleep as realSleep, type Sleep } from './sleep'
import { loggable } from './urls'

export interface CtiHttpOptions {
  userAgent: string
  /** `client.timeout` (catalog) in milliseconds; console calls pass their own. */
  timeoutMs: number
  /** `client.max_retries`: retries after a 429 before it is surfaced. */
  maxRetries: number
  /** `client.retry_backoff_base_seconds`. */
  backoffBaseSeconds: number
  log: Pick<Logger, 'warn' | 'debug'>
  /** Injected by tests that assert the waits without spending them. */
  sleep?: Sleep
  now?: () => number
}

export interface CtiRequest {
  method?: 'GET' | 'POST'
  headers?: Record<string, string>
  body?: string
  timeoutMs?: number
  signal?: AbortSignal
  /** Streaming downloads: the timeout covers the wait for the answer's headers only. */
  headersOnly?: boolean
}

/** Seconds to wait as a Retry-After header says, or undefined when it is absent or unusable. */
export function retryAfterSeconds(value: string | null, now: number): number | undefined {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Number(text)
  if (!/[a-z]/i.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000))
}

export class CtiHttp {
  private readonly sleep: Sleep
  private readonly now: () => number

  constructor(readonly options: CtiHttpOptions) {
    this.sleep = options.sleep ?? realSleep
    this.now = options.now ?? Date.now
  }

  /** Sends the request, waiting out 429s; any other status is the caller's to judge. */
  async send(url: string, req: CtiRequest = {}): Promise<Response> {
    const { maxRetries, backoffBaseSeconds, log } = this.options
    for (let attempt = 0; ; attempt++) {
      const res = await this.once(url, req)
      if (res.status !== 429) return res
      const body = await res.text().catch(() => '')
      if (attempt >= maxRetries) {
        log.warn('CTI API rate limit persisted; giving up until the next run', { url: loggable(url), retries: attempt })
        throw new CtiError('rate_limited', `CTI API answered 429 after ${attempt} retries`, 429, body)
      }
      const header = retryAfterSeconds(res.headers.get('retry-after'), this.now())
      const seconds = header ?? backoffBaseSeconds * 2 ** attempt
      log.warn('CTI API rate-limited the request; retrying', {
        url: loggable(url),
        retry_in_seconds: seconds,
        retry: attempt + 1,
        of: maxRetries,
        from: header === undefined ? 'backoff' : 'retry-after',
      })
      await this.sleep(seconds * 1000, req.signal).catch(() => {
        throw new CtiError('aborted', 'CTI request aborted while waiting for a rate limit')
      })
    }
  }

  private async once(url: string, req: CtiRequest): Promise<Response> {
    try {
      return await boundedFetch(url, {
        method: req.method ?? 'GET',
        headers: { 'user-agent': this.options.userAgent, 'accept-encoding': 'gzip', ...req.headers },
        body: req.body,
        timeoutMs: req.timeoutMs ?? this.options.timeoutMs,
        signal: req.signal,
        redirect: 'follow',
        headersOnly: req.headersOnly,
        what: 'CTI API',
      })
    } catch (e) {
      if (!(e instanceof OutboundError)) throw e
      if (e.kind === 'aborted') throw new CtiError('aborted', 'CTI request aborted')
      if (e.kind === 'timeout') throw new CtiError('timeout', e.message)
      throw new CtiError('unreachable', e.message)
    }
  }

  /** GET/POST and parse a JSON answer that must be 2xx and fit `schema`. */
  async json<S extends TSchema>(url: string, schema: S, req: CtiRequest = {}): Promise<Static<S>> {
    const res = await this.send(url, req)
    const text = await res.text()
    if (res.status < 200 || res.status > 299)
      throw new CtiError('http', `CTI API answered ${res.status} for ${loggable(url)}`, res.status, text)
    return parseAs(schema, text, url)
  }
}

export function parseAs<S extends TSchema>(schema: S, text: string, url: string): Static<S> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new CtiError('bad_payload', `CTI API answered something that is not JSON for ${loggable(url)}`, 200, text.slice(0, 200))
  }
  if (!Value.Check(schema, value))
    throw new CtiError('bad_payload', `CTI API answer of unexpected shape for ${loggable(url)}`, 200, text.slice(0, 200))
  return value as Static<S>
}

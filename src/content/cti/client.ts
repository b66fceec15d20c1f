// The CTI API as the service uses it (reference 1): catalog calls through the URL resolver (signed
// URLs for registered instances, 1.2), console calls (1.6) and update checks (1.7). Built from a
// settings snapshot; the token lives in CtiCredentials and is only ever put in request headers
// and form bodies, never in a log line or an error.
import { createWriteStream } from 'node:fs'
import type { SettingsSnapshot } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import { USER_AGENT, VERSION } from '../../version'
import type { CtiCredentials } from './credentials'
import { CtiError } from './errors'
import { CtiHttp, parseAs } from './http'
import { ChangesPage, ConsumerInfo, Environment, PublicPlans, ReleaseUpdates, TokenExchange, type Change, type Plan } from './schemas'
import type { Sleep } from './sleep'
import { apiUrl, loggable } from './urls'

/** The token type our CTI counterpart issues signed URLs as (reference 1.6.1; vendor part is ours). */
export const SIGNED_URL_TOKEN_TYPE = 'urn:svc:params:oauth:token-type:signed_url'

export interface CtiClientDeps {
  credentials: CtiCredentials
  log: Logger
  clusterUuid: string
  version?: string
  sleep?: Sleep
  now?: () => number
  /**
   * Calls made while a REST caller waits (subscription, version check) do not sit out 429s
   * for minutes: the rate limit is answered at once instead.
   */
  interactive?: boolean
}

export type PlanAnswer = { plan: Plan } | { rejected: true } | { unavailable: true }

export class CtiClient {
  readonly base: string
  readonly http: CtiHttp
  private readonly consoleTimeoutMs: number
  readonly tag: string

  constructor(
    settings: SettingsSnapshot,
    private readonly deps: CtiClientDeps,
  ) {
    this.base = settings.str('plugins.content_manager.cti.api')
    this.consoleTimeoutMs = settings.num('plugins.content_manager.cti.console.timeout') * 1000
    this.tag = `v${deps.version ?? VERSION}`
    this.http = new CtiHttp({
      userAgent: USER_AGENT,
      timeoutMs: settings.num('plugins.content_manager.client.timeout') * 1000,
      maxRetries: deps.interactive ? 0 : settings.num('plugins.content_manager.client.max_retries'),
      backoffBaseSeconds: settings.num('plugins.content_manager.client.retry_backoff_base_seconds'),
      log: deps.log,
      sleep: deps.sleep,
      now: deps.now,
    })
  }

  // ---- catalog (through the resolver) ----

  /** Reference 1.2: the URL to fetch; for a registered instance an exchanged, signed one. */
  async resolve(url: string, signal?: AbortSignal): Promise<string> {
    const token = await this.deps.credentials.token()
    if (!token) return url
    try {
      return await this.exchange(token, url, signal)
    } catch (e) {
      if (e instanceof CtiError && e.kind === 'aborted') throw e
      this.deps.credentials.setAsideCurrent()
      this.deps.log.warn('CTI URL could not be signed; using the plain URL', { url: loggable(url), reason: (e as Error).message })
      return url
    }
  }

  async consumer(url: string, signal?: AbortSignal): Promise<ConsumerInfo> {
    return (await this.http.json(await this.resolve(url, signal), ConsumerInfo, { signal })).data
  }

  /** Changes in `(from, to]` (reference 1.4). */
  async changes(url: string, from: number, to: number, signal?: AbortSignal): Promise<Change[]> {
    const target = `${url}/changes?from_offset=${from}&to_offset=${to}`
    return (await this.http.json(await this.resolve(target, signal), ChangesPage, { signal })).data
  }

  /** Streams a snapshot archive to `file` (reference 1.5.1); a stalled body times out like a request. */
  async download(link: string, file: string, signal?: AbortSignal): Promise<number> {
    const res = await this.http.send(await this.resolve(link, signal), { signal, headersOnly: true })
    if (res.status < 200 || res.status > 299 || !res.body) {
      const body = await res.text().catch(() => '')
      throw new CtiError('http', `CTI snapshot download answered ${res.status}`, res.status, body.slice(0, 200))
    }
    const out = createWriteStream(file)
    let bytes = 0
    const reader = res.body.getReader()
    const idleMs = this.http.options.timeoutMs
    try {
      for (;;) {
        let timer: Timer | undefined
        const stalled = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new CtiError('timeout', `snapshot download stalled for ${idleMs} ms`)), idleMs)
        })
        const chunk = await Promise.race([reader.read(), stalled]).finally(() => clearTimeout(timer))
        if (chunk.done) break
        bytes += chunk.value.byteLength
        if (!out.write(chunk.value)) await new Promise((r) => out.once('drain', r))
      }
    } catch (e) {
      await reader.cancel().catch(() => {})
      throw e instanceof CtiError
        ? e
        : new CtiError(signal?.aborted ? 'aborted' : 'unreachable', `snapshot download failed: ${(e as Error).message}`)
    } finally {
      await new Promise((r) => out.end(r))
    }
    if (bytes === 0) throw new CtiError('bad_payload', 'CTI snapshot download was empty')
    return bytes
  }

  // ---- console (reference 1.6) ----

  private async exchange(token: string, resource: string, signal?: AbortSignal): Promise<string> {
    const body = new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
      requested_token_type: SIGNED_URL_TOKEN_TYPE,
      resource,
    }).toString()
    const answer = await this.http.json(apiUrl(this.base, '/platform/environments/token/exchange'), TokenExchange, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${token}`, 'svc-uid': this.deps.clusterUuid },
      body,
      timeoutMs: this.consoleTimeoutMs,
      signal,
    })
    return answer.access_token
  }

  /**
   * The active plan of the registered environment (1.6.2). A 401 means the token was rejected (the
   * caller clears it); any other failure is "console unavailable" and keeps it.
   */
  async environmentPlan(signal?: AbortSignal): Promise<PlanAnswer> {
    const token = await this.deps.credentials.token()
    if (!token) return { unavailable: true }
    try {
      const env = await this.http.json(apiUrl(this.base, '/platform/environments/me'), Environment, {
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'svc-uid': this.deps.clusterUuid,
          'svc-tag': this.tag,
        },
        timeoutMs: this.consoleTimeoutMs,
        signal,
      })
      return env.plans[0] ? { plan: env.plans[0] } : { unavailable: true }
    } catch (e) {
      if (e instanceof CtiError && e.kind === 'http' && e.status === 401) return { rejected: true }
      if (e instanceof CtiError && e.kind === 'aborted') throw e
      this.deps.log.warn('CTI console unavailable', { reason: (e as Error).message })
      return { unavailable: true }
    }
  }

  /** The first public plan (1.6.3), or undefined when the CTI cannot tell. */
  async publicPlan(signal?: AbortSignal): Promise<Plan | undefined> {
    try {
      const r = await this.http.json(apiUrl(this.base, '/catalog/plans'), PublicPlans, {
        headers: { 'content-type': 'application/json', 'svc-tag': this.tag },
        timeoutMs: this.consoleTimeoutMs,
        signal,
      })
      return r.plans.find((p) => p.is_public === true)
    } catch (e) {
      this.deps.log.warn('CTI public plans unavailable', { reason: (e as Error).message })
      return undefined
    }
  }

  // ---- update check (reference 1.7) ----

  private updateHeaders(): Record<string, string> {
    return { accept: 'application/json', 'svc-uid': this.deps.clusterUuid, 'svc-tag': this.tag }
  }

  /** Telemetry ping: identification and version only; the answer is only logged. */
  async ping(signal?: AbortSignal): Promise<{ status: number; body: string }> {
    const res = await this.http.send(apiUrl(this.base, '/ping'), { headers: this.updateHeaders(), signal })
    return { status: res.status, body: await res.text() }
  }

  /** Release updates of the installed version; throws CtiError('http') with the CTI's status and body. */
  async releaseUpdates(signal?: AbortSignal): Promise<ReleaseUpdates> {
    const url = apiUrl(this.base, `/releases/${this.tag}/updates`)
    const res = await this.http.send(url, { headers: this.updateHeaders(), signal })
    const text = await res.text()
    if (res.status < 200 || res.status > 299) throw new CtiError('http', `CTI API answered ${res.status}`, res.status, text)
    return parseAs(ReleaseUpdates, text, url).data
  }
}

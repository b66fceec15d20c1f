// The CTI access token (spec Authentication 10): held in `.svc-internal-state` as document
// `credentials`, field `access_token` = Base64 of the UTF-8 token (reference 4.11), and in memory.
// Every node re-reads the document every few seconds, so a registration made through one node is
// used by all of them. A token that failed a token exchange is set aside on this node until a
// different token is registered (reference 1.2: the instance then behaves as unregistered).
import type { Logger } from '../../http/log'
import { IndexNotFound } from '../../store/errors'
import type { Store } from '../../store/port'
import { CTI_CREDENTIALS_DOC_ID, INTERNAL_STATE, INTERNAL_STATE_INDEX } from '../../setup/indices'
import { AlreadyExists } from '../../store/errors'

const encode = (token: string) => Buffer.from(token, 'utf8').toString('base64')
const decode = (stored: string) => Buffer.from(stored, 'base64').toString('utf8')

export class CtiCredentials {
  private cached?: { token: string | undefined; at: number }
  private setAside?: string

  constructor(
    private readonly store: Store,
    private readonly log: Pick<Logger, 'warn' | 'info'>,
    private readonly now: () => number = Date.now,
    private readonly cacheMillis = 5000,
  ) {}

  /** The token in force on this node, or undefined when unregistered. */
  async token(): Promise<string | undefined> {
    const t = this.now()
    if (!this.cached || t - this.cached.at >= this.cacheMillis) this.cached = { token: await this.read(), at: t }
    const token = this.cached.token
    return token !== undefined && token !== this.setAside ? token : undefined
  }

  async isRegistered(): Promise<boolean> {
    return (await this.token()) !== undefined
  }

  async save(token: string): Promise<void> {
    await this.ensureIndex()
    await this.store.index({
      index: INTERNAL_STATE_INDEX,
      id: CTI_CREDENTIALS_DOC_ID,
      body: { access_token: encode(token) },
      refresh: true,
    })
    this.cached = { token, at: this.now() }
    this.setAside = undefined
  }

  /** Deletes the stored token (the index stays); idempotent. */
  async remove(): Promise<void> {
    try {
      await this.store.delete({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID, refresh: true })
    } catch (e) {
      if (!(e instanceof IndexNotFound) && (e as { status?: number }).status !== 404) throw e
    }
    this.cached = { token: undefined, at: this.now() }
    this.setAside = undefined
  }

  /** The token failed a token exchange: this node stops using it until another one is registered. */
  setAsideCurrent(): void {
    if (this.cached?.token === undefined) return
    this.setAside = this.cached.token
    this.log.warn('CTI token exchange failed; continuing as an unregistered instance until the next registration', {})
  }

  private async read(): Promise<string | undefined> {
    try {
      const doc = await this.store.get({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID })
      if (!doc.found) return undefined
      const stored = (doc._source as { access_token?: unknown } | undefined)?.access_token
      if (typeof stored !== 'string' || stored === '') return undefined
      const token = decode(stored).trim()
      return token === '' ? undefined : token
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
  }

  private async ensureIndex(): Promise<void> {
    if (await this.store.existsIndex({ index: INTERNAL_STATE_INDEX, expand_wildcards: 'all' })) return
    try {
      await this.store.createIndex({ index: INTERNAL_STATE_INDEX, body: INTERNAL_STATE.body })
    } catch (e) {
      if (!(e instanceof AlreadyExists)) throw e
    }
  }
}

import { ApiError } from '../../http/errors'
import { IndexNotFound } from '../../store/errors'
import type { Source, Store } from '../../store/port'
import { ensureIndex } from '../ensure'
import { AI_ASSISTANT_SETTINGS_DOC_ID, CTI_CREDENTIALS_DOC_ID, INTERNAL_STATE, INTERNAL_STATE_INDEX } from '../indices'
import { PROVIDER_MESSAGES, type AssistantSettings, type Provider } from './validate'

/**
 * AI assistant settings and providers (reference 3.8): flat documents in the
 * system index `.svc-internal-state`, read and written with the service's
 * rights (no role reaches a system index). The CTI token document there is
 * never read, listed or returned.
 */

export interface AssistantDeps {
  store: Store
  now: () => number
}

const RESERVED = new Set([AI_ASSISTANT_SETTINGS_DOC_ID, CTI_CREDENTIALS_DOC_ID])
/** Largest provider list returned, as the reference. */
const MAX_PROVIDERS = 500

export { PROVIDER_MESSAGES } from './validate'

export class AssistantService {
  constructor(private readonly deps: AssistantDeps) {}

  async getSettings(): Promise<Source> {
    try {
      const doc = await this.deps.store.get({ index: INTERNAL_STATE_INDEX, id: AI_ASSISTANT_SETTINGS_DOC_ID })
      return doc.found ? (doc._source ?? {}) : {}
    } catch (e) {
      if (e instanceof IndexNotFound) return {}
      throw e
    }
  }

  /** Replaces the whole document: keys not sent disappear. `settings` is the route's body (pickSettings). */
  async putSettings(settings: AssistantSettings): Promise<void> {
    await this.write(AI_ASSISTANT_SETTINGS_DOC_ID, { ...settings })
  }

  async listProviders(): Promise<Array<Source & { _id: string }>> {
    try {
      const r = await this.deps.store.search({
        index: INTERNAL_STATE_INDEX,
        body: { query: { bool: { must_not: [{ ids: { values: [...RESERVED] } }] } }, size: MAX_PROVIDERS },
      })
      return r.hits.hits.map((h) => ({ _id: h._id, ...(h._source ?? {}) })).sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0))
    } catch (e) {
      if (e instanceof IndexNotFound) return []
      throw e
    }
  }

  /** POST: the id comes from the body (a UUID, checked with the body by `newProvider`); an existing id is overwritten. */
  async createProvider({ id, provider }: { id: string; provider: Provider }): Promise<string> {
    if (RESERVED.has(id)) throw new ApiError(400, PROVIDER_MESSAGES.idReserved)
    await this.saveProvider(id, provider)
    return id
  }

  /** PUT: the id comes from the path (no UUID check); any `id` in the body is discarded. Upsert. */
  async putProvider(id: string, provider: Provider): Promise<string> {
    if (RESERVED.has(id)) throw new ApiError(400, PROVIDER_MESSAGES.idReserved)
    await this.saveProvider(id, provider)
    return id
  }

  async deleteProvider(id: string): Promise<string> {
    if (RESERVED.has(id)) throw new ApiError(400, PROVIDER_MESSAGES.idReserved)
    try {
      const r = await this.deps.store.delete({ index: INTERNAL_STATE_INDEX, id, refresh: true })
      if (r.result === 'not_found') throw new ApiError(404, PROVIDER_MESSAGES.notFound(id))
    } catch (e) {
      if (e instanceof IndexNotFound) throw new ApiError(404, PROVIDER_MESSAGES.notFound(id))
      throw e
    }
    return id
  }

  private async saveProvider(id: string, provider: Provider): Promise<void> {
    await this.write(id, { ...provider, updated_at: new Date(this.deps.now()).toISOString() })
  }

  /** The index is the Content Manager's too; if it is missing (deleted by hand) it is recreated with its mapping. */
  private async write(id: string, body: Source): Promise<void> {
    try {
      await this.deps.store.index({ index: INTERNAL_STATE_INDEX, id, body, refresh: true })
    } catch (e) {
      if (!(e instanceof IndexNotFound)) throw e
      await ensureIndex(this.deps.store, INTERNAL_STATE)
      await this.deps.store.index({ index: INTERNAL_STATE_INDEX, id, body, refresh: true })
    }
  }
}

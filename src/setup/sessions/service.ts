import type { ClusterSettings } from '../../config/cluster-settings'
import { ApiError } from '../../http/errors'
import { IndexNotFound, VersionConflict } from '../../store/errors'
import type { SearchHit, Store } from '../../store/port'
import { SESSIONS_STREAM } from '../indices'
import { CreateGate, sessionCreateWait } from './create-gate'
import {
  decodeVersion,
  formatVersion,
  MAX_SESSIONS_PER_OWNER,
  MESSAGES,
  validId,
  CreateSessionBody,
  RenameSessionBody,
  ReplaceSessionBody,
  type Version,
} from './validate'

/**
 * AI assistant sessions (spec "AI assistant sessions", reference 3.3-3.6).
 * Every store call runs with the service's own rights, also in platform mode
 * (reference 3.2: the caller's context is stashed; users hold no index-level
 * write on the stream): the owner is resolved from the caller first and every
 * lookup filters on it, so another user's session is simply not found.
 */

export interface SessionDeps {
  store: Store
  settings: ClusterSettings
  now: () => number
  sleep?: (ms: number) => Promise<void>
  /** The store is this node's alone (embedded mode); see CreateGate. */
  nodeLocalStore?: boolean
}

/** What is stored; `@timestamp` always equals `created_at` and is never returned. */
export interface StoredSession {
  user: string
  title: string
  messages: unknown[]
  created_at: string
  updated_at: string
  '@timestamp': string
}

export interface SessionAnswer {
  id: string
  title: string
  created_at: string
  updated_at: string
  messages: unknown[]
  version: string
}

export interface RenameAnswer {
  id: string
  title: string
  updated_at: string
  version: string
}

interface Found {
  index: string
  id: string
  source: StoredSession
  version: Version
}

const iso = (millis: number) => new Date(millis).toISOString()

export class SessionService {
  private readonly gate: CreateGate

  constructor(private readonly deps: SessionDeps) {
    this.gate = new CreateGate(deps)
  }

  async create(owner: string, checked: CreateSessionBody): Promise<SessionAnswer> {
    const title = checked.title.trim()
    const messages = checked.messages
    return this.gate.run(owner, sessionCreateWait(await this.deps.settings.snapshot()), async () => {
      if ((await this.countOwned(owner)) >= MAX_SESSIONS_PER_OWNER) throw new ApiError(409, MESSAGES.capReached)
      const now = iso(this.deps.now())
      const doc: StoredSession = { user: owner, title, messages, created_at: now, updated_at: now, '@timestamp': now }
      // Refreshed now, not at the next scheduled refresh (`wait_for`): creates of one owner queue
      // behind this lease, and each waited half a refresh interval (100 creates on a three-node
      // OpenSearch: 49 s against 2.5 s); the next create's count must see this one.
      const r = await this.deps.store.index({ index: SESSIONS_STREAM, body: { ...doc }, op_type: 'create', refresh: true })
      return { id: r._id, title, created_at: now, updated_at: now, messages, version: formatVersion(r._seq_no, r._primary_term) }
    })
  }

  async replace(owner: string, rawId: string | undefined, checked: ReplaceSessionBody): Promise<SessionAnswer> {
    const id = validId(rawId)
    const messages = checked.messages
    const title = checked.title?.trim()
    const expected = decodeVersion(checked.expected_version)
    const found = await this.lookup(owner, id)
    const doc: StoredSession = {
      user: found.source.user,
      title: title ?? found.source.title,
      messages,
      created_at: found.source.created_at,
      updated_at: iso(this.deps.now()),
      '@timestamp': found.source['@timestamp'],
    }
    const version = await this.write(found, doc, expected ?? found.version)
    return { id, title: doc.title, created_at: doc.created_at, updated_at: doc.updated_at, messages, version }
  }

  async rename(owner: string, rawId: string | undefined, body: RenameSessionBody): Promise<RenameAnswer> {
    const id = validId(rawId)
    const title = body.title.trim()
    const found = await this.lookup(owner, id)
    // The stored source is copied verbatim: only the title changes, updated_at is not re-stamped.
    const doc = { ...found.source, title }
    const version = await this.write(found, doc, found.version)
    return { id, title, updated_at: found.source.updated_at, version }
  }

  async delete(owner: string, rawId: string | undefined): Promise<{ id: string }> {
    const id = validId(rawId)
    const found = await this.lookup(owner, id)
    const r = await this.deps.store.delete({ index: found.index, id, refresh: 'wait_for' })
    if (r.result === 'not_found') throw new ApiError(404, MESSAGES.notFound(id))
    return { id }
  }

  /** Sessions of one owner over every backing index; a missing stream holds none. */
  async countOwned(owner: string): Promise<number> {
    try {
      const r = await this.deps.store.count({
        index: SESSIONS_STREAM,
        body: { query: { term: { user: owner } } },
        ignore_unavailable: true,
      })
      return r.count
    } catch (e) {
      if (e instanceof IndexNotFound) return 0
      throw e
    }
  }

  private async lookup(owner: string, id: string): Promise<Found> {
    let hit: SearchHit | undefined
    try {
      const r = await this.deps.store.search({
        index: SESSIONS_STREAM,
        ignore_unavailable: true,
        body: {
          query: { bool: { filter: [{ ids: { values: [id] } }, { term: { user: owner } }] } },
          seq_no_primary_term: true,
          size: 1,
        },
      })
      hit = r.hits.hits[0]
    } catch (e) {
      if (!(e instanceof IndexNotFound)) throw e
    }
    if (!hit || hit._seq_no === undefined || hit._primary_term === undefined) throw new ApiError(404, MESSAGES.notFound(id))
    return {
      index: hit._index,
      id,
      source: hit._source as unknown as StoredSession,
      version: { seqNo: hit._seq_no, primaryTerm: hit._primary_term },
    }
  }

  /** A conditional full-document write into the hit's backing index; any conflict is the client's to resolve. */
  private async write(found: Found, doc: object, version: Version): Promise<string> {
    try {
      const r = await this.deps.store.index({
        index: found.index,
        id: found.id,
        body: { ...doc },
        if_seq_no: version.seqNo,
        if_primary_term: version.primaryTerm,
        refresh: 'wait_for',
      })
      return formatVersion(r._seq_no, r._primary_term)
    } catch (e) {
      if (e instanceof VersionConflict) throw new ApiError(409, MESSAGES.conflict)
      throw e
    }
  }
}

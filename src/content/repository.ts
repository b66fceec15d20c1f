// Reads and writes space-aware content documents (reference 2.5 envelope) through the Store. It
// knows nothing of HTTP or of who is calling: callers authorise their writes before using it.
import { IndexNotFound, StoreError, VersionConflict } from '../store/errors'
import type { SearchHit, Source, Store } from '../store/port'
import { documentHash } from './hash'
import { envelopeJson, type Appended } from './appended-hash'
import { parsedFrom } from '../store/source-text'
import { CONTENT_ALIASES } from './indices'
import type { Space } from './spaces'
import { isObject } from '../json'

export type Doc = Record<string, unknown>

/** One stored envelope with the version it was read at (for optimistic writes). */
export interface Stored {
  _id: string
  seqNo: number
  primaryTerm: number
  document: Doc
  hash: string
  space: string
  source: Source
}

export interface Envelope {
  document: Doc
  hash: { sha256: string }
  space: { name: string; hash?: { sha256: string } }
  yaml?: string
  [extra: string]: unknown
}

const PAGE = 10_000

export { isObject }

/** The envelope of a document as stored: its hash always follows the document it carries. */
export function envelope(document: Doc, space: string, extra: Partial<Envelope> = {}): Envelope {
  return { document, hash: { sha256: documentHash(document) }, space: { name: space }, ...extra }
}

function toStored(hit: { _id: string; _seq_no?: number; _primary_term?: number; _source?: Source }): Stored {
  const source = hit._source ?? {}
  const space = isObject(source.space) ? String(source.space.name ?? '') : ''
  const hash = isObject(source.hash) ? String(source.hash.sha256 ?? '') : ''
  return {
    _id: hit._id,
    seqNo: hit._seq_no ?? -1,
    primaryTerm: hit._primary_term ?? 0,
    document: isObject(source.document) ? source.document : {},
    hash,
    space,
    source,
  }
}

export class ContentUnavailable extends Error {
  constructor(readonly alias: string) {
    super(`Content index [${alias}] does not exist.`)
  }
}

export class ContentRepository {
  /** `lookup` resolves aliases (the service's store even when `store` is a caller's: resolving is not the caller's act). */
  constructor(
    private readonly store: Store,
    private readonly lookup: Store = store,
  ) {}

  /** This repository reading and writing through `store` (a caller's, for work done with the caller's rights). */
  writingAs(store: Store): ContentRepository {
    return store === this.store ? this : new ContentRepository(store, this.lookup)
  }

  /** The concrete index behind an alias; writes go there so nothing ever auto-creates an index named like the alias. */
  async concrete(alias: string): Promise<string> {
    const names = await this.lookup.resolve(alias, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
    if (names.length === 0) throw new ContentUnavailable(alias)
    if (names.length === 1) return names[0]
    // An alias over both slots (mid-swap): the write index is the live one.
    const aliases = await this.lookup.getAlias({ name: alias })
    const writer = Object.entries(aliases).find(([, a]) => a.aliases[alias]?.is_write_index)
    return writer?.[0] ?? names[0]
  }

  /** The store's write mark of these aliases' indices (Store.writeMark): undefined when it keeps none. */
  writeMark(aliases: string | string[]): string | undefined {
    return this.store.writeMark?.(aliases)
  }

  async exists(alias: string): Promise<boolean> {
    return (await this.lookup.resolve(alias, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })).length > 0
  }

  async getById(alias: string, id: string): Promise<Stored | undefined> {
    try {
      const r = await this.store.get({ index: alias, id })
      return r.found ? toStored(r) : undefined
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
  }

  /**
   * `getById` through a search: the embedded store parses a large source (an integration listing
   * 10,000 rules is 400 KB) once per version for all the searches that read it, where every get
   * parses it again. For content's own documents (written with refresh); anything but one hit is
   * asked of get, which is the answer then.
   */
  async getByIdShared(alias: string, id: string): Promise<Stored | undefined> {
    let hits: SearchHit[]
    try {
      const body = { query: { ids: { values: [id] } }, size: 2, seq_no_primary_term: true }
      hits = (await this.store.search({ index: alias, body, ignore_unavailable: true })).hits.hits
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
    return hits.length === 1 ? toStored(hits[0]) : this.getById(alias, id)
  }

  /**
   * Documents of a space matching extra filters, every page of them, in `document.id` order, or in
   * no order with `few` (for filters that pick a few documents: sorted, the store walks the ids of
   * the whole index in order to find them; a full page is listed again in order).
   */
  async list(alias: string, space: Space | string, options: { filter?: Doc[]; source?: string[]; few?: boolean } = {}): Promise<Stored[]> {
    const out: Stored[] = []
    let after: unknown[] | undefined
    const sort = options.few ? {} : { sort: [{ 'document.id': { order: 'asc' as const, unmapped_type: 'keyword' } }] }
    for (;;) {
      let hits: SearchHit[]
      try {
        const r = await this.store.search({
          index: alias,
          body: {
            // The caller's filters first: the store reads the rows of the first most selective
            // clause, and a document id or title picks fewer rows than the space does.
            query: { bool: { filter: [...(options.filter ?? []), { term: { 'space.name': space } }] } },
            size: PAGE,
            ...sort,
            seq_no_primary_term: true,
            ...(options.source ? { _source: options.source } : {}),
            ...(after ? { search_after: after } : {}),
          },
          ignore_unavailable: true,
        })
        hits = r.hits.hits
      } catch (e) {
        if (e instanceof IndexNotFound) return out
        throw e
      }
      out.push(...hits.map(toStored))
      if (hits.length < PAGE) return out
      if (options.few) return this.list(alias, space, { ...options, few: false })
      after = hits[hits.length - 1].sort
    }
  }

  /**
   * Documents of every space written after `_seq_no` `after` of the alias's one index, in `_seq_no`
   * order, with how many `space` holds now; undefined when the alias spans several indices
   * (mid-swap) or none. Lets a reader keep a copy of a space current by reading only what changed.
   * The space is not in the query: the store would gather the whole space's rows to answer it,
   * where the `_seq_no` range alone reads only the changed ones (and shows those that left the space).
   */
  async changedSince(
    alias: string,
    space: Space | string,
    after: { index: string; seq: number } | undefined,
    source: string[],
  ): Promise<{ index: string; docs: Stored[]; count: number } | undefined> {
    const names = await this.lookup.resolve(alias, { expand_wildcards: 'all', ignore_unavailable: true, allow_no_indices: true })
    if (names.length !== 1) return undefined
    const index = names[0]
    const docs: Stored[] = []
    let seq = after?.index === index ? after.seq : -1
    for (;;) {
      const r = await this.store.search({
        index,
        body: {
          query: { match_all: {} },
          size: PAGE,
          sort: [{ _seq_no: 'asc' }],
          track_total_hits: false,
          seq_no_primary_term: true,
          _source: source,
          ...(seq >= 0 ? { search_after: [seq] } : {}),
        },
      })
      const hits = r.hits.hits
      docs.push(...hits.map(toStored))
      if (hits.length < PAGE) break
      seq = hits[hits.length - 1]._seq_no ?? seq
    }
    const count = (await this.store.count({ index, body: { query: { term: { 'space.name': space } } } })).count
    return { index, docs, count }
  }

  async findByDocumentId(alias: string, space: Space | string, id: string): Promise<Stored | undefined> {
    return (await this.list(alias, space, { filter: [{ term: { 'document.id': id } }], few: true }))[0]
  }

  async findByTitle(alias: string, space: Space | string, title: string): Promise<Stored[]> {
    return this.list(alias, space, { filter: [{ term: { 'document.metadata.title': title } }], few: true })
  }

  /** Documents of a space, or undefined when the index is missing (the limit check is then skipped). */
  async count(alias: string, space: Space | string): Promise<number | undefined> {
    try {
      if (!(await this.exists(alias))) return undefined
      return (await this.store.count({ index: alias, body: { query: { term: { 'space.name': space } } } })).count
    } catch (e) {
      if (e instanceof IndexNotFound) return undefined
      throw e
    }
  }

  /** The policy of a space (one per space; the user-overrides document has no space and never matches). */
  async policy(space: Space | string): Promise<Stored | undefined> {
    return (await this.list(CONTENT_ALIASES.policies, space, { few: true }))[0]
  }

  async create(alias: string, id: string, body: Envelope): Promise<void> {
    await this.store.index({ index: await this.concrete(alias), id, body, op_type: 'create', refresh: true })
  }

  /** Replaces a document, only if it is still the version that was read. */
  async replace(alias: string, stored: Stored, body: Envelope): Promise<void> {
    await this.store.index({
      index: await this.concrete(alias),
      id: stored._id,
      body,
      if_seq_no: stored.seqNo,
      if_primary_term: stored.primaryTerm,
      refresh: true,
    })
  }

  /** Writes a document whatever its current version (restores, copies). */
  async put(alias: string, id: string, body: Envelope | Source): Promise<void> {
    await this.store.index({ index: await this.concrete(alias), id, body: body as Source, refresh: true })
  }

  async remove(alias: string, id: string): Promise<boolean> {
    const r = await this.store.delete({ index: await this.concrete(alias), id, refresh: true })
    return r.result === 'deleted'
  }

  async removeMany(alias: string, ids: string[]): Promise<void> {
    if (ids.length === 0) return
    const index = await this.concrete(alias)
    for (let i = 0; i < ids.length; i += 1000) {
      const body = ids.slice(i, i + 1000).map((id) => ({ delete: { _index: index, _id: id } }))
      const r = await this.store.bulk({ body, refresh: true })
      // A document already gone is removed; any other refusal (a caller's missing right) is the answer.
      const failed = r.items.map((item) => Object.values(item)[0]).find((it) => it?.error && it.status !== 404)
      if (failed?.error) throw new StoreError(failed.error.type, failed.status, failed.error.reason)
    }
  }

  /** Writes only the aggregate hash of a policy, conditionally on the version read. */
  async setSpaceHash(stored: Stored, hash: string): Promise<void> {
    await this.store.update({
      index: await this.concrete(CONTENT_ALIASES.policies),
      id: stored._id,
      body: { doc: { space: { name: stored.space, hash: { sha256: hash } } } },
      if_seq_no: stored.seqNo,
      if_primary_term: stored.primaryTerm,
      refresh: true,
    })
  }

  /**
   * Read-modify-write of one document with optimistic concurrency, retried on conflict (parents
   * gain and lose children concurrently). `change` returns the new document, or undefined to skip;
   * `hashOf` may answer its hash and JSON for less than serialising and hashing it whole.
   */
  async modify(
    alias: string,
    read: () => Promise<Stored | undefined>,
    change: (current: Stored) => Doc | undefined,
    attempts: number,
    hashOf: (current: Stored, next: Doc) => Appended | undefined = () => undefined,
  ): Promise<Stored | undefined> {
    for (let i = 1; ; i++) {
      const current = await read()
      if (!current) return undefined
      const next = change(current)
      if (next === undefined) return current
      try {
        // Everything else of the envelope (space, its aggregate hash, offset) is kept as it was.
        const known = hashOf(current, next)
        const body: Envelope = { ...(current.source as Envelope), document: next, hash: { sha256: known?.sha256 ?? documentHash(next) } }
        // The text known with the hash is written as it is (neither is changed after).
        const json = known && envelopeJson(body, known.json)
        if (json !== undefined) parsedFrom(body, json)
        await this.replace(alias, current, body)
        return current
      } catch (e) {
        if (!(e instanceof VersionConflict) || i >= attempts) throw e
      }
    }
  }
}

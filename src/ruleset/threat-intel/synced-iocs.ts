/**
 * The IoC index of the node, kept in step with the stored IoCs (the Content Manager's IoC index,
 * alias `svc-threatintel-enrichments`) and shared by every detector. It is loaded from the store on
 * first use; the content sync hands it each change window it wrote (`applied`: the IoCs it put and
 * deleted), so a change batch costs its own size, never a reload. A snapshot load replaces the
 * whole set (`replaced`), and a write the node did not see (a restore, an import, another node's
 * sync on a shared platform store) shows as different stored figures (count and highest
 * `_seq_no`): only those reload it. The IoCs of users' uploaded sources (user-sources.ts) are loaded
 * with them and arrive through `applied` alike. That check sorts the IoC index (200 ms at 100,000 IoCs on the
 * embedded store), so it runs at most once per `checkMillis`, not at every detector run: such
 * writes are rare, and reach matching within that time.
 */
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import { IOC_SUMMARY_ID, iocStored, sameScan, type IocScanned } from '../../content/sync/ioc-post-sync'
import { isObject } from '../../json'
import { IocIndex, type IocEntry } from './ioc-index'
import { TI_UPLOADED_IOCS_INDEX } from '../indices'
import { IndexNotFound } from '../../store/errors'

export const IOC_ALIAS = 'svc-threatintel-enrichments'
const PAGE = 5_000
/** Longest time a write the node did not see goes unnoticed (see the module comment). */
export const CHECK_MILLIS = 60_000

/** What the content sync tells of the IoCs it wrote (content/sync depends on this shape only). */
export interface IocSink {
  /** A change window written: each IoC's stored document, or null when deleted. */
  applied(written: ReadonlyMap<string, Record<string, unknown> | null>): void
  /** The set was replaced wholesale (snapshot, plan change). */
  replaced(): void
}

/** The matchable fields of a stored IoC document, or undefined. */
export function entryOf(id: string, source: Record<string, unknown> | undefined): IocEntry | undefined {
  // An uploaded source's IoCs with `enabled_for_scan: false` are kept out of matching.
  if (source?.scan === false) return undefined
  const doc = source && isObject(source.document) ? source.document : undefined
  if (!doc || typeof doc.type !== 'string' || typeof doc.name !== 'string') return undefined
  return { id, type: doc.type, value: doc.name }
}

export class SyncedIocs implements IocSink {
  private index = new IocIndex()
  /** The stored figures the index reflects; undefined until loaded (or after a replacement). */
  private reflects: IocScanned | undefined
  private loading: Promise<IocIndex> | undefined
  /** Changes written while a load runs: applied on top of it once done. */
  private pending: Array<ReadonlyMap<string, Record<string, unknown> | null>> = []

  /** When the stored figures were last compared (epoch millis). */
  private checkedAt = 0

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly opts: { alias?: string; checkMillis?: number; now?: () => number } = {},
  ) {}

  private get alias(): string {
    return this.opts.alias ?? IOC_ALIAS
  }

  /** Told of the IoCs each change window of the sync put (the retro-hunt searches stored events for them). */
  onSynced?: (iocs: IocEntry[]) => void

  applied(written: ReadonlyMap<string, Record<string, unknown> | null>): void {
    this.changed(written)
    if (!this.onSynced) return
    const put: IocEntry[] = []
    for (const [id, body] of written) {
      const entry = body ? entryOf(id, body) : undefined
      if (entry) put.push(entry)
    }
    if (put.length > 0) this.onSynced(put)
  }

  /** IoCs written (by the sync, or a user's source: then not retro-hunted) brought into the index. */
  changed(written: ReadonlyMap<string, Record<string, unknown> | null>): void {
    if (this.loading) {
      this.pending.push(written)
      return
    }
    // Not loaded yet (or replaced): the next use loads what is stored, these changes included.
    if (this.stale) return
    for (const [id, body] of written) {
      const entry = body ? entryOf(id, body) : undefined
      if (entry) this.index.put(entry)
      else this.index.remove(id)
    }
    // The figures moved with the write (the sync is the only writer): read again now, so a later
    // write the node does not see still differs from them. Until they are read, any figures pass.
    this.reflects = undefined
    const seq = ++this.applies
    void this.stored().then(
      (figures) => {
        if (seq === this.applies && figures) this.reflects = figures
      },
      () => {},
    )
  }

  /** Change windows applied so far: only the latest one's figures are kept. */
  private applies = 0

  replaced(): void {
    this.reflects = undefined
    this.stale = true
  }

  /** True once a wholesale change asks for a reload rather than a re-check of the figures. */
  private stale = true

  /** The index, loaded or brought in step first when the stored IoCs changed behind it. */
  async current(): Promise<IocIndex> {
    if (this.loading) return this.loading
    const now = (this.opts.now ?? Date.now)()
    if (!this.stale && now - this.checkedAt < (this.opts.checkMillis ?? CHECK_MILLIS)) return this.index
    this.checkedAt = now
    const stored = await this.stored()
    // No CTI IoC index (yet): uploaded sources' IoCs may still be stored, loaded once.
    if (stored === undefined && !this.stale) return this.index
    if (stored !== undefined && !this.stale && (this.reflects === undefined || sameScan(this.reflects, stored))) {
      this.reflects = stored
      return this.index
    }
    // Another run may have started the load while this one read the figures: one load serves both.
    this.loading ??= this.load().finally(() => (this.loading = undefined))
    return this.loading
  }

  private async stored(): Promise<IocScanned | undefined> {
    try {
      return await iocStored(this.store, this.alias)
    } catch {
      // No IoC index (yet): nothing to match.
      return undefined
    }
  }

  private async loadFrom(index: string, next: IocIndex): Promise<void> {
    let after: unknown[] | undefined
    for (;;) {
      let hits
      try {
        const r = await this.store.search({
          index,
          expand_wildcards: 'all',
          body: {
            query: { bool: { must_not: [{ ids: { values: [IOC_SUMMARY_ID] } }] } },
            sort: [{ _seq_no: { order: 'asc' } }],
            track_total_hits: false,
            size: PAGE,
            _source: ['document.name', 'document.type', 'scan'],
            ...(after ? { search_after: after } : {}),
          },
        })
        hits = r.hits.hits
      } catch (e) {
        // No IoCs of that kind stored yet.
        if (e instanceof IndexNotFound) return
        throw e
      }
      for (const h of hits) {
        const entry = entryOf(h._id, h._source)
        if (entry) next.put(entry)
      }
      if (hits.length < PAGE) return
      after = hits[hits.length - 1].sort
    }
  }

  private async load(): Promise<IocIndex> {
    const started = Date.now()
    const next = new IocIndex()
    const before = await this.stored()
    for (const index of [this.alias, TI_UPLOADED_IOCS_INDEX]) await this.loadFrom(index, next)
    for (const written of this.pending.splice(0))
      for (const [id, body] of written) {
        const entry = body ? entryOf(id, body) : undefined
        if (entry) next.put(entry)
        else next.remove(id)
      }
    this.index = next
    this.reflects = before
    this.stale = false
    this.log.info('IoC index loaded', { iocs: next.size, millis: Date.now() - started })
    return next
  }
}

/**
 * Document-level security on threat-intel findings and alerts (svc-ext; the peer reads them with
 * the plugin's own rights). A finding names the events that held the IoC value (`docId:index`), an
 * alert the same events (`docId|index`): a caller whose roles filter an events index sees a finding
 * or alert only when it may read at least one of the events named, and sees only those among them,
 * as a search of that index would show them. The filter of a named index is its concrete indices'
 * DLS queries combined as the index API combines them (indexer/dls.ts).
 */
import { combinedDocumentFilter } from '../../indexer/dls'
import { IndexNotFound } from '../../store/errors'
import type { Query, Store } from '../../store/port'

export type DocumentFilterOf = (index: string) => Query | undefined

/** Ids checked per search. */
const PAGE = 1_000
/** An event as a finding or alert names it: `<docId><sep><index>`, the index after the last separator. */
export const eventRef = (ref: string, sep: ':' | '|') => {
  const at = ref.lastIndexOf(sep)
  return { id: ref.slice(0, at), index: ref.slice(at + 1) }
}

/** One request's view of the events its caller may read; filters and answers are kept for the request. */
export class ReadableEvents {
  private readonly filters = new Map<string, Promise<Query | 'none' | undefined>>()
  private readonly known = new Map<string, boolean>()

  constructor(
    private readonly store: Store,
    private readonly filterOf: DocumentFilterOf,
  ) {}

  /** The DLS filter of a named index; `none` when it names nothing any more and a filter applies to the name. */
  private filter(index: string): Promise<Query | 'none' | undefined> {
    let f = this.filters.get(index)
    if (!f) {
      f = this.store.resolve(index, { expand_wildcards: 'all' }).then(
        (concrete) => combinedDocumentFilter(this.filterOf, concrete),
        (e) => {
          if (!(e instanceof IndexNotFound)) throw e
          return this.filterOf(index) === undefined ? undefined : 'none'
        },
      )
      this.filters.set(index, f)
    }
    return f
  }

  /** True when no named index filters what the caller reads (nothing to check). */
  async unrestricted(refs: Array<{ index: string }>): Promise<boolean> {
    for (const index of new Set(refs.map((r) => r.index))) if ((await this.filter(index)) !== undefined) return false
    return true
  }

  /** Which of the events the caller may read (keys `index\0id`). */
  async readable(refs: Array<{ id: string; index: string }>): Promise<Set<string>> {
    const key = (r: { id: string; index: string }) => `${r.index}\0${r.id}`
    const byIndex = new Map<string, string[]>()
    for (const r of refs) {
      if (this.known.has(key(r))) continue
      const ids = byIndex.get(r.index)
      if (ids) ids.push(r.id)
      else byIndex.set(r.index, [r.id])
    }
    for (const [index, ids] of byIndex) {
      const filter = await this.filter(index)
      const unique = [...new Set(ids)]
      if (filter === undefined || filter === 'none') {
        for (const id of unique) this.known.set(`${index}\0${id}`, filter === undefined)
        continue
      }
      for (let at = 0; at < unique.length; at += PAGE) {
        const page = unique.slice(at, at + PAGE)
        for (const id of page) this.known.set(`${index}\0${id}`, false)
        const r = await this.store.search({
          index,
          ignore_unavailable: true,
          allow_no_indices: true,
          expand_wildcards: 'all',
          body: { size: page.length, _source: false, query: { bool: { filter: [{ ids: { values: page } }, filter] } } },
        })
        for (const h of r.hits.hits) this.known.set(`${index}\0${h._id}`, true)
      }
    }
    return new Set(refs.filter((r) => this.known.get(key(r))).map(key))
  }

  /** The refs (in `sep` form) the caller may read, in their order. */
  async keep(refs: string[], sep: ':' | '|'): Promise<string[]> {
    const parsed = refs.map((r) => eventRef(r, sep))
    const ok = await this.readable(parsed)
    return refs.filter((_, i) => ok.has(`${parsed[i].index}\0${parsed[i].id}`))
  }
}

/** How many matches a list under DLS reads to find the caller's (the search window of a list's pages). */
export const READABLE_WINDOW = 10_000

/**
 * The page of a list under DLS: `matches` are the query's hits in its order (up to the window), with
 * their refs; a hit is the caller's when one of its events is. `undefined` when nothing they name is
 * filtered for the caller (the list is read as it is).
 */
export async function readablePage(
  events: ReadableEvents,
  matches: Array<{ _id: string; _source?: Record<string, unknown> }>,
  sep: ':' | '|',
  window: { from: number; size: number },
): Promise<{ total: number; ids: string[] } | undefined> {
  const refsOf = (h: { _source?: Record<string, unknown> }) =>
    (Array.isArray(h._source?.related_doc_ids) ? (h._source.related_doc_ids as unknown[]) : []).map((r) => eventRef(String(r), sep))
  const all = matches.flatMap(refsOf)
  if (await events.unrestricted(all)) return undefined
  const ok = await events.readable(all)
  const visible = matches.filter((h) => refsOf(h).some((r) => ok.has(`${r.index}\0${r.id}`)))
  return { total: visible.length, ids: visible.slice(window.from, window.from + window.size).map((h) => h._id) }
}

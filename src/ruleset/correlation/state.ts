/**
 * Correlation windows kept in the Store (`.platform-sap-correlation-state`), one document per
 * (detector, correlation rule, group): they survive restarts and every node reads the same ones.
 * Writes are conditional on the version read (`if_seq_no`/`if_primary_term`, or create-only for a
 * new group), so two nodes can never overwrite each other's events; the loser re-reads and merges.
 */
import type { BulkLine, Store } from '../../store/port'
import { CORRELATION_STATE_INDEX, ensureIndex } from '../indices'
import type { GroupStore, StoredGroup } from './engine'
import type { GroupWindow } from './window'

interface StateDoc {
  scope: string
  rule: string
  /** The group values as JSON text: user field names must not become mapping fields. */
  group: string
  newest: number
  window: GroupWindow
}

interface Version {
  seqNo: number
  primaryTerm: number
}

/** Groups read per search (the platform's default `index.max_result_window`). */
const LOAD_PAGE = 10_000

export class StoreGroups implements GroupStore {
  constructor(private readonly store: Store) {}

  async load(keys: string[]): Promise<Map<string, StoredGroup>> {
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const out = new Map<string, StoredGroup>()
    for (let at = 0; at < keys.length; at += LOAD_PAGE) {
      const ids = keys.slice(at, at + LOAD_PAGE)
      const r = await this.store.search({
        index: CORRELATION_STATE_INDEX,
        body: { size: ids.length, query: { ids: { values: ids } }, seq_no_primary_term: true, track_total_hits: false },
      })
      for (const h of r.hits.hits) {
        const doc = h._source as unknown as StateDoc
        out.set(h._id, { window: doc.window, version: { seqNo: h._seq_no!, primaryTerm: h._primary_term! } satisfies Version })
      }
    }
    return out
  }

  async save(entries: Parameters<GroupStore['save']>[0]): Promise<string[]> {
    if (entries.length === 0) return []
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const body: BulkLine[] = []
    for (const e of entries) {
      const v = e.stored.version as Version | undefined
      const meta = { _index: CORRELATION_STATE_INDEX, _id: e.key }
      body.push(v ? { index: { ...meta, if_seq_no: v.seqNo, if_primary_term: v.primaryTerm } } : { create: meta })
      const events = e.stored.window.events
      const doc: StateDoc = {
        scope: e.scope,
        rule: e.rule,
        group: JSON.stringify(e.group),
        newest: events.length ? events[events.length - 1].t : 0,
        window: e.stored.window,
      }
      body.push(doc as unknown as BulkLine)
    }
    const r = await this.store.bulk({ body, refresh: true })
    const lost: string[] = []
    r.items.forEach((item, i) => {
      const res = item.index ?? item.create
      if (!res) return
      if (res.status === 409) lost.push(entries[i].key)
      else if (res.status >= 300) throw new Error(`correlation state write failed: ${JSON.stringify(res.error ?? res.status)}`)
    })
    return lost
  }

  /** Drops the groups of `scope` whose newest event is older than `before` (their windows are over). */
  async prune(scope: string, rule: string, before: number): Promise<number> {
    await ensureIndex(this.store, CORRELATION_STATE_INDEX)
    const r = await this.store.search({
      index: CORRELATION_STATE_INDEX,
      body: {
        size: LOAD_PAGE,
        _source: false,
        query: { bool: { filter: [{ term: { scope } }, { term: { rule } }, { range: { newest: { lt: before } } }] } },
        track_total_hits: false,
      },
    })
    if (r.hits.hits.length === 0) return 0
    await this.store.bulk({ body: r.hits.hits.map((h) => ({ delete: { _index: CORRELATION_STATE_INDEX, _id: h._id } })), refresh: true })
    return r.hits.hits.length
  }
}

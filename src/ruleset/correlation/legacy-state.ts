/**
 * Correlation windows written by versions before 245b015 (one set of 64 bucket documents per
 * detector and correlation rule, groups as plain JSON): converted into the current buckets the
 * first time a run of the detector reads its windows, so a correlation in progress across an
 * upgrade still fires and the old documents do not stay behind.
 *
 * Remove this module (and its call in `StoreGroups.load`) once no supported upgrade path starts
 * from a version that wrote this format: every detector that ran once on a newer version has
 * converted its own documents by then (those of a deleted detector are left, as before).
 *
 * Safe for two nodes converting at once: the old documents are deleted only after their windows
 * are written into the new buckets (conditionally, a conflict re-reads and merges), merging a
 * window twice changes nothing, and a delete is conditional on the version read, so an old node
 * still writing to a document during a rolling upgrade makes it be converted again, not lost.
 */
import type { BulkLine, Store } from '../../store/port'
import { CORRELATION_STATE_INDEX } from '../indices'
import { groupDocId } from './engine'
import { type GroupWindow, MAX_GROUP_EVENTS, type WindowEvent } from './window'

/** Old documents read at once: each may hold up to 10,000 windows. */
export const LEGACY_PAGE = 16

/** What the conversion needs of a correlation rule: its group key and its timespan (for pruning). */
export interface LegacyRule {
  id: string
  groupBy: string[]
  timespanMs: number
}

/** A converted window, under its current key. */
export interface ConvertedGroup {
  key: string
  span: number
  group: Record<string, string>
  window: GroupWindow
}

/** The old document, as the old version wrote it. */
interface LegacyDoc {
  scope: string
  rule: string
  newest: number
  /** `group` is the group values as JSON text. */
  groups: Array<{ key: string; group: string; window: LegacyWindow }>
}

interface LegacyWindow {
  indices: string[]
  events: Array<[number, number, number, string, (string | null)?, (string | null)?, (string | null)?]>
  emitted: Array<[number, string]>
}

const isLegacy = (doc: Record<string, unknown>): doc is LegacyDoc & Record<string, unknown> =>
  Array.isArray(doc.groups) && typeof doc.rule === 'string' && doc.windows === undefined

function decode(w: LegacyWindow): GroupWindow {
  const events = w.events.map(([t, r, i, d, v, f, k]): WindowEvent => {
    const index = w.indices[i]
    return { t, r, i: index, d, k: k ?? `${index}/${d}`, ...(v == null ? {} : { v }), ...(f == null ? {} : { f }) }
  })
  return { events, emitted: w.emitted.map(([t, k]) => ({ t, k })) }
}

/** One window from both: events and anchors by key, so merging the same window again changes nothing. */
export function mergeWindows(a: GroupWindow, b: GroupWindow): GroupWindow {
  const events = new Map<string, WindowEvent>()
  for (const e of [...a.events, ...b.events]) events.set(e.k, e)
  const emitted = new Map<string, { t: number; k: string }>()
  for (const f of [...a.emitted, ...b.emitted]) emitted.set(f.k, f)
  const sorted = [...events.values()].sort((x, y) => x.t - y.t || (x.k < y.k ? -1 : x.k > y.k ? 1 : 0))
  return { events: sorted.slice(-MAX_GROUP_EVENTS), emitted: [...emitted.values()].sort((x, y) => x.t - y.t) }
}

/**
 * Converts the old documents of detector `scope`, a page at a time: `absorb` must merge a page's
 * windows into the current buckets (throwing when it cannot), after which the page is deleted.
 * Windows of rules the detector no longer has, or whose group-by changed, can no longer fire and
 * are dropped with their document.
 */
export async function convertLegacy(
  store: Store,
  scope: string,
  rules: LegacyRule[],
  absorb: (groups: ConvertedGroup[]) => Promise<void>,
): Promise<void> {
  const byId = new Map(rules.map((r) => [r.id, r]))
  // Left for a later run (changed under us, or not in the old shape); also keeps the loop finite.
  const skipped: string[] = []
  for (;;) {
    const r = await store.search({
      index: CORRELATION_STATE_INDEX,
      body: {
        size: LEGACY_PAGE,
        // Only old documents have `rule` (mapped keyword); current buckets hold every rule.
        query: { bool: { filter: [{ term: { scope } }, { exists: { field: 'rule' } }], must_not: [{ ids: { values: skipped } }] } },
        seq_no_primary_term: true,
        track_total_hits: false,
      },
    })
    const hits = r.hits.hits
    if (hits.length === 0) return
    const groups: ConvertedGroup[] = []
    const done: BulkLine[] = []
    for (const h of hits) {
      const doc = h._source ?? {}
      if (!isLegacy(doc)) {
        skipped.push(h._id)
        continue
      }
      const rule = byId.get(doc.rule)
      if (rule) for (const g of doc.groups) groups.push(...convert(scope, rule, g))
      done.push({ delete: { _index: CORRELATION_STATE_INDEX, _id: h._id, if_seq_no: h._seq_no, if_primary_term: h._primary_term } })
    }
    if (groups.length > 0) await absorb(groups)
    if (done.length === 0) continue
    const deleted = await store.bulk({ body: done, refresh: true })
    deleted.items.forEach((item, i) => {
      const res = item.delete
      if (!res || res.status < 300 || res.status === 404) return
      // Changed since read (an old node still running) or already gone: the next run looks again.
      if (res.status === 409) skipped.push((done[i].delete as { _id: string })._id)
      else throw new Error(`old correlation state delete failed: ${JSON.stringify(res.error ?? res.status)}`)
    })
  }
}

function convert(scope: string, rule: LegacyRule, g: LegacyDoc['groups'][number]): ConvertedGroup[] {
  const stored = JSON.parse(g.group) as Record<string, string>
  const fields = Object.keys(stored)
  if (fields.length !== rule.groupBy.length || rule.groupBy.some((f) => typeof stored[f] !== 'string')) return []
  const group = Object.fromEntries(rule.groupBy.map((f) => [f, stored[f]]))
  // The key the engine computes for these group values (engine.ts, `Correlator.run`).
  const key = groupDocId(scope, rule.id, JSON.stringify(rule.groupBy.map((f) => group[f])))
  return [{ key, span: rule.timespanMs, group, window: decode(g.window) }]
}

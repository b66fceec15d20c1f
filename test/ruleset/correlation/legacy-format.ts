/**
 * Correlation state as the versions before 245b015 wrote it: a copy of their encoder and document
 * layout (src/ruleset/correlation/state.ts and engine.ts at a3495fa), kept apart from the current
 * code so the upgrade tests write exactly what an old node left in the Store.
 */
import type { Store } from '../../../src/store/port'
import { CORRELATION_STATE_INDEX, ensureIndex } from '../../../src/ruleset/indices'

interface OldWindowEvent {
  t: number
  k: string
  r: number
  v?: string
  f?: string
  i: string
  d: string
}

interface OldWindow {
  events: OldWindowEvent[]
  emitted: Array<{ t: number; k: string }>
}

const BUCKETS = 64

function hash(text: string): string {
  const h = new Bun.CryptoHasher('sha256')
  h.update(text)
  return h.digest('base64url').slice(0, 32)
}

const groupDocId = (scope: string, ruleId: string, groupKey: string) => `${hash(`${scope}\u0000${ruleId}`)}.${hash(groupKey)}`

const bucketOf = (key: string) => {
  const dot = key.indexOf('.')
  return `${key.slice(0, dot)}.${key.charCodeAt(dot + 1) % BUCKETS}`
}

function encode(w: OldWindow) {
  const indices: string[] = []
  const at = new Map<string, number>()
  const events = w.events.map((e) => {
    let i = at.get(e.i)
    if (i === undefined) at.set(e.i, (i = indices.push(e.i) - 1))
    const tail = [e.v ?? null, e.f ?? null, e.k === `${e.i}/${e.d}` ? null : e.k]
    while (tail.length > 0 && tail[tail.length - 1] === null) tail.pop()
    return [e.t, e.r, i, e.d, ...tail]
  })
  return { indices, events, emitted: w.emitted.map((f) => [f.t, f.k]) }
}

/**
 * Writes the windows of one (detector, rule) as the old version did; `groupBy` orders the values
 * as its engine did. Answers the ids of the documents written.
 */
export async function writeOldState(
  store: Store,
  scope: string,
  ruleId: string,
  groupBy: string[],
  groups: Array<{ group: Record<string, string>; window: OldWindow }>,
): Promise<string[]> {
  await ensureIndex(store, CORRELATION_STATE_INDEX)
  const docs = new Map<string, { scope: string; rule: string; newest: number; groups: unknown[] }>()
  for (const { group, window } of groups) {
    const key = groupDocId(scope, ruleId, JSON.stringify(groupBy.map((g) => group[g])))
    const id = bucketOf(key)
    const doc = docs.get(id) ?? { scope, rule: ruleId, newest: -Infinity, groups: [] }
    doc.newest = Math.max(doc.newest, window.events.at(-1)?.t ?? -Infinity)
    doc.groups.push({ key, group: JSON.stringify(group), window: encode(window) })
    docs.set(id, doc)
  }
  const body = [...docs].flatMap(([id, doc]) => [{ create: { _index: CORRELATION_STATE_INDEX, _id: id } }, doc])
  const r = await store.bulk({ body, refresh: true })
  if (r.errors) throw new Error(`old state not written: ${JSON.stringify(r.items)}`)
  return [...docs.keys()]
}

/** Events of one old window: `ids` matched reference 0 at the given times, in index `logs`. */
export const oldWindow = (events: Array<[id: string, t: number]>): OldWindow => ({
  events: events.map(([d, t]) => ({ t, k: `logs/${d}`, r: 0, i: 'logs', d })),
  emitted: [],
})

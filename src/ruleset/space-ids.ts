/**
 * Primary ids per space (spec background 7): standard-space documents keep the CTI document id as
 * `_id`; draft, test and custom documents get their own UUID and record the CTI id (and space),
 * so the same CTI document can live in several spaces at once.
 */
import type { Store } from '../store/port'
import type { Space } from './model'

export interface SpaceKey {
  index: string
  /** Path prefix of the wrapped document (`rule.`) or '' for unwrapped ones. */
  prefix: string
}

/** The `_id` under which the CTI document `ctiId` of `space` is (or will be) stored. */
export async function spaceDocId(store: Store, key: SpaceKey, space: Space, ctiId: string): Promise<{ id: string; exists: boolean }> {
  if (space === 'standard') {
    const got = await store.get({ index: key.index, id: ctiId })
    return { id: ctiId, exists: got.found }
  }
  const found = await findInSpace(store, key, space, [ctiId])
  const hit = found.get(ctiId)
  return hit ? { id: hit, exists: true } : { id: crypto.randomUUID(), exists: false }
}

/** CTI id -> `_id` for the given CTI ids of one space. */
export async function findInSpace(store: Store, key: SpaceKey, space: Space, ctiIds: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  if (ctiIds.length === 0) return out
  const r = await store.search({
    index: key.index,
    body: {
      size: ctiIds.length * 2,
      _source: [`${key.prefix}document.id`],
      query: { bool: { filter: [{ terms: { [`${key.prefix}document.id`]: ctiIds } }, { term: { [`${key.prefix}space`]: space } }] } },
    },
  })
  for (const h of r.hits.hits) {
    const src = h._source as Record<string, any>
    const doc = key.prefix ? src[key.prefix.slice(0, -1)]?.document : src.document
    if (doc?.id && !out.has(doc.id)) out.set(doc.id, h._id)
  }
  return out
}

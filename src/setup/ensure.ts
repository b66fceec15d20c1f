import { AlreadyExists } from '../store/errors'
import type { Store } from '../store/port'
import type { PlainIndexDef } from './indices'

/** Creates a plain index from its definition unless it exists; losing a creation race is fine. */
export async function ensureIndex(store: Store, d: PlainIndexDef): Promise<void> {
  if (await store.existsIndex({ index: d.name, expand_wildcards: 'all' })) return
  try {
    await store.createIndex({ index: d.name, body: d.body })
  } catch (e) {
    if (!(e instanceof AlreadyExists)) throw e
  }
}

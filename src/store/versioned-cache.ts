import { Lru } from '../lru'

/**
 * Values read from a store, kept while what they were read from is unchanged: a call that reads
 * the same content again and again (logtest reads an integration, its rules, the stored filters
 * and a log type per call) reads it once. The version is most often the store's `writeMark` of
 * the indices read; a store that cannot give one (the platform store: other nodes write too) gets
 * every read done afresh unless the caller has another version to offer.
 */
export class VersionedCache<V> {
  private readonly entries: Lru<string, { version: string; value: V }>

  /** `maxEntries`: entries kept; past it the least recently used goes. */
  constructor(maxEntries: number) {
    this.entries = new Lru(maxEntries)
  }

  /**
   * The value kept for `key` at `version`, else `load()`'s (kept when there is a version). Take the
   * version before loading: a write while `load` reads then moves it, and the next call loads again.
   */
  async get(version: string | undefined, key: string, load: () => Promise<V>): Promise<V> {
    if (version === undefined) return load()
    const hit = this.entries.get(key)
    if (hit?.version === version) return hit.value
    const value = await load()
    this.entries.set(key, { version, value })
    return value
  }
}

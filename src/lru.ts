/**
 * A map of at most `maxEntries` entries that drops its least recently used one first: Map keeps
 * insertion order, so a read or a write moves its key to the end and the first key is the oldest.
 * Every bounded cache of the node is one (an entry count is its limit; expiry and versions are
 * its callers').
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>()

  constructor(readonly maxEntries: number) {}

  get size(): number {
    return this.entries.size
  }

  has(key: K): boolean {
    return this.entries.has(key)
  }

  /** The value of `key`, which becomes the most recently used. */
  get(key: K): V | undefined {
    if (!this.entries.has(key)) return undefined
    const value = this.entries.get(key)!
    this.entries.delete(key)
    this.entries.set(key, value)
    return value
  }

  /** Sets `key` as the most recently used; past `maxEntries` the least recently used goes. */
  set(key: K, value: V): void {
    this.entries.delete(key)
    this.entries.set(key, value)
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!)
  }

  delete(key: K): boolean {
    return this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}

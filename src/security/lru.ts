/**
 * A bounded map with per-entry expiry: Map keeps insertion order, so the
 * first key is the least recently used once every hit re-inserts its key.
 */
export class ExpiringLru<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>()

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number,
  ) {}

  get size(): number {
    return this.entries.size
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key)
    if (!e) return undefined
    if (e.expires <= this.now()) {
      this.entries.delete(key)
      return undefined
    }
    this.entries.delete(key)
    this.entries.set(key, e)
    return e.value
  }

  set(key: string, value: V, ttlMs: number): void {
    if (this.maxEntries <= 0 || ttlMs <= 0) return
    this.entries.delete(key)
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next().value as string
      this.entries.delete(oldest)
    }
    this.entries.set(key, { value, expires: this.now() + ttlMs })
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}

import { Lru } from '../lru'

/** A bounded map (src/lru.ts) whose entries also expire: a read past its time finds nothing. */
export class ExpiringLru<V> {
  private readonly entries: Lru<string, { value: V; expires: number }>

  constructor(
    maxEntries: number,
    private readonly now: () => number,
  ) {
    this.entries = new Lru(maxEntries)
  }

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
    return e.value
  }

  set(key: string, value: V, ttlMs: number): void {
    if (this.entries.maxEntries <= 0 || ttlMs <= 0) return
    this.entries.set(key, { value, expires: this.now() + ttlMs })
  }

  delete(key: string): void {
    this.entries.delete(key)
  }

  clear(): void {
    this.entries.clear()
  }
}

/**
 * What searches read from an index and may read again, kept until the index's next write
 * (IndexMeta.writes, which a rolled-back write moves too): planner row counts, the matches of
 * conjunctions, the answers of size-0 requests; field columns until its next update or deletion
 * (IndexMeta.rewrites: they grow with added documents). Each kind has its budget of cells over
 * every index; past it the least recently used entries go first.
 */
import type { IndexMeta } from './catalog'

interface Entry<T> {
  value: T
  cells: number
}

/** A number per index object (an index deleted and made again may get the same `ix`). */
const ids = new WeakMap<IndexMeta, number>()
let lastId = 0
const idOf = (meta: IndexMeta, key: string) => {
  let id = ids.get(meta)
  if (id === undefined) ids.set(meta, (id = ++lastId))
  return `${id}\u0000${key}`
}

export class IndexCaches<T> {
  private readonly byIndex = new Map<IndexMeta, { writes: number; entries: Map<string, Entry<T>> }>()
  /** Every entry, least recently used first. */
  private readonly lru = new Map<string, { meta: IndexMeta; key: string }>()
  private cells = 0

  /** `version`: what must not have moved since an entry was kept (by default the index's writes). */
  constructor(
    private readonly budget: number,
    private readonly version: (meta: IndexMeta) => number = (meta) => meta.writes ?? 0,
  ) {}

  get(meta: IndexMeta, key: string): T | undefined {
    const entry = this.current(meta)?.get(key)
    if (!entry) return undefined
    const id = idOf(meta, key)
    const used = this.lru.get(id)!
    this.lru.delete(id)
    this.lru.set(id, used)
    return entry.value
  }

  /** The entry for `key`, made by `make` (and kept, `cells` of it) when there is none. */
  remember(meta: IndexMeta, key: string, make: () => T, cells: (value: T) => number = () => 1): T {
    const known = this.get(meta, key)
    if (known !== undefined) return known
    const value = make()
    return this.set(meta, key, value, cells(value))
  }

  set(meta: IndexMeta, key: string, value: T, cells = 1): T {
    if (cells > this.budget) return value
    this.forget(meta, key)
    let entries = this.current(meta)
    if (!entries) this.byIndex.set(meta, { writes: this.version(meta), entries: (entries = new Map()) })
    entries.set(key, { value, cells })
    this.lru.set(idOf(meta, key), { meta, key })
    this.cells += cells
    for (const old of this.lru.values()) {
      if (this.cells <= this.budget) break
      this.forget(old.meta, old.key)
    }
    return value
  }

  /** The index's entries if no write came since they were read (older ones are dropped). */
  private current(meta: IndexMeta): Map<string, Entry<T>> | undefined {
    const kept = this.byIndex.get(meta)
    if (kept && kept.writes !== this.version(meta)) for (const key of [...kept.entries.keys()]) this.forget(meta, key)
    return this.byIndex.get(meta)?.entries
  }

  private forget(meta: IndexMeta, key: string): void {
    const kept = this.byIndex.get(meta)
    const entry = kept?.entries.get(key)
    if (!kept || !entry) return
    kept.entries.delete(key)
    if (kept.entries.size === 0) this.byIndex.delete(meta)
    this.lru.delete(idOf(meta, key))
    this.cells -= entry.cells
  }
}

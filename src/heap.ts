/**
 * A long job that allocates a lot per item (a detector run's findings, a thread's parsed events)
 * lets JavaScriptCore's heap grow far past what it keeps alive: what survived a young collection
 * is old and waits for the next full one, which comes late. `HeapGrowth` collects fully once the
 * heap has grown by `limit` bytes since the last full collection, so such a job peaks at what it
 * keeps plus `limit`, whatever its rate. A full collection costs in proportion to what is live
 * (1M IoCs held for threat intel are some 170 MiB), so the allowed growth is also at least a
 * quarter of what the last one left: the collections' cost per byte allocated stays bounded
 * whatever the node holds. `heapSize()` reads a counter (no walk), so it is cheap to ask after
 * every batch.
 */
import { heapSize } from 'bun:jsc'

/** The growth allowed over what the last full collection left, as a share of it. */
const GROWTH_SHARE = 0.25

export class HeapGrowth {
  private base: number

  constructor(
    private readonly limit: number,
    private readonly size: () => number = heapSize,
    private readonly collect: () => void = () => Bun.gc(true),
  ) {
    this.base = size()
  }

  /** Collects when the heap grew past the allowance since the last collection; true when it did. */
  check(): boolean {
    if (this.size() - this.base < Math.max(this.limit, this.base * GROWTH_SHARE)) return false
    this.collect()
    this.base = this.size()
    return true
  }
}

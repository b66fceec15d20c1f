/**
 * A long job that allocates a lot per item (a detector run's findings, a thread's parsed events)
 * lets JavaScriptCore's heap grow far past what it keeps alive: what survived a young collection
 * is old and waits for the next full one, which comes late. `HeapGrowth` collects fully once the
 * heap has grown by `limit` bytes since the last full collection, so such a job peaks at what it
 * keeps plus `limit`, whatever its rate. A full collection costs in proportion to what is live
 * (1M IoCs held for threat intel are some 170 MiB), so the allowed growth is also at least a
 * quarter of what the last one left: the collections' cost per byte allocated stays bounded
 * whatever the node holds. `heapSize()` is not free: it counts the live cells of every block
 * allocated since the last collection (0.4-1.8 ms on a detector run's node thread, 40-80 ms over a
 * 100k-event run asked after every batch), so a caller that knows what it allocated says so and the
 * heap is read once per eighth of the allowance.
 */
import { heapSize } from 'bun:jsc'

/** The growth allowed over what the last full collection left, as a share of it. */
const GROWTH_SHARE = 0.25

/** Share of the allowance a caller's own count of bytes allocated reaches before the heap is read. */
const READ_EVERY = 1 / 8
/** Calls with a count after which the heap is read anyway (what the caller does not count still shows). */
const READ_CALLS = 4

export class HeapGrowth {
  private base: number
  /** What callers said they allocated since the heap was last read, in how many calls. */
  private allocated = 0
  private calls = 0

  constructor(
    private readonly limit: number,
    private readonly size: () => number = heapSize,
    private readonly collect: () => void = () => Bun.gc(true),
  ) {
    this.base = size()
  }

  /**
   * Collects when the heap grew past the allowance since the last collection; true when it did.
   * With `allocated` (what the caller allocated since its last call, in bytes, an estimate), the
   * heap is read only once those add up to an eighth of the allowance, or at every READ_CALLS-th call.
   */
  check(allocated?: number): boolean {
    if (allocated !== undefined) {
      this.allocated += allocated
      if (this.allocated < this.limit * READ_EVERY && ++this.calls < READ_CALLS) return false
      this.allocated = 0
      this.calls = 0
    }
    if (this.size() - this.base < Math.max(this.limit, this.base * GROWTH_SHARE)) return false
    this.collect()
    this.base = this.size()
    return true
  }
}

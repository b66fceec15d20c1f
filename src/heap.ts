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

/**
 * JavaScriptCore paces its collections by the cells its heap allocates, but most of what a busy
 * node thread drops lives beside them: the texts of sources read and written, findings' JSON, the
 * strings of the rows it reads. Those are freed only once a collection finds their cells dead, so
 * between its own collections they were kept, and new memory taken for the next ones (a detector
 * run of 2,407 SigmaHQ rules over 100k events peaked at 435-451 MiB of RSS, 373-377 MiB with a
 * young collection every 100 ms, at the same CPU; 1,000 rules 293-300 MiB, 266-270). The end of
 * each unit of work (a request answered, a bulk of findings written) asks for one; it runs when the
 * last is `every` ms old, so an idle node runs none and a busy one about ten a second.
 */
export class YoungCollections {
  private last = -Infinity

  constructor(
    private readonly every = 100,
    private readonly now: () => number = () => performance.now(),
    private readonly collect: () => void = () => Bun.gc(false),
  ) {}

  /** Collects the young objects when the last such collection is `every` ms old; true when it did. */
  due(): boolean {
    const now = this.now()
    if (now - this.last < this.every) return false
    this.last = now
    this.collect()
    return true
  }
}

/** This thread's (each worker has its own module instance). */
export const youngCollections = new YoungCollections()

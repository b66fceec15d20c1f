/**
 * A long job that allocates a lot per item (a detector run's findings, a thread's parsed events)
 * lets JavaScriptCore's heap grow far past what it keeps alive: what survived a young collection
 * is old and waits for the next full one, which comes late. `HeapGrowth` collects fully once the
 * heap has grown by `limit` bytes since the last full collection, so such a job peaks at what it
 * keeps plus `limit`, whatever its rate. `heapSize()` reads a counter (no walk), so it is cheap
 * to ask after every batch.
 */
import { heapSize } from 'bun:jsc'

export class HeapGrowth {
  private base = heapSize()

  constructor(private readonly limit: number) {}

  /** Collects when the heap grew past the limit since the last collection; true when it did. */
  check(): boolean {
    if (heapSize() - this.base < this.limit) return false
    Bun.gc(true)
    this.base = heapSize()
    return true
  }
}

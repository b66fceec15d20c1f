/**
 * Fair share of the one event loop: a search that evaluates many documents gives the loop back
 * every `sliceMs` of work (so `GET /` and other requests keep being served while it runs), and
 * stops at its deadline (the `timeout` of the request, else `search.default_search_timeout`).
 */
export const SLICE_MS = 5

export class Pacer {
  private sliceStart = performance.now()
  private readonly deadline: number
  timedOut = false

  /** `timeoutMs` < 0 or undefined: no deadline (OpenSearch's default `-1`). */
  constructor(
    timeoutMs?: number,
    private readonly sliceMs = SLICE_MS,
  ) {
    this.deadline = timeoutMs === undefined || timeoutMs < 0 ? Infinity : this.sliceStart + timeoutMs
  }

  /** Called per document: one clock read (tens of ns, against microseconds of parsing a row). */
  due(): boolean {
    const now = performance.now()
    return now - this.sliceStart >= this.sliceMs || now >= this.deadline
  }

  /** Yield to the event loop; answers false once the deadline has passed (the caller stops there). */
  async pause(): Promise<boolean> {
    if (performance.now() >= this.deadline) {
      this.timedOut = true
      return false
    }
    await new Promise<void>((resolve) => setImmediate(resolve))
    this.sliceStart = performance.now()
    if (performance.now() >= this.deadline) {
      this.timedOut = true
      return false
    }
    return true
  }

  /** The work was waiting anyway (requests had their turn meanwhile): its next slice starts now. */
  resumed(): void {
    this.sliceStart = performance.now()
  }
}

/** Yields once, unconditionally (between pages, archive slices, windows). */
export const yieldToLoop = (): Promise<void> => new Pacer().pause().then(() => undefined)

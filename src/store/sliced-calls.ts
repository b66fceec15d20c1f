/**
 * Store calls over many items, in slices that hold this thread about `sliceMs` each, one slice per
 * event-loop turn across every caller sharing the instance (requests are served in between). A
 * store that works on this thread (the embedded one) holds it for the whole call: a bulk of 100
 * findings took 100-180 ms on a loaded machine, and a `GET` waited behind it. Items per slice are
 * learned from the time the last call held the thread (a few until then); a remote store returns
 * at once, so its slices grow to `max` items.
 */
export class SlicedCalls {
  private items: number
  private turns: Promise<void> = Promise.resolve()

  constructor(
    private readonly sliceMs = 10,
    first = 10,
  ) {
    this.items = first
  }

  /** `call` on consecutive slices of `list` (at most `max` items each), their answers in order. */
  async run<T, R>(list: T[], max: number, call: (slice: T[], last: boolean) => Promise<R[]>): Promise<R[]> {
    const out: R[] = []
    for (let at = 0; at < list.length;) {
      const slice = list.slice(at, at + Math.min(max, this.items))
      at += slice.length
      await (this.turns = turnAfter(this.turns))
      const started = performance.now()
      const answer = call(slice, at >= list.length)
      // The time until the call returns is the time it held this thread (all of it, for a store that works here).
      const held = performance.now() - started
      this.items = Math.max(1, Math.floor((slice.length * this.sliceMs) / Math.max(held, 0.01)))
      out.push(...(await answer))
    }
    return out
  }
}

/** Resolves on an event-loop turn of its own, after every earlier caller's. */
function turnAfter(previous: Promise<void>): Promise<void> {
  return previous.then(() => new Promise<void>((resolve) => setImmediate(resolve)))
}

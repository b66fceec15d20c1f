// Long sync loops hand the event loop back so the node keeps answering requests while it syncs:
// awaiting a settled promise (or an embedded-store call, which runs synchronously) does not, only
// a macrotask does. The mechanism is the store's fair-share Pacer (no deadline here); sync loops
// take a slice of 10 ms, twice a search's, since each step (a bulk) is larger.
import { Pacer, yieldToLoop } from '../../store/embedded/pacer'

export const SLICE_MILLIS = 10

/** A function to call per item: it yields once `sliceMs` of work has been done since the last yield. */
export function pacer(sliceMs = SLICE_MILLIS): () => Promise<void> | undefined {
  const p = new Pacer(undefined, sliceMs)
  return () => (p.due() ? p.pause().then(() => undefined) : undefined)
}

export { yieldToLoop }

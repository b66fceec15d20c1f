// Long sync loops hand the event loop back so the node keeps answering requests while it syncs:
// awaiting a settled promise (or an embedded-store call, which runs synchronously) does not, only
// a macrotask does. `pacer` yields once a slice of `budgetMs` has been used, so a loop pays for a
// yield every few milliseconds of work, not per item.
export const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Default slice of uninterrupted work before a sync loop yields. */
export const SLICE_MILLIS = 10

export function pacer(budgetMs = SLICE_MILLIS): () => Promise<void> | undefined {
  let since = performance.now()
  return () => {
    const t = performance.now()
    if (t - since < budgetMs) return undefined
    return yieldToLoop().then(() => {
      since = performance.now()
    })
  }
}

// Waiting on a condition instead of a fixed sleep: a test goes on as soon as what it waits for holds,
// and fails with a message (not a timing assertion) when it never does.

export interface WaitOptions {
  /** How long the condition may take (default 10 s). */
  timeoutMs?: number
  /** How often it is checked (default 25 ms). */
  intervalMs?: number
  /** Named in the error when the condition never holds. */
  what?: string
}

/** Resolves with the first truthy value of `cond`; throws after `timeoutMs` without one. */
export async function waitFor<T>(cond: () => T | Promise<T>, opts: WaitOptions = {}): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000)
  for (;;) {
    const v = await cond()
    if (v) return v as NonNullable<T>
    if (Date.now() >= deadline) throw new Error(`timed out after ${opts.timeoutMs ?? 10_000} ms waiting for ${opts.what ?? 'a condition'}`)
    await Bun.sleep(opts.intervalMs ?? 25)
  }
}

import { ExpiringLru } from './lru'

interface Attempts {
  failures: number
  blockedUntil: number
}

/**
 * Failed logins per client address, like the platform's IP authentication
 * failure listener: `maxAttempts` failures within `blockSeconds` block the
 * address for `blockSeconds`, for every user, correct passwords included (so
 * a blocked guesser learns nothing). Success does not reset the count, or a
 * valid account could be used to keep guessing another. The table is
 * bounded; under a flood of distinct addresses the oldest are forgotten.
 */
export class FailureLimiter {
  private readonly table: ExpiringLru<Attempts>

  constructor(
    private readonly maxAttempts: number,
    private readonly blockSeconds: number,
    private readonly now: () => number,
    maxAddresses = 100_000,
  ) {
    this.table = new ExpiringLru(maxAddresses, now)
  }

  get enabled(): boolean {
    return this.maxAttempts > 0
  }

  /** Seconds the address stays blocked (0 when it may try). */
  blockedFor(address: string | undefined): number {
    if (!this.enabled || !address) return 0
    const r = this.table.get(address)
    if (!r || r.blockedUntil <= this.now()) return 0
    return Math.ceil((r.blockedUntil - this.now()) / 1000)
  }

  recordFailure(address: string | undefined): void {
    if (!this.enabled || !address) return
    const windowMs = this.blockSeconds * 1000
    const r = this.table.get(address) ?? { failures: 0, blockedUntil: 0 }
    r.failures += 1
    if (r.failures >= this.maxAttempts) {
      r.blockedUntil = this.now() + windowMs
      r.failures = 0
    }
    // Counting restarts when no failure happened for a whole window.
    this.table.set(address, r, Math.max(windowMs, r.blockedUntil - this.now()))
  }

  clear(): void {
    this.table.clear()
  }
}

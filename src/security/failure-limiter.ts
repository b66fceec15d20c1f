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
 *
 * An attempt is counted when its password check starts (`begin`), not when it fails: guesses
 * sent in parallel would otherwise all run bcrypt before the first failure is recorded. Checks
 * in flight count against the limit, so at most `maxAttempts` run at once per address.
 */
export class FailureLimiter {
  private readonly table: ExpiringLru<Attempts>
  /** Password checks running per address; an entry lives only while one runs, so it is bounded by concurrent requests. */
  private readonly inFlight = new Map<string, number>()

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

  /**
   * Reserves one attempt before its password check: 0 when it may run (call `finish` after),
   * else the seconds to wait (the address is blocked, or enough checks are running to block it).
   */
  begin(address: string | undefined): number {
    if (!this.enabled || !address) return 0
    const blocked = this.blockedFor(address)
    if (blocked > 0) return blocked
    const running = this.inFlight.get(address) ?? 0
    if ((this.table.get(address)?.failures ?? 0) + running >= this.maxAttempts) return 1
    this.inFlight.set(address, running + 1)
    return 0
  }

  /** Ends an attempt reserved by `begin`; a failed one is recorded. */
  finish(address: string | undefined, failed: boolean): void {
    if (!this.enabled || !address) return
    const running = (this.inFlight.get(address) ?? 1) - 1
    if (running > 0) this.inFlight.set(address, running)
    else this.inFlight.delete(address)
    if (failed) this.recordFailure(address)
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
    this.inFlight.clear()
  }
}

/**
 * A counting semaphore with a bounded queue: at most `slots` tasks run at once, at most
 * `maxWaiting` wait, and any more are refused at once (`run` rejects with `refuse()`), so a
 * flood of requests costs neither unbounded CPU (bcrypt checks, logtest runs) nor memory.
 */
export class Semaphore {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(
    readonly slots: number,
    readonly maxWaiting: number,
    private readonly refuse: () => Error,
  ) {}

  /** Tasks running now (for tests and operators). */
  get active(): number {
    return this.running
  }

  /** Tasks waiting for a slot. */
  get queued(): number {
    return this.waiting.length
  }

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.slots) {
      if (this.waiting.length >= this.maxWaiting) throw this.refuse()
      // The slot is handed over by `release`, so `running` never drops below the true count.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.running++
    }
    try {
      return await task()
    } finally {
      this.release()
    }
  }

  private release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }
}

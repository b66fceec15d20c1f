// Logtest is reachable by low-privilege accounts, so its work is bounded (reference 7.10): a few
// runs at a time, a bounded queue behind them, and 429 for whatever does not fit, instead of
// letting requests (and their bodies) pile up in memory.
import { availableParallelism } from 'node:os'
import { ApiError } from '../../http/errors'

export interface PoolOptions {
  /** Runs at once; the reference uses half the processors, at least one. */
  size?: number
  /** Runs waiting for a slot before new ones are refused. */
  queue?: number
}

export const BUSY_MESSAGE = 'logtest is busy: too many concurrent requests. Please retry later.'

export class LogtestPool {
  readonly size: number
  readonly queueLimit: number
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor({ size = Math.max(1, Math.floor(availableParallelism() / 2)), queue = 100 }: PoolOptions = {}) {
    this.size = size
    this.queueLimit = queue
  }

  /** Runs `work` when a slot is free; throws 429 at once when the queue is full. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.size) {
      if (this.waiting.length >= this.queueLimit) throw new ApiError(429, BUSY_MESSAGE)
      // The finishing run hands its slot over directly, so `running` never dips in between.
      await new Promise<void>((resolve) => this.waiting.push(resolve))
    } else {
      this.running++
    }
    try {
      return await work()
    } finally {
      const next = this.waiting.shift()
      if (next) next()
      else this.running--
    }
  }

  get pending(): { running: number; queued: number } {
    return { running: this.running, queued: this.waiting.length }
  }
}

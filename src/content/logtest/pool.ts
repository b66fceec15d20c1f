// Logtest is reachable by low-privilege accounts, so its work is bounded (reference 7.10): a few
// runs at a time, a bounded queue behind them, and 429 for whatever does not fit, instead of
// letting requests (and their bodies) pile up in memory.
import { availableParallelism } from 'node:os'
import { ApiError } from '../../http/errors'
import { Semaphore } from '../../http/semaphore'

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
  private readonly slots: Semaphore

  constructor({ size = Math.max(1, Math.floor(availableParallelism() / 2)), queue = 100 }: PoolOptions = {}) {
    this.size = size
    this.queueLimit = queue
    this.slots = new Semaphore(size, queue, () => new ApiError(429, BUSY_MESSAGE))
  }

  /** Runs `work` when a slot is free; throws 429 at once when the queue is full. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.slots.run(work)
  }

  get pending(): { running: number; queued: number } {
    return { running: this.slots.active, queued: this.slots.queued }
  }
}

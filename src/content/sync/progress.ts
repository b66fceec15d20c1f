// Progress of long loads in the log: percent done and documents per second, at most every few
// seconds, so an operator can tell a slow snapshot from a stuck one.
import type { Logger } from '../../http/log'

export class Progress {
  private readonly started: number
  private lastLog: number
  done = 0

  constructor(
    private readonly log: Pick<Logger, 'info'>,
    private readonly what: string,
    private readonly fields: Record<string, unknown>,
    private readonly now: () => number = Date.now,
    private readonly everyMs = 5000,
  ) {
    this.started = this.lastLog = now()
  }

  /** `fraction` in 0..1 of the whole job, when known. */
  tick(count: number, fraction?: number): void {
    this.done += count
    const t = this.now()
    if (t - this.lastLog < this.everyMs) return
    this.lastLog = t
    this.emit(fraction)
  }

  finish(): { documents: number; seconds: number; docs_per_second: number } {
    const seconds = Math.max(0.001, (this.now() - this.started) / 1000)
    const summary = { documents: this.done, seconds: Math.round(seconds * 1000) / 1000, docs_per_second: Math.round(this.done / seconds) }
    this.log.info(`${this.what} finished`, { ...this.fields, ...summary })
    return summary
  }

  private emit(fraction?: number): void {
    const seconds = Math.max(0.001, (this.now() - this.started) / 1000)
    this.log.info(`${this.what} in progress`, {
      ...this.fields,
      documents: this.done,
      ...(fraction !== undefined ? { percent: Math.min(100, Math.round(fraction * 1000) / 10) } : {}),
      docs_per_second: Math.round(this.done / seconds),
    })
  }
}

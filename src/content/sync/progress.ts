// Progress of long loads: percent done, documents per second and the estimated time left, in the
// log and (through `report`) in the consumer's document, at most every few seconds, so an
// operator can tell a slow snapshot from a stuck one.
import type { Logger } from '../../http/log'
import type { PassProgress } from './state'

export class Progress {
  private readonly started: number
  private lastLog: number
  done = 0

  constructor(
    private readonly log: Pick<Logger, 'info' | 'warn'>,
    private readonly what: string,
    private readonly fields: Record<string, unknown>,
    private readonly now: () => number = Date.now,
    private readonly everyMs = 5000,
    private readonly report?: (p: PassProgress) => Promise<void>,
  ) {
    this.started = this.lastLog = now()
  }

  /** `fraction` in 0..1 of the whole job, when known. */
  tick(count: number, fraction?: number): void {
    this.done += count
    const t = this.now()
    if (t - this.lastLog < this.everyMs) return
    this.lastLog = t
    this.emit(t, fraction)
  }

  finish(): { documents: number; seconds: number; docs_per_second: number } {
    const seconds = Math.max(0.001, (this.now() - this.started) / 1000)
    const summary = { documents: this.done, seconds: Math.round(seconds * 1000) / 1000, docs_per_second: Math.round(this.done / seconds) }
    this.log.info(`${this.what} finished`, { ...this.fields, ...summary })
    return summary
  }

  private emit(t: number, fraction?: number): void {
    const seconds = Math.max(0.001, (t - this.started) / 1000)
    const f = fraction === undefined ? undefined : Math.min(1, Math.max(0, fraction))
    const p: PassProgress = {
      phase: this.what,
      documents: this.done,
      ...(f !== undefined ? { percent: Math.round(f * 1000) / 10 } : {}),
      docs_per_second: Math.round(this.done / seconds),
      // Time left at the average rate so far; unknown until some of the job is done.
      ...(f !== undefined && f > 0 ? { eta_seconds: Math.round((seconds * (1 - f)) / f) } : {}),
      updated_at: new Date(t).toISOString(),
    }
    const { phase: _phase, updated_at: _at, ...logged } = p
    this.log.info(`${this.what} in progress`, { ...this.fields, ...logged })
    this.report?.(p).catch((e) => this.log.warn('progress could not be recorded', { ...this.fields, error: (e as Error).message }))
  }
}

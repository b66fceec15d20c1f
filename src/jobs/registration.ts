// Job registration is retried (spec background 12, reference 5.5): `job_schedule.max_retries`
// retries after the first attempt, the delay before retry n being `retry_backoff_seconds * n`.
import type { Logger } from '../http/log'

export async function registerWithRetry<T>(
  what: string,
  fn: () => Promise<T>,
  opts: { maxRetries: number; backoffSeconds: number; log: Pick<Logger, 'warn' | 'error'>; sleep: (ms: number) => Promise<void> },
): Promise<T | undefined> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn()
    } catch (e) {
      if (attempt >= opts.maxRetries) {
        opts.log.error('job registration failed; giving up', { job: what, attempts: attempt + 1, error: (e as Error).message })
        return undefined
      }
      const delay = opts.backoffSeconds * (attempt + 1)
      opts.log.warn('job registration failed; retrying', { job: what, retry_in_seconds: delay, error: (e as Error).message })
      await opts.sleep(delay * 1000)
    }
  }
}

// What can go wrong talking to the CTI API, told apart because callers react differently: a 429
// that outlived its retries defers the pass, an unreachable feed falls back to local snapshots,
// an HTTP error is passed through by the version check.

export type CtiFailure = 'http' | 'rate_limited' | 'unreachable' | 'timeout' | 'bad_payload' | 'aborted'

export class CtiError extends Error {
  override name = 'CtiError'
  constructor(
    readonly kind: CtiFailure,
    message: string,
    /** HTTP status of the CTI answer, when there was one. */
    readonly status?: number,
    /** Body of the CTI answer (error shapes of reference 1.4/1.6), when there was one. */
    readonly body?: string,
  ) {
    super(message)
  }
}

export const isCtiError = (e: unknown, kind?: CtiFailure): e is CtiError => e instanceof CtiError && (kind === undefined || e.kind === kind)

// Typed Engine failures. Callers map them to HTTP answers (resource writes: 400; policy loads: log
// and carry on), so they need to tell "the Engine said no" from "we could not talk to it".

/** Any failed Engine call; `status` follows reference 3.2 (local failures are 500). */
export class EngineError extends Error {
  override name = 'EngineError'
  constructor(
    message: string,
    readonly status: number = 500,
  ) {
    super(message)
  }
}

/** Why the socket could not be used; decides the wording, the caller's reaction is the same. */
export type UnavailableCause = 'absent' | 'denied' | 'refused'

const causeText: Record<UnavailableCause, (path: string) => string> = {
  absent: (p) => `socket file not found at ${p}`,
  denied: (p) => `socket file at ${p} is not accessible by this process`,
  refused: (p) => `nothing is listening on ${p}`,
}

/** The socket is absent or not accessible: the spec's "Engine cannot be reached" condition. */
export class EngineUnavailable extends EngineError {
  override name = 'EngineUnavailable'
  constructor(
    readonly socketPath: string,
    readonly kind: UnavailableCause,
  ) {
    super(`The Engine cannot be reached because its API socket is not available (${causeText[kind](socketPath)}).`)
  }
}

/** The call outlived its per-call timeout; the Engine may still finish the work. */
export class EngineTimeout extends EngineError {
  override name = 'EngineTimeout'
  constructor(readonly timeoutMs: number) {
    super('Timed out communicating with the Engine.')
  }
}

/** The Engine answered, but not with success; `reason` is its message, passed on verbatim. */
export class EngineRefused extends EngineError {
  override name = 'EngineRefused'
  constructor(
    status: number,
    readonly reason: string,
  ) {
    super(reason, status)
  }
}

/**
 * The 400 message of a resource write the Engine did not accept. The spec pins the prefix and asks
 * for the resource type; the reason of an unreachable socket is passed on the same way (reference 3.3.1).
 */
export function engineValidationMessage(resourceType: string, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error)
  return `Engine validation failed for ${resourceType}: ${reason}`
}

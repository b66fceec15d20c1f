// Typed Engine failures, and the one HTTP answer to them (engineFailure) used by the resource
// writes, promotion and logtest; policy loads log them and carry on.
import { ApiError } from '../../http/errors'

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
 * The HTTP answer to a failed Engine call, for every route that makes one:
 * - the Engine refused with an error status (4xx/5xx): that status and its message verbatim, since it
 *   judged the request (a policy it will not load, an event it cannot parse, its own failure);
 * - the Engine answered with any other status the call does not accept: 502, the gateway's answer to
 *   a peer whose reply it cannot use;
 * - a local failure (socket absent or not accessible, timeout, broken exchange): 500 with our message
 *   (reference 3.2), the request was never judged.
 * A resource write (`resourceType` given) is the case the spec fixes: any failure, the unreachable
 * socket included (reference 3.3.1), is the resource's 400 'Engine validation failed for <type>: <reason>'.
 */
export function engineFailure(error: EngineError, resourceType?: string): ApiError {
  if (resourceType !== undefined) return new ApiError(400, engineValidationMessage(resourceType, error))
  if (error instanceof EngineRefused) return new ApiError(error.status >= 400 ? error.status : 502, error.reason)
  return new ApiError(error.status, error.message)
}

/**
 * The 400 message of a resource write the Engine did not accept. The spec pins the prefix and asks
 * for the resource type; the reason of an unreachable socket is passed on the same way (reference 3.3.1).
 */
export function engineValidationMessage(resourceType: string, error: unknown): string {
  const reason = error instanceof Error ? error.message : String(error)
  return `Engine validation failed for ${resourceType}: ${reason}`
}

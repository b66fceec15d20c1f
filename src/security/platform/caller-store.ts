/**
 * Work done "with the caller's rights". Features take the store for it from here, in one line:
 *
 *     const store = callerStore(deps, caller, 'indices:data/write/index', [index])
 *     await store.index({...})
 *
 * Embedded mode: our roles model is the only word on index rights, so `callerStore` asks it
 * (`authorizeIndices`, a 403 `security_exception` when refused) and hands back the shared store.
 * Platform mode: the store is bound to the caller's Authorization header and the platform applies
 * that caller's index rights and DLS; its refusals arrive as a StoreError with status 403 and type
 * `security_exception` (`securityRefusal` recognises them). No local check there: our roles.yml
 * only knows OUR cluster actions, and a platform role it has never heard of must still be able to
 * write what the platform lets it write.
 *
 * Service bookkeeping (locks, job documents, markers, hashes, rollbacks) uses `deps.store`.
 */
import type { Caller, Security } from '../../http/caller'
import type { Store } from '../../store/port'

export interface CallerStores {
  store: Store
  storeFor?: (caller: Caller) => Store
}

export interface CallerRights extends CallerStores {
  security: Pick<Security, 'authorizeIndices'>
}

export function storeAs(deps: CallerStores, caller: Caller): Store {
  return deps.storeFor ? deps.storeFor(caller) : deps.store
}

/** The store to act with on the caller's behalf, once the mode's own check let `action` on `indices` pass. */
export function callerStore(deps: CallerRights, caller: Caller, action: string, indices: string[]): Store {
  if (deps.storeFor) return deps.storeFor(caller)
  deps.security.authorizeIndices(caller, action, indices)
  return deps.store
}

/** True when the platform (not our model) decides the caller's index rights. */
export const platformDecides = (deps: CallerStores): boolean => deps.storeFor !== undefined

export interface SecurityRefusal {
  status: number
  message: string
}

/**
 * The security exception in an error's cause chain, if any (a refusal by either word, or one
 * wrapped in a transport exception's `caused_by`): callers answer it with its own status and
 * message instead of a generic failure.
 */
export function securityRefusal(error: unknown): SecurityRefusal | undefined {
  let current: unknown = error
  for (let depth = 0; depth < 8 && typeof current === 'object' && current !== null; depth++) {
    const e = current as {
      type?: unknown
      status?: unknown
      reason?: unknown
      message?: unknown
      metadata?: { caused_by?: unknown }
      caused_by?: unknown
    }
    if (e.type === 'security_exception') {
      const message = typeof e.reason === 'string' ? e.reason : typeof e.message === 'string' ? e.message : 'security_exception'
      return { status: typeof e.status === 'number' && e.status >= 400 ? e.status : 403, message }
    }
    current = e.metadata?.caused_by ?? e.caused_by
  }
  return undefined
}

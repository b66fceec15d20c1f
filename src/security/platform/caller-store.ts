/**
 * Work done "with the caller's rights". Features take the store for it from here:
 *
 *     security.authorizeIndices(caller, action, [index])   // the local word (both modes)
 *     await storeAs(deps, caller).index({...})             // platform mode: the platform's word too
 *
 * In embedded mode `storeFor` is absent and the service store is used (authorizeIndices was the
 * check). In platform mode it is a store bound to the caller's Authorization header, so the
 * platform applies that caller's index rights and DLS; its refusals arrive as a StoreError with
 * status 403 and type `security_exception`.
 */
import type { Caller } from '../caller'
import type { Store } from '../../store/port'

export interface CallerStores {
  store: Store
  storeFor?: (caller: Caller) => Store
}

export function storeAs(deps: CallerStores, caller: Caller): Store {
  return deps.storeFor ? deps.storeFor(caller) : deps.store
}

/**
 * `plugins.security_analytics.filter_by_backend_roles` (reference 6.3): when on, a caller other
 * than `all_access` sees only resources whose stored creator shares one of its backend roles, and
 * must have a backend role to create or update a detector. Internal callers (the Content
 * Manager) are `undefined` here and never filtered.
 */
import type { SettingsSnapshot } from '../config/cluster-settings'
import { ApiError } from '../http/errors'
import type { Caller } from '../http/caller'
import type { StoredUser } from './model'

export const FILTER_SETTING = 'plugins.security_analytics.filter_by_backend_roles'
const SUPERUSER_ROLE = 'all_access'

/** The caller to filter for, or undefined when no filtering applies. */
export function filteredCaller(settings: SettingsSnapshot, caller: Caller | undefined): Caller | undefined {
  if (!caller || !settings.bool(FILTER_SETTING) || caller.roles.includes(SUPERUSER_ROLE)) return undefined
  return caller
}

export function storedUser(caller: Caller | undefined): StoredUser | undefined {
  return caller && { name: caller.name, backend_roles: [...caller.backendRoles], roles: [...caller.roles] }
}

/** Creating or updating under the filter needs backend roles to record. */
export function requireBackendRoles(filtered: Caller | undefined): void {
  if (filtered && filtered.backendRoles.length === 0)
    throw new ApiError(403, "User doesn't have backend roles configured. Contact administrator")
}

export function mayAccess(filtered: Caller | undefined, owner: StoredUser | undefined): boolean {
  if (!filtered) return true
  const roles = new Set(owner?.backend_roles ?? [])
  return filtered.backendRoles.some((r) => roles.has(r))
}

export function assertAccess(filtered: Caller | undefined, owner: StoredUser | undefined, what: string): void {
  if (!mayAccess(filtered, owner)) throw new ApiError(403, `Do not have permissions to resource [${what}]`)
}

/** A query clause limiting searches to resources owned by one of the caller's backend roles. */
export function backendRoleClause(filtered: Caller, field: string): Record<string, unknown> {
  return { terms: { [field]: filtered.backendRoles } }
}

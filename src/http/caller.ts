/**
 * The request identity and the security port, below both HTTP routes and the security layer that
 * implements it (so neither imports the other upward).
 */

/** Who is calling: the authenticated user as the security plugin's authinfo describes it. */
export interface Caller {
  name: string
  backendRoles: string[]
  /** Resolved security roles (after roles_mapping). */
  roles: string[]
  attributes: Record<string, string>
}

/**
 * What routes need from the security layer. Routes call `authorize` with the
 * cluster action they implement; the index API asks about index actions on
 * the concrete indices it touches. Both throw ApiError 401/403.
 */
export interface Security {
  /** Authenticates the request (HTTP Basic); throws 401 with WWW-Authenticate. */
  authenticate(request: Request, remoteAddress?: string): Promise<Caller>
  /** Authenticates and checks one cluster permission; throws 403 naming action and user. */
  authorize(request: Request, action: string, remoteAddress?: string): Promise<Caller>
  /** True when the caller holds the cluster permission (perform_permission_check uses it). */
  hasClusterPermission(caller: Caller, action: string): boolean
  /** The raw actions of `action` (or of the group it names) the caller lacks (perform_permission_check). */
  missingPrivileges?(caller: Caller, action: string): string[]
  /** Throws 403 unless the caller may perform the index action on every named concrete index. */
  authorizeIndices(caller: Caller, action: string, indices: string[]): void
  /** The DLS query (already with ${user.name} substituted) that must filter reads of an index, if any. */
  documentFilter(caller: Caller, index: string): Record<string, unknown> | undefined
  /** False when no role of the caller filters documents of any index: no read of it needs a DLS check. */
  hasDocumentFilters(caller: Caller): boolean
}

/** The platform's wording, so operators recognise it. */
export function noPermissions(action: string, caller: Caller): string {
  return `no permissions for [${action}] and User [name=${caller.name}, backend_roles=[${caller.backendRoles.join(', ')}], requestedTenant=null]`
}

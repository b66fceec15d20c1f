import type { ActionGroup, InternalUser, Role, RoleMapping } from './config-schema'
import { BUILTIN_ACTION_GROUPS } from './builtin-groups'
import { BUILTIN_MAPPINGS, BUILTIN_ROLES } from './builtin-roles'
import { isPattern, matcher, matches, type Matcher } from './wildcard'
import { own } from '../store/own'
import { isSystemIndex } from '../setup/indices/names'

/** The four files after validation; entries from files override/extend the built-ins. */
export interface SecurityConfig {
  users: Record<string, InternalUser>
  roles: Record<string, Role>
  mappings: Record<string, RoleMapping>
  actionGroups: Record<string, ActionGroup>
}

/** Who a request is, before roles are resolved. */
export interface Identity {
  name: string
  backendRoles: string[]
  attributes: Record<string, string>
  /** Roles the user file assigns directly (opendistro_security_roles). */
  directRoles: string[]
}

interface CompiledIndexPermission {
  /** Patterns as written; `${...}` variables are substituted per caller. */
  patterns: string[]
  hasVariables: boolean
  actions: Matcher[]
  /** The raw actions granted by name (groups expanded, patterns not): what an explicit grant needs. */
  named: Set<string>
  dls?: string
}

interface CompiledRole {
  cluster: string[]
  clusterMatchers: Matcher[]
  index: CompiledIndexPermission[]
}

const VARIABLE = /\$\{([a-zA-Z_.]+)\}/g

/**
 * The permission model of one configuration generation: action groups
 * flattened once, roles compiled to matchers, answers memoized. Immutable,
 * so a reload swaps the whole object and in-flight requests keep a coherent
 * view.
 */
/** The platform's permission for system indices; only an explicit grant (no wildcard) counts. */
export const SYSTEM_INDEX_PERMISSION = 'system:admin/system_index'

export class Policy {
  readonly roles: Record<string, Role>
  readonly mappings: Record<string, RoleMapping>
  readonly groups: Record<string, ActionGroup>
  private readonly compiled = new Map<string, CompiledRole>()
  private readonly groupNames: string[]
  private readonly memo = new Map<string, boolean>()
  private readonly roleMemo = new Map<string, string[]>()
  /** True when a mapping matches on client hosts, so a user's roles can differ per address. */
  readonly rolesDependOnAddress: boolean

  constructor(readonly config: SecurityConfig) {
    this.groups = { ...config.actionGroups, ...BUILTIN_ACTION_GROUPS }
    this.roles = { ...config.roles, ...BUILTIN_ROLES }
    this.mappings = { ...BUILTIN_MAPPINGS, ...config.mappings }
    this.groupNames = Object.keys(this.groups)
    this.rolesDependOnAddress = Object.values(this.mappings).some((m) => (m.hosts?.length ?? 0) > 0)
    for (const [name, role] of Object.entries(this.roles)) this.compiled.set(name, this.compile(role))
  }

  /**
   * Expands action groups recursively into raw action patterns. An entry
   * naming a group exactly expands to that group only; an entry that is a
   * pattern stays a pattern and also expands every group whose name it
   * matches (so `plugin:content_manager/*` means every Content Manager
   * group). Cycles are cut.
   */
  expand(entries: string[], seen = new Set<string>()): string[] {
    const out = new Set<string>()
    for (const entry of entries) {
      if (seen.has(entry)) continue
      const group = own(this.groups, entry)
      if (group) {
        seen.add(entry)
        for (const a of this.expand(group.allowed_actions, seen)) out.add(a)
        continue
      }
      out.add(entry)
      if (isPattern(entry) && entry !== '*') {
        const m = matcher(entry)
        for (const name of this.groupNames) {
          if (!seen.has(name) && m(name)) {
            seen.add(name)
            for (const a of this.expand(own(this.groups, name)!.allowed_actions, seen)) out.add(a)
          }
        }
      }
    }
    return [...out]
  }

  private compile(role: Role): CompiledRole {
    const cluster = this.expand(role.cluster_permissions ?? [])
    return {
      cluster,
      clusterMatchers: cluster.map(matcher),
      index: (role.index_permissions ?? []).map((p) => ({
        patterns: p.index_patterns,
        hasVariables: p.index_patterns.some((x) => x.includes('${')),
        actions: this.expand(p.allowed_actions ?? []).map(matcher),
        named: new Set(this.expand(p.allowed_actions ?? []).filter((a) => !isPattern(a))),
        dls: p.dls,
      })),
    }
  }

  /** Roles of an identity: direct ones plus every mapping that matches (users, backend roles, hosts). */
  resolveRoles(identity: Identity, remoteAddress?: string): string[] {
    const key = `r\u0000${identity.name}\u0000${identity.backendRoles.join(',')}\u0000${identity.directRoles.join(',')}\u0000${this.rolesDependOnAddress ? (remoteAddress ?? '') : ''}`
    let roles = this.roleMemo.get(key)
    if (!roles) {
      roles = this.computeRoles(identity, remoteAddress)
      if (this.roleMemo.size >= 10_000) this.roleMemo.clear()
      this.roleMemo.set(key, roles)
    }
    return [...roles]
  }

  private computeRoles(identity: Identity, remoteAddress?: string): string[] {
    const out = new Set<string>()
    for (const r of identity.directRoles) if (own(this.roles, r)) out.add(r)
    for (const [role, m] of Object.entries(this.mappings)) {
      if (!own(this.roles, role) || out.has(role)) continue
      if (mappingMatches(m, identity, remoteAddress)) out.add(role)
    }
    return [...out].sort()
  }

  /**
   * True when the roles grant the cluster action. When `action` is itself a
   * group name, every raw action the group stands for must be granted.
   */
  /**
   * What `perform_permission_check=true` reports: the raw actions (members of the group, when
   * `action` names one) the roles do not hold.
   */
  missingCluster(roles: string[], action: string): string[] {
    const wanted = own(this.groups, action) ? this.expand([action]) : [action]
    return wanted.filter((a) => !this.hasCluster(roles, a))
  }

  hasCluster(roles: string[], action: string): boolean {
    const key = `c\u0000${roles.join(',')}\u0000${action}`
    let hit = this.memo.get(key)
    if (hit === undefined) {
      const wanted = own(this.groups, action) ? this.expand([action]) : [action]
      hit = wanted.every((a) => roles.some((r) => this.roleGrantsCluster(r, a)))
      this.remember(key, hit)
    }
    return hit
  }

  private roleGrantsCluster(role: string, action: string): boolean {
    const c = this.compiled.get(role)
    if (!c) return false
    return c.clusterMatchers.some((m) => m(action)) || c.cluster.includes(action)
  }

  /**
   * The index rule, as the platform's with system_indices.permission.enabled: some role grants
   * the action on the index, and a system index also needs an explicit grant of
   * SYSTEM_INDEX_PERMISSION (a service account's).
   */
  mayUseIndex(identity: Identity, roles: string[], action: string, index: string): boolean {
    if (isSystemIndex(index) && !this.hasExplicitIndex(identity, roles, SYSTEM_INDEX_PERMISSION, index)) return false
    return this.hasIndex(identity, roles, action, index)
  }

  /** True when some role grants the index action on the concrete index. */
  hasIndex(identity: Identity, roles: string[], action: string, index: string): boolean {
    for (const r of roles) {
      const c = this.compiled.get(r)
      if (!c) continue
      for (const p of c.index) {
        if (!p.actions.some((m) => m(action))) continue
        if (patternsMatch(p, identity, index)) return true
      }
    }
    return false
  }

  /**
   * True when some role names the action itself (not through a wildcard) for the index: the
   * platform grants `system:admin/system_index` only that way, so `*` never opens a system index.
   */
  hasExplicitIndex(identity: Identity, roles: string[], action: string, index: string): boolean {
    for (const r of roles) {
      const c = this.compiled.get(r)
      if (!c) continue
      for (const p of c.index) if (p.named.has(action) && patternsMatch(p, identity, index)) return true
    }
    return false
  }

  /** True when one of the roles filters documents of some index (so reads may need its DLS). */
  hasDls(roles: string[]): boolean {
    return roles.some((r) => this.compiled.get(r)?.index.some((p) => p.dls !== undefined) ?? false)
  }

  /**
   * DLS queries (JSON text, variables substituted) of every role whose index
   * patterns cover the index. A role without DLS does not lift another
   * role's DLS (the platform's default, dfm_empty_overrides_all=false), which
   * is what makes the sessions filter apply to holders of read on `*`.
   */
  dlsQueries(identity: Identity, roles: string[], index: string): string[] {
    const out: string[] = []
    for (const r of roles) {
      const c = this.compiled.get(r)
      if (!c) continue
      for (const p of c.index) {
        if (p.dls !== undefined && patternsMatch(p, identity, index)) out.push(substitute(p.dls, identity, roles, true))
      }
    }
    return [...new Set(out)]
  }

  private remember(key: string, value: boolean): void {
    if (this.memo.size >= 50_000) this.memo.clear()
    this.memo.set(key, value)
  }
}

function mappingMatches(m: RoleMapping, identity: Identity, remoteAddress?: string): boolean {
  if (m.users?.some((u) => matches(u, identity.name))) return true
  if (m.backend_roles?.some((b) => identity.backendRoles.some((own) => matches(b, own)))) return true
  if (m.and_backend_roles?.length && m.and_backend_roles.every((b) => identity.backendRoles.some((own) => matches(b, own)))) return true
  if (remoteAddress && m.hosts?.some((h) => matches(h, remoteAddress))) return true
  return false
}

function patternsMatch(p: CompiledIndexPermission, identity: Identity, index: string): boolean {
  const patterns = p.hasVariables ? p.patterns.map((x) => substitute(x, identity, [], false)) : p.patterns
  return patterns.some((x) => matches(x, index))
}

/**
 * Replaces `${user.name}` (also `${user_name}`), `${user.roles}`,
 * `${user.backend_roles}` and `${attr.internal.<name>}`. Inside DLS JSON the
 * values are JSON-escaped so a user name cannot break out of its string and
 * widen the filter; lists become `"a","b"` as on the platform.
 */
export function substitute(text: string, identity: Identity, roles: string[], json: boolean): string {
  const one = (v: string) => (json ? JSON.stringify(v).slice(1, -1) : v)
  const list = (vs: string[]) => vs.map((v) => JSON.stringify(v)).join(',')
  return text.replace(VARIABLE, (whole, name: string) => {
    if (name === 'user.name' || name === 'user_name') return one(identity.name)
    if (name === 'user.roles' || name === 'user.securityRoles') return list(roles)
    if (name === 'user.backend_roles' || name === 'user.backendroles') return list(identity.backendRoles)
    if (name.startsWith('attr.internal.')) return one(identity.attributes[name.slice('attr.internal.'.length)] ?? '')
    return whole
  })
}

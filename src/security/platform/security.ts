/**
 * Security in platform mode. The platform authenticates (its authinfo, asked with the caller's
 * header) and keeps the last word on index rights and DLS: index API requests are forwarded
 * with the caller's credentials, and feature writes done "with the caller's rights" go through
 * `storeFor(caller)`, which carries them too. Cluster permissions for OUR actions are resolved
 * locally through our model (built-in roles and action groups plus roles.yml) applied to the
 * platform's role names.
 */
import { timingSafeEqual } from 'node:crypto'
import { DlsFilters } from '../dls'
import { ApiError, OpenSearchHttpError } from '../../http/errors'
import type { Logger } from '../../http/log'
import { remoteAddressOf } from '../../http/remote'
import { type Caller, noPermissions, type Security } from '../../http/caller'
import { ExpiringLru } from '../lru'
import type { Identity, Policy } from '../policy'
import { authorizeCaller, REALM } from '../service'
import { askAuthInfo, type AuthInfo } from './authinfo'
import type { PlatformEndpoint } from './endpoint'

export interface PlatformAuthSettings {
  /** How long the platform's answer for one Authorization header is reused. */
  cacheTtlSeconds: number
  cacheMaxEntries: number
}

interface CachedIdentity {
  digest: Uint8Array
  identity: Identity
  /** The platform's own role names for the caller. */
  platformRoles: string[]
}

export const PLATFORM_UNAVAILABLE = 'The platform could not be asked who the caller is; try again later.'

export class PlatformSecurity implements Security {
  private readonly cache: ExpiringLru<CachedIdentity>
  private readonly inflight = new Map<string, Promise<CachedIdentity | 'rejected'>>()
  /** Each authenticated caller's Authorization header, for `storeFor`; never on the object itself, so it is never logged. */
  private readonly credentials = new WeakMap<Caller, string>()
  private readonly dls = new DlsFilters()
  readonly stats = { platformCalls: 0, cacheHits: 0 }

  constructor(
    private readonly endpoint: PlatformEndpoint,
    private policy: Policy,
    private readonly auth: PlatformAuthSettings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new ExpiringLru(auth.cacheMaxEntries, now)
  }

  /** A reloaded roles.yml / action_groups.yml; cached authentications stay (they are the platform's). */
  install(policy: Policy): void {
    this.policy = policy
    this.dls.clear()
  }

  async authenticate(request: Request, remoteAddress?: string): Promise<Caller> {
    const header = request.headers.get('authorization')
    if (!header) throw unauthorized('Authentication required.')
    const digest = Bun.SHA256.hash(header) as Uint8Array
    const key = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('base64')
    let known = this.cache.get(key)
    if (known && timingSafeEqual(known.digest, digest)) this.stats.cacheHits++
    else {
      const answer = await this.ask(header, key, digest)
      if (answer === 'rejected') throw unauthorized('Invalid credentials.')
      known = answer
    }
    const address = remoteAddress ?? remoteAddressOf(request)
    const caller: Caller = {
      name: known.identity.name,
      backendRoles: [...known.identity.backendRoles],
      attributes: {},
      roles: this.rolesOf(known, address),
    }
    this.credentials.set(caller, header)
    return caller
  }

  /** The platform's roles plus the roles our mappings give the same identity (built-ins such as svc_ai_assistant). */
  private rolesOf(known: CachedIdentity, address: string | undefined): string[] {
    return [...new Set([...known.platformRoles, ...this.policy.resolveRoles(known.identity, address)])].sort()
  }

  /** One platform call for concurrent first requests with the same header; only successes are cached. */
  private ask(header: string, key: string, digest: Uint8Array): Promise<CachedIdentity | 'rejected'> {
    let pending = this.inflight.get(key)
    if (!pending) {
      pending = this.fetchIdentity(header, digest).finally(() => this.inflight.delete(key))
      this.inflight.set(key, pending)
    }
    return pending.then((r) => {
      if (r !== 'rejected') this.cache.set(key, r, this.auth.cacheTtlSeconds * 1000)
      return r
    })
  }

  private async fetchIdentity(header: string, digest: Uint8Array): Promise<CachedIdentity | 'rejected'> {
    this.stats.platformCalls++
    const answer = await askAuthInfo(this.endpoint, header)
    if (answer.kind === 'rejected') {
      this.log.info('authentication failed at the platform')
      return 'rejected'
    }
    if (answer.kind === 'unavailable') {
      this.log.warn('platform authinfo unavailable', { detail: answer.detail })
      throw new ApiError(503, PLATFORM_UNAVAILABLE)
    }
    return { digest, identity: identityOf(answer.info), platformRoles: answer.info.roles }
  }

  authorize(request: Request, action: string, remoteAddress?: string): Promise<Caller> {
    return authorizeCaller(this, request, action, remoteAddress)
  }

  hasClusterPermission(caller: Caller, action: string): boolean {
    return this.policy.hasCluster(caller.roles, action)
  }

  missingPrivileges(caller: Caller, action: string): string[] {
    return this.policy.missingCluster(caller.roles, action)
  }

  /**
   * The local word on index rights, the same model as cluster permissions (fail-closed: a
   * platform role unknown to roles.yml grants nothing here). Writes that go through
   * `storeFor(caller)` are checked by the platform as well.
   */
  authorizeIndices(caller: Caller, action: string, indices: string[]): void {
    const identity = callerIdentity(caller)
    for (const index of indices) {
      if (!this.policy.mayUseIndex(identity, caller.roles, action, index)) {
        throw new OpenSearchHttpError(403, 'security_exception', noPermissions(action, caller))
      }
    }
  }

  documentFilter(caller: Caller, index: string): Record<string, unknown> | undefined {
    return this.dls.combine(this.policy.dlsQueries(callerIdentity(caller), caller.roles, index))
  }

  hasDocumentFilters(caller: Caller): boolean {
    return this.policy.hasDls(caller.roles)
  }

  /** The Authorization header this caller authenticated with (undefined for callers made elsewhere). */
  authorizationOf(caller: Caller): string | undefined {
    return this.credentials.get(caller)
  }
}

function identityOf(info: AuthInfo): Identity {
  return { name: info.user_name, backendRoles: info.backend_roles, attributes: {}, directRoles: [] }
}

function callerIdentity(caller: Caller): Identity {
  return { name: caller.name, backendRoles: caller.backendRoles, attributes: caller.attributes, directRoles: [] }
}

function unauthorized(message: string): ApiError {
  return new ApiError(401, message, { 'WWW-Authenticate': REALM })
}

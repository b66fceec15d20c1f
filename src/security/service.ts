import { timingSafeEqual } from 'node:crypto'
import { DlsFilters } from './dls'
import { ApiError, OpenSearchHttpError } from '../http/errors'
import type { Logger } from '../http/log'
import { remoteAddressOf } from '../http/remote'
import { AUTHENTICATED_ONLY } from './actions'
import { isSystemIndex } from '../setup/indices/names'
import { type Caller, noPermissions, type Security } from '../http/caller'
import type { InternalUser } from './config-schema'
import { FailureLimiter } from './failure-limiter'
import { ExpiringLru } from './lru'
import type { Identity, Policy } from './policy'
import { Semaphore } from '../http/semaphore'
import { own } from '../store/own'

export interface AuthSettings {
  cacheTtlSeconds: number
  cacheMaxEntries: number
  maxFailedAttempts: number
  blockSeconds: number
}

/** One configuration generation: replaced whole on reload, never mutated. */
export interface Generation {
  policy: Policy
  users: Record<string, InternalUser>
  /** Set when the first-start admin is in use: how to log in. */
  loginHint?: string
}

interface CachedAuth {
  digest: Uint8Array
  identity: Identity
  caller?: Readonly<Caller>
}

export const REALM = 'Basic realm="svc"'

/**
 * Password hash checks running at once, node-wide. bcrypt costs ~100 ms of CPU by design; the
 * node has few cores and also has to answer everyone else.
 */
export const MAX_CONCURRENT_HASH_CHECKS = 4
/** Checks that may wait for a slot; beyond that a request is refused (429) without waiting. */
export const MAX_WAITING_HASH_CHECKS = 1000

/**
 * The security layer: HTTP Basic against the internal users, cluster and
 * index permissions from the current Policy, DLS. bcrypt is slow on purpose,
 * so a verified Authorization header is remembered (by its SHA-256, never in
 * clear) for a short while and concurrent first requests share one check.
 */
export class SecurityService implements Security {
  private readonly cache: ExpiringLru<CachedAuth>
  private readonly inflight = new Map<string, Promise<Identity | undefined>>()
  private readonly limiter: FailureLimiter
  private readonly hashChecks = new Semaphore(MAX_CONCURRENT_HASH_CHECKS, MAX_WAITING_HASH_CHECKS, () =>
    tooManyRequests('Too many authentications in progress; try again later.', 1),
  )
  private readonly dls = new DlsFilters()
  private dummyHash?: { gen: Generation; hash: Promise<string> }
  /** Counters for operators and tests: how often bcrypt ran, how often the cache answered, most checks at once. */
  readonly stats = { verifications: 0, cacheHits: 0, peakConcurrentChecks: 0 }

  constructor(
    private gen: Generation,
    private readonly auth: AuthSettings,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.cache = new ExpiringLru(auth.cacheMaxEntries, now)
    this.limiter = new FailureLimiter(auth.maxFailedAttempts, auth.blockSeconds, now)
  }

  get policy(): Policy {
    return this.gen.policy
  }

  get loginHint(): string | undefined {
    return this.gen.loginHint
  }

  /** Installs a new generation; cached authentications belong to the old one. */
  install(gen: Generation): void {
    this.gen = gen
    this.cache.clear()
    this.inflight.clear()
    this.dls.clear()
  }

  async authenticate(request: Request, remoteAddress?: string): Promise<Caller> {
    const address = remoteAddress ?? remoteAddressOf(request)
    const header = request.headers.get('authorization')
    if (!header) throw unauthorized('Authentication required.')
    const blocked = this.limiter.blockedFor(address)
    if (blocked > 0) throw tooManyFailures(blocked)
    const gen = this.gen
    const digest = Bun.SHA256.hash(header) as Uint8Array
    const key = Buffer.from(digest.buffer, digest.byteOffset, digest.byteLength).toString('base64')
    const hit = this.cache.get(key)
    // The map is keyed by a one-way hash, so lookup timing says nothing about the header; the byte compare is constant-time anyway.
    if (hit && timingSafeEqual(hit.digest, digest)) {
      this.stats.cacheHits++
      return hit.caller ? { ...hit.caller } : this.callerOf(hit.identity, gen, address)
    }
    const identity = await this.verify(header, key, gen, address)
    if (!identity) {
      this.log.info('authentication failed', { remote_address: address })
      throw unauthorized('Invalid credentials.')
    }
    const caller = this.callerOf(identity, gen, address)
    if (gen === this.gen) {
      // Roles depend on the address only when some mapping uses hosts; otherwise the whole caller is reusable.
      const reusable = gen.policy.rolesDependOnAddress ? undefined : Object.freeze({ ...caller })
      this.cache.set(key, { digest, identity, caller: reusable }, this.auth.cacheTtlSeconds * 1000)
    }
    return caller
  }

  private callerOf(identity: Identity, gen: Generation, address: string | undefined): Caller {
    return {
      name: identity.name,
      backendRoles: identity.backendRoles,
      attributes: identity.attributes,
      roles: gen.policy.resolveRoles(identity, address),
    }
  }

  authorize(request: Request, action: string, remoteAddress?: string): Promise<Caller> {
    return authorizeCaller(this, request, action, remoteAddress)
  }

  hasClusterPermission(caller: Caller, action: string): boolean {
    return this.gen.policy.hasCluster(caller.roles, action)
  }

  /**
   * What `perform_permission_check=true` reports: the raw actions (members
   * of the group, when `action` names one) the caller does not hold.
   */
  missingPrivileges(caller: Caller, action: string): string[] {
    return this.gen.policy.missingCluster(caller.roles, action)
  }

  /**
   * Throws the platform's 403 (security_exception) unless every index is
   * granted (Policy.mayUseIndex, system indices included). Pass the concrete names
   * the request touches (wildcards and aliases resolved).
   */
  authorizeIndices(caller: Caller, action: string, indices: string[]): void {
    for (const index of indices) {
      if (!this.mayAccessIndex(caller, action, index))
        throw new OpenSearchHttpError(403, 'security_exception', noPermissions(action, caller))
    }
  }

  /** The subset of indices the caller may use for the action (for wildcard expansions). */
  permittedIndices(caller: Caller, action: string, indices: string[]): string[] {
    return indices.filter((i) => this.mayAccessIndex(caller, action, i))
  }

  isSystemIndex(index: string): boolean {
    return isSystemIndex(index)
  }

  documentFilter(caller: Caller, index: string): Record<string, unknown> | undefined {
    return this.dls.combine(this.gen.policy.dlsQueries(identityOf(caller), caller.roles, index))
  }

  hasDocumentFilters(caller: Caller): boolean {
    return this.gen.policy.hasDls(caller.roles)
  }

  private mayAccessIndex(caller: Caller, action: string, index: string): boolean {
    return this.gen.policy.mayUseIndex(identityOf(caller), caller.roles, action, index)
  }

  /**
   * Runs bcrypt once for concurrent first requests with the same header. A new check is counted
   * by the failure limiter before it starts, so parallel guesses beyond the limit are refused
   * without costing one; requests that join a running check cost nothing and are not counted.
   */
  private verify(header: string, key: string, gen: Generation, address: string | undefined): Promise<Identity | undefined> {
    const running = this.inflight.get(key)
    if (running) return running
    const wait = this.limiter.begin(address)
    if (wait > 0) return Promise.reject(tooManyFailures(wait))
    const pending = this.check(header, gen).then(
      (identity) => {
        this.limiter.finish(address, identity === undefined)
        return identity
      },
      (e: unknown) => {
        this.limiter.finish(address, false)
        throw e
      },
    )
    const shared = pending.finally(() => this.inflight.delete(key))
    this.inflight.set(key, shared)
    return shared
  }

  private async check(header: string, gen: Generation): Promise<Identity | undefined> {
    const creds = parseBasic(header)
    // Own entries only: `constructor` or `__proto__` are names like any other, not users.
    const user = creds ? own(gen.users, creds.name) : undefined
    // Spend the same bcrypt time for unknown users, so timing does not tell which names exist.
    const hash = user?.hash ?? (await this.dummy(gen))
    const ok = await this.hashChecks.run(async () => {
      this.stats.verifications++
      this.stats.peakConcurrentChecks = Math.max(this.stats.peakConcurrentChecks, this.hashChecks.active)
      return passwordMatches(creds?.password ?? '', hash)
    })
    if (!creds || !user || !ok) return undefined
    return {
      name: creds.name,
      backendRoles: user.backend_roles ?? [],
      attributes: (user.attributes ?? {}) as Record<string, string>,
      directRoles: user.opendistro_security_roles ?? [],
    }
  }

  /** A hash as costly as the real ones, to verify against when the user does not exist. */
  private dummy(gen: Generation): Promise<string> {
    if (this.dummyHash?.gen !== gen) {
      const sample = Object.values(gen.users)[0]?.hash ?? ''
      const cost = Number(/^\$2[aby]\$(\d\d)\$/.exec(sample)?.[1] ?? 12)
      this.dummyHash = { gen, hash: Bun.password.hash(crypto.randomUUID(), { algorithm: 'bcrypt', cost }) }
    }
    return this.dummyHash.hash
  }
}

/** bcrypt (or argon2) verification; a malformed stored hash is a mismatch, whether it throws at once or later. */
async function passwordMatches(password: string, hash: string): Promise<boolean> {
  try {
    return await Bun.password.verify(password, hash)
  } catch {
    return false
  }
}

function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, message, { 'Retry-After': String(retryAfterSeconds) })
}

function tooManyFailures(retryAfterSeconds: number): ApiError {
  return tooManyRequests('Too many failed authentication attempts from this address; try again later.', retryAfterSeconds)
}

export function parseBasic(header: string): { name: string; password: string } | undefined {
  const m = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header)
  if (!m) return undefined
  let decoded: string
  try {
    decoded = Buffer.from(m[1]!, 'base64').toString('utf8')
  } catch {
    return undefined
  }
  const colon = decoded.indexOf(':')
  if (colon <= 0) return undefined
  return { name: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

function identityOf(caller: Caller): Identity {
  return { name: caller.name, backendRoles: caller.backendRoles, attributes: caller.attributes, directRoles: [] }
}

function unauthorized(message: string): ApiError {
  return new ApiError(401, message, { 'WWW-Authenticate': REALM })
}

/** `authorize` in both security modes: authenticate, then hold the cluster action (unless only authentication is asked). */
export async function authorizeCaller(
  security: Pick<Security, 'authenticate' | 'hasClusterPermission'>,
  request: Request,
  action: string,
  remoteAddress?: string,
): Promise<Caller> {
  const caller = await security.authenticate(request, remoteAddress)
  if (action === AUTHENTICATED_ONLY) return caller
  if (!security.hasClusterPermission(caller, action)) throw new ApiError(403, noPermissions(action, caller))
  return caller
}

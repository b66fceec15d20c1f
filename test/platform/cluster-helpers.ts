/**
 * Platforms for platform-mode tests, and svc-ext nodes pointed at them, all over real HTTP:
 * - `embedded`: an in-process embedded svc-ext as "the platform" (it speaks the platform's REST API);
 * - `opensearch`: the real three-node OpenSearch of the test run, with the security plugin
 *   (test/helpers/opensearch.ts); users and roles go onto it through its security REST API.
 * A suite written against `PlatformUnderTest` runs on both (`forEachPlatform`).
 */
import { afterAll, beforeAll, describe } from 'bun:test'
import { AI_ASSISTANT_ROLE, SESSIONS_DLS, SESSIONS_INDEX_PATTERNS } from '../../src/security/builtin-roles'
import { openPlatformStore } from '../../src/store/platform'
import type { Store } from '../../src/store/port'
import { basicAuth, send, type Reply } from '../helpers/app'
import { describeOnOpenSearch, OPENSEARCH_START_MS, realOpenSearch, wipeOpenSearch } from '../helpers/opensearch'
import { ADMIN, startTestServer, type TestServer, type TestServerOptions, type TestUser } from '../helpers/server'

/** The nodes' service account: all_access plus the explicit system-index grant the platform asks for. */
export const SERVICE_ACCOUNT = { name: 'svc-service', password: 'Svc-service-pass-1' }
export const SERVICE_ROLE = 'svc_service_account'
/** The explicit system-index grant a service account needs besides all_access. */
export const SERVICE_ROLE_DEF = {
  index_permissions: [{ index_patterns: ['.svc-internal-state'], allowed_actions: ['system:admin/system_index'] }],
}

export type PlatformKind = 'embedded' | 'opensearch'
export const PLATFORM_KINDS: PlatformKind[] = ['embedded', 'opensearch']

export interface PlatformUnderTest {
  kind: PlatformKind
  url: string
  admin: { name: string; password: string }
  /** The account the nodes use (all_access plus the system-index grant). */
  serviceAccount: { name: string; password: string }
  /** The platform as its admin sees it, for assertions that bypass the nodes. */
  store: Store
  /** `storage.platform.*` settings a node needs to use this platform as the service account. */
  nodeSettings: Record<string, unknown>
  /** A JSON request to the platform as `user` (default: the platform's admin; null: no credentials). */
  request(
    method: string,
    path: string,
    opts?: { body?: unknown; user?: { name: string; password: string } | null; headers?: Record<string, string> },
  ): Promise<Reply>
  stop(): Promise<void>
}

export interface PlatformOptions {
  users?: TestUser[]
  roles?: Record<string, unknown>
  rolesMapping?: Record<string, unknown>
  logLines?: string[]
}

export function startPlatform(opts: PlatformOptions = {}, kind: PlatformKind = 'embedded'): Promise<PlatformUnderTest> {
  return kind === 'embedded' ? startEmbeddedPlatform(opts) : startOpenSearchPlatform(opts)
}

async function startEmbeddedPlatform(opts: PlatformOptions): Promise<PlatformUnderTest> {
  const server: TestServer = await startTestServer({
    users: [{ ...SERVICE_ACCOUNT, roles: ['all_access', SERVICE_ROLE] }, ...(opts.users ?? [])],
    roles: { [SERVICE_ROLE]: SERVICE_ROLE_DEF, ...opts.roles },
    rolesMapping: {
      // The sessions DLS of svc_ai_assistant must not reach the service account, or the nodes could not
      // count anyone's sessions: the role goes to the people, not to everyone (the built-in maps it to *).
      svc_ai_assistant: { users: [ADMIN.name, ...(opts.users ?? []).map((u) => u.name)] },
      ...opts.rolesMapping,
    },
    logLines: opts.logLines,
  })
  return {
    kind: 'embedded',
    url: server.url,
    admin: server.admin,
    serviceAccount: SERVICE_ACCOUNT,
    store: server.server.app.deps.store,
    nodeSettings: {
      'storage.platform.url': server.url,
      'storage.platform.username': SERVICE_ACCOUNT.name,
      'storage.platform.password': SERVICE_ACCOUNT.password,
    },
    request: server.request,
    stop: () => server.stop(),
  }
}

/**
 * The shared real cluster, emptied first; the test's users and roles are created through the
 * security plugin's REST API and removed again at stop. Role mappings of roles the platform does
 * not have (svc-ext's own, like svc_ai_assistant) are the nodes' business, not the platform's.
 */
async function startOpenSearchPlatform(opts: PlatformOptions): Promise<PlatformUnderTest> {
  const os = await realOpenSearch('secure')
  await wipeOpenSearch(os)
  const api = '/_plugins/_security/api'
  const made: string[] = []
  const put = async (path: string, body: unknown) => {
    const r = await os.request('PUT', `${api}/${path}`, body)
    if (r.status >= 300) throw new Error(`PUT ${path}: ${r.status} ${JSON.stringify(r.body)}`)
    made.push(path)
  }
  for (const [name, def] of Object.entries(opts.roles ?? {})) await put(`roles/${name}`, def)
  for (const u of opts.users ?? [])
    await put(`internalusers/${u.name}`, {
      // A hash, not the password: the REST API's password rules (no user name inside, zxcvbn
      // strength) are the platform's policy for people, not for these test accounts.
      hash: await Bun.password.hash(u.password, { algorithm: 'bcrypt', cost: 4 }),
      backend_roles: u.backend_roles ?? [],
      opendistro_security_roles: u.roles ?? [],
      attributes: u.attributes ?? {},
    })
  for (const [role, mapping] of Object.entries(opts.rolesMapping ?? {}))
    if (opts.roles && role in opts.roles) await put(`rolesmapping/${role}`, mapping)
  // What the README asks of an operator: the sessions' DLS role on the platform, for the people
  // (never the service account, which counts everyone's sessions).
  await put(`roles/${AI_ASSISTANT_ROLE}`, {
    index_permissions: [{ index_patterns: SESSIONS_INDEX_PATTERNS, allowed_actions: ['read'], dls: SESSIONS_DLS }],
  })
  await put(`rolesmapping/${AI_ASSISTANT_ROLE}`, { users: (opts.users ?? []).map((u) => u.name) })
  const account = os.serviceAccount ?? os.admin
  const request: PlatformUnderTest['request'] = (method, path, o = {}) => {
    const user = o.user === undefined ? os.admin : o.user
    return send(os.url, method, path, { body: o.body, headers: o.headers, authorization: user ? basicAuth(user) : undefined, ca: os.ca })
  }
  const store = openPlatformStore({ url: os.urls, username: os.admin.name, password: os.admin.password, ca: os.ca })
  return {
    kind: 'opensearch',
    url: os.url,
    admin: os.admin,
    serviceAccount: account,
    store,
    nodeSettings: {
      // Every node of the cluster: a node fails over when the one it talks to is lost.
      'storage.platform.url': os.urls,
      'storage.platform.username': account.name,
      'storage.platform.password': account.password,
      'storage.platform.ssl.certificate_authorities': os.caFile,
    },
    request,
    async stop() {
      for (const path of made.reverse()) await os.request('DELETE', `${api}/${path}`)
      await store.close()
    },
  }
}

/** A node in platform mode; its security files (roles.yml for OUR actions) come from `opts`. */
export function startNode(platform: PlatformUnderTest, opts: TestServerOptions = {}): Promise<TestServer> {
  return startTestServer({ ...opts, settings: { ...platform.nodeSettings, ...opts.settings } })
}

/**
 * Runs `body` once per platform kind, each inside its own describe (the real one only where
 * OpenSearch can start), with the platform started before its tests and stopped after them.
 */
export function forEachPlatform(
  opts: PlatformOptions | (() => PlatformOptions),
  body: (platform: () => PlatformUnderTest, kind: PlatformKind) => void,
  /** Where the suite runs: both platform kinds unless a suite is about one of them. */
  kinds: readonly PlatformKind[] = PLATFORM_KINDS,
): void {
  for (const kind of kinds) {
    const wrap = kind === 'opensearch' ? describeOnOpenSearch : describe
    wrap(`on ${kind === 'opensearch' ? 'the real OpenSearch' : 'an embedded svc-ext as platform'}`, () => {
      let platform: PlatformUnderTest
      beforeAll(async () => {
        platform = await startPlatform(typeof opts === 'function' ? opts() : opts, kind)
      }, OPENSEARCH_START_MS)
      body(() => platform, kind)
      // After the body's own hooks (bun runs afterAll hooks in the order they were registered):
      // its nodes stop before the platform they use goes away.
      afterAll(() => platform?.stop(), 60_000)
    })
  }
}

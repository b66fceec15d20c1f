// A real index API over real HTTP, built by the shared test builder (test/helpers/app.ts): the
// embedded store on a temp file, the security layer with test users and roles from YAML files.
import { indexApiRoutes } from '../../src/indexer/routes'
import type { Store } from '../../src/store/port'
import { startTestApp } from '../helpers/app'

export interface TestServer {
  url: string
  store: Store
  /** fetch with the named user's credentials (`undefined` = none). */
  call(
    user: string | undefined,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: any; text: string; headers: Headers }>
  stop(): Promise<void>
}

/** The body of a call that answered `status` (200 by default); otherwise throws with what it answered. */
export async function ok(res: Promise<{ status: number; body: any }>, status = 200) {
  const r = await res
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`)
  return r.body
}

/** Lines as NDJSON text (the body of a bulk or multi-search). */
export const ndjson = (lines: unknown[]) => lines.map((l) => JSON.stringify(l) + '\n').join('')

/** Indexes the documents (each with its `_id`) into `index` in one refreshed bulk, as the admin. */
export async function indexDocs(api: TestServer, index: string, docs: Array<{ _id: string; [field: string]: unknown }>) {
  return ok(api.call('admin', 'POST', `/${index}/_bulk?refresh=true`, ndjson(docs.flatMap(({ _id, ...d }) => [{ index: { _id } }, d]))))
}

export const PASSWORD = 'Test-password-1'

export async function startIndexApi(opts: {
  roles?: string
  mapping?: string
  users: Record<string, { roles?: string[]; backend_roles?: string[] }>
}): Promise<TestServer> {
  const app = await startTestApp({
    users: Object.entries(opts.users).map(([name, u]) => ({ name, password: PASSWORD, ...u })),
    roles: opts.roles,
    rolesMapping: opts.mapping,
    node: { 'node.name': 'test-node', 'cluster.name': 'test-cluster' },
    settingsIn: 'memory',
    bootstrap: false,
    routes: (deps) => ({ pluginRoutes: [], groups: [indexApiRoutes(deps)] }),
  })
  return {
    url: app.url,
    store: app.deps.store,
    async call(user, method, path, body) {
      const r = await app.request(method, path, { body, user: user ?? null })
      return { status: r.status, body: r.body, text: r.text, headers: r.headers }
    },
    stop: () => app.stop(),
  }
}

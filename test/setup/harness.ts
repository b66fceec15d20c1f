/**
 * The Setup tests' view of a real svc-ext (test/helpers/server.ts: the full
 * composition over HTTP, bootstrap included) with the users these tests need,
 * plus direct access to its store for asserting what was written.
 */
import type { Deps } from '../../src/deps'
import { createLogger, type Logger } from '../../src/http/log'
import type { Store } from '../../src/store/port'
import { startTestServer, ADMIN } from '../helpers/server'

export const PASSWORD = 'pw-123456'

/**
 * Users: `admin` (all_access), `alice`, `bob`, `dave`, `erin` (the assistant
 * role only), `carol` (no role at all: the assistant role is mapped to the
 * four named users only), `reader` (AI assistant settings read), `writer`
 * (settings write and AI assistant settings write, plus index write on
 * `.svc-settings`), `settingsonly` (the settings action without any index right).
 */
const USERS: Record<string, string[]> = {
  alice: [],
  bob: [],
  dave: [],
  erin: [],
  carol: [],
  reader: ['ai_reader'],
  writer: ['ai_writer'],
  settingsonly: ['settings_only'],
}

const ROLES = {
  ai_reader: { cluster_permissions: ['plugin:svc/ai_assistant/settings/read'] },
  ai_writer: {
    cluster_permissions: ['plugin:svc/ai_assistant/settings/write', 'plugin:svc/settings/write'],
    index_permissions: [{ index_patterns: ['.svc-settings'], allowed_actions: ['index'] }],
  },
  settings_only: { cluster_permissions: ['plugin:svc/settings/write'] },
}

const MAPPING = {
  svc_ai_assistant: { users: ['alice', 'bob', 'dave', 'erin'] },
  ai_reader: { backend_roles: ['ai_reader'] },
  ai_writer: { backend_roles: ['ai_writer'] },
  settings_only: { backend_roles: ['settings_only'] },
}

export interface SetupServer {
  url: string
  deps: Deps
  store: Store
  /** `user` is a name from the table above (default admin); `raw` is sent as-is. */
  request(method: string, path: string, opts?: { body?: unknown; raw?: string; user?: string }): Promise<{ status: number; body: any }>
  stop(): Promise<void>
}

export const quietLog = (): Logger => createLogger({ write: () => {} })

/** Node settings are flat keys; the server is ready (setup marker `ready`) when this resolves. */
export async function startSetupServer(opts: { settings?: Record<string, unknown> } = {}): Promise<SetupServer> {
  const t = await startTestServer({
    settings: opts.settings,
    users: Object.entries(USERS).map(([name, backend_roles]) => ({ name, password: PASSWORD, backend_roles })),
    roles: ROLES,
    rolesMapping: MAPPING,
    // Some tests provoke logged failures on purpose; keep the output readable.
    logLines: [],
  })
  const deps = t.server.app.deps
  return {
    url: t.url,
    deps,
    store: deps.store,
    async request(method, path, { body, raw, user = 'admin' } = {}) {
      const credentials = user === 'admin' ? ADMIN : { name: user, password: PASSWORD }
      const r = await t.request(method, path, { body: raw ?? body, user: credentials })
      return { status: r.status, body: r.body }
    },
    stop: () => t.stop(),
  }
}

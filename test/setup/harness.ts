/**
 * A real Setup server for the tests of this folder: the embedded store, the
 * cluster settings, the security layer from files, and the Setup routes
 * assembled by the same code the product uses, behind Bun.serve.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Server } from "bun";
import type { Deps } from "../../src/app";
import { ClusterSettings, memoryPersistence } from "../../src/config/cluster-settings";
import { buildNodeConfig } from "../../src/config/node-config";
import { assembleApp } from "../../src/http/assemble";
import { createLogger, type Logger } from "../../src/http/log";
import { noteRemoteAddress } from "../../src/http/remote";
import { createSecurity } from "../../src/security";
import { openEmbeddedStore } from "../../src/store/embedded";
import type { Store } from "../../src/store/port";
import { runBootstrap } from "../../src/setup/bootstrap";
import { setupRoutes, setupServices, type SetupServices } from "../../src/setup/routes";

export const PASSWORD = "pw-123456";

/**
 * Users: `admin` (all_access), `alice`, `bob`, `dave`, `erin` (the assistant role only),
 * `carol` (no role at all: the assistant role is mapped to the four named
 * users only), `reader` (AI assistant settings read), `writer` (settings write and
 * AI assistant settings write, plus index write on `.svc-settings`),
 * `settingsonly` (the settings action without any index right).
 */
const USERS: Record<string, string[]> = {
  admin: ["admin"],
  alice: [],
  bob: [],
  dave: [],
  erin: [],
  carol: [],
  reader: ["ai_reader"],
  writer: ["ai_writer"],
  settingsonly: ["settings_only"],
};

const ROLES = `
ai_reader:
  cluster_permissions: ["plugin:svc/ai_assistant/settings/read"]
ai_writer:
  cluster_permissions: ["plugin:svc/ai_assistant/settings/write", "plugin:svc/settings/write"]
  index_permissions:
    - index_patterns: [".svc-settings"]
      allowed_actions: ["index"]
settings_only:
  cluster_permissions: ["plugin:svc/settings/write"]
`;

const MAPPING = `
svc_ai_assistant:
  users: ["alice", "bob", "dave", "erin"]
ai_reader:
  backend_roles: ["ai_reader"]
ai_writer:
  backend_roles: ["ai_writer"]
settings_only:
  backend_roles: ["settings_only"]
`;

async function writeSecurity(securityDir: string) {
  const lines = ["_meta:", "  type: internalusers", "  config_version: 2"];
  const hash = await Bun.password.hash(PASSWORD, { algorithm: "bcrypt", cost: 4 });
  for (const [name, backendRoles] of Object.entries(USERS)) {
    lines.push(`${name}:`, `  hash: ${JSON.stringify(hash)}`, `  backend_roles: ${JSON.stringify(backendRoles)}`);
  }
  writeFileSync(join(securityDir, "internal_users.yml"), lines.join("\n") + "\n");
  writeFileSync(join(securityDir, "roles.yml"), `_meta:\n  type: roles\n  config_version: 2\n${ROLES}`);
  writeFileSync(join(securityDir, "roles_mapping.yml"), `_meta:\n  type: rolesmapping\n  config_version: 2\n${MAPPING}`);
}

export interface SetupServer {
  url: string;
  deps: Deps;
  services: SetupServices;
  store: Store;
  request(method: string, path: string, opts?: { body?: unknown; raw?: string | Uint8Array; user?: string; headers?: Record<string, string> }): Promise<{ status: number; body: any }>;
  stop(): Promise<void>;
}

export const quietLog = (): Logger => createLogger({ write: () => {} });

/** Node settings (flat keys) go into the node config; the store is a file under a temp dir. */
export async function startSetupServer(opts: { settings?: Record<string, unknown>; bootstrap?: boolean } = {}): Promise<SetupServer> {
  const root = mkdtempSync(join(tmpdir(), "svc-setup-"));
  const configDir = join(root, "config");
  const dataDir = join(root, "data");
  mkdirSync(join(configDir, "security"), { recursive: true });
  mkdirSync(dataDir, { recursive: true });
  await writeSecurity(join(configDir, "security"));
  const node = buildNodeConfig({ "path.data": dataDir, ...opts.settings }, "test", configDir);
  const log = quietLog();
  const store = openEmbeddedStore(join(dataDir, "store.db"));
  const settings = new ClusterSettings(node, memoryPersistence());
  const { security } = await createSecurity({ node, dataDir, log, env: {} });
  const deps: Deps = { node, settings, store, security, log, dataDir, now: Date.now };
  if (opts.bootstrap !== false) {
    const r = await runBootstrap(deps);
    if (r.status !== "ready") throw new Error(`bootstrap ${r.status} at ${r.failedTask}`);
  }
  const services = setupServices(deps);
  const app = assembleApp({ security, log, pluginRoutes: setupRoutes(deps, services) });
  const server: Server<undefined> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    maxRequestBodySize: 64 * 1024 * 1024,
    fetch: (req, srv) => {
      noteRemoteAddress(req, srv as Server<unknown>);
      return app.handle(req);
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  return {
    url,
    deps,
    services,
    store,
    async request(method, path, { body, raw, user = "admin", headers = {} } = {}) {
      const auth = `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString("base64")}`;
      const payload = raw ?? (body === undefined ? undefined : JSON.stringify(body));
      const res = await fetch(url + path, {
        method,
        headers: { authorization: auth, ...(payload === undefined ? {} : { "content-type": "application/json" }), ...headers },
        body: payload,
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: res.status, body: parsed };
    },
    async stop() {
      server.stop(true);
      await store.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

import { join } from 'node:path'
import type { NodeConfig } from '../config/node-config'
import type { Logger } from '../http/log'
import { initialAdmin, INITIAL_ADMIN } from './initial-admin'
import { loadSecurityFiles, securityDir, securityReloader, type ReloadResult } from './load-config'
import { Policy } from './policy'
import { SecurityService, type AuthSettings, type Generation } from './service'
import { SECURITY_FILES } from './config-schema'

export { SecurityService, type AuthSettings } from './service'
export { SecurityConfigError, type ReloadResult } from './load-config'
export * from './actions'
export { ALL_ACCESS, AI_ASSISTANT_ROLE } from './builtin-roles'

export interface SecurityOptions {
  node: Pick<NodeConfig, 'values' | 'configDir'>
  dataDir: string
  log: Logger
  env?: Record<string, string | undefined>
  now?: () => number
}

export interface SecurityHandle {
  security: SecurityService
  /** Lines to print at start when the first-start admin is in use. */
  loginHints: string[]
  /** Re-reads the security files (SIGHUP); on any error the running configuration stays and the error is logged. Never throws. */
  reload(): Promise<void>
  /** Same as reload, telling whether the new files were taken. */
  tryReload(): Promise<ReloadResult>
}

export function authSettingsFrom(values: Map<string, unknown>): AuthSettings {
  const n = (key: string) => Number(values.get(key))
  return {
    cacheTtlSeconds: n('security.auth_cache.ttl_seconds'),
    cacheMaxEntries: n('security.auth_cache.max_entries'),
    maxFailedAttempts: n('security.auth_failures.max_attempts'),
    blockSeconds: n('security.auth_failures.block_seconds'),
  }
}

/**
 * Loads `<configDir>/security/*.yml` (a malformed file stops the start with
 * SecurityConfigError naming file and line) and builds the security layer.
 */
export async function createSecurity(opts: SecurityOptions): Promise<SecurityHandle> {
  const env = opts.env ?? process.env
  const build = () => buildGeneration(opts.node.configDir, opts.dataDir, env, opts.log)
  const security = new SecurityService(await build(), authSettingsFrom(opts.node.values), opts.log, opts.now)
  const tryReload = securityReloader(opts.node.configDir, opts.log, async () => security.install(await build()))
  return {
    security,
    get loginHints() {
      return security.loginHint ? [security.loginHint] : []
    },
    reload: async () => {
      await tryReload()
    },
    tryReload,
  }
}

async function buildGeneration(
  configDir: string,
  dataDir: string,
  env: Record<string, string | undefined>,
  log: Logger,
): Promise<Generation> {
  const { config, hasUsersFile } = await loadSecurityFiles(configDir)
  if (hasUsersFile) return { policy: new Policy(config), users: config.users }
  const usersFile = join(securityDir(configDir), SECURITY_FILES.internalUsers.file)
  const admin = await initialAdmin(dataDir, env, usersFile)
  // The message carries where the password is, never the password.
  if ('file' in admin.source) {
    log.info(
      admin.source.created
        ? 'first start: generated the initial admin password'
        : 'no internal users file: using the initial admin password',
      {
        user: INITIAL_ADMIN,
        file: admin.source.file,
      },
    )
  } else {
    log.info('no internal users file: initial admin password taken from the environment', {
      user: INITIAL_ADMIN,
      variable: admin.source.env,
    })
  }
  const users = { [INITIAL_ADMIN]: admin.user }
  return { policy: new Policy({ ...config, users }), users, loginHint: admin.hint }
}

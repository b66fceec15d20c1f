import { readFileSync } from 'node:fs'
/**
 * Platform-mode security: `createPlatformSecurity` mirrors `createSecurity` (same handle), built
 * on the platform's authinfo instead of internal_users.yml.
 */
import type { NodeConfig } from '../../config/node-config'
import type { Logger } from '../../http/log'
import type { SecurityHandle } from '..'
import { loadSecurityFiles, securityReloader } from '../load-config'
import { Policy } from '../policy'
import { endpointAt, type PlatformEndpoint } from './endpoint'
import { PlatformSecurity } from './security'

export { PlatformSecurity, PLATFORM_UNAVAILABLE } from './security'
export { askAuthInfo, AuthInfo, AUTHINFO_PATH } from './authinfo'
export { forwardToPlatform } from './forward'
export { platformRouter, servedLocally } from './router'
export {
  callerStore,
  platformDecides,
  securityRefusal,
  storeAs,
  type CallerRights,
  type CallerStores,
  type SecurityRefusal,
} from './caller-store'
export { endpointAt, type PlatformEndpoint } from './endpoint'

/** `storage.platform.url`: the platform's nodes; none means embedded mode. */
export const platformUrls = (values: ReadonlyMap<string, unknown>): string[] =>
  (values.get('storage.platform.url') as string[] | undefined) ?? []

export interface PlatformSecurityHandle extends Omit<SecurityHandle, 'security'> {
  security: PlatformSecurity
}

export function platformEndpoint(values: Map<string, unknown>): PlatformEndpoint {
  const caFile = values.get('storage.platform.ssl.certificate_authorities')
  return endpointAt(platformUrls(values), {
    insecure: values.get('storage.platform.insecure') === true,
    // Read once at start, as OpenSearch reads its own PEM files; a missing file stops the start.
    ca: typeof caFile === 'string' && caFile !== '' ? readFileSync(caFile, 'utf8') : undefined,
  })
}

/** Users live on the platform: internal_users.yml, if present, is not read in this mode. */
async function loadPolicy(configDir: string): Promise<Policy> {
  const { config } = await loadSecurityFiles(configDir)
  return new Policy({ ...config, users: {} })
}

export async function createPlatformSecurity(opts: {
  node: Pick<NodeConfig, 'values' | 'configDir'>
  log: Logger
  endpoint?: PlatformEndpoint
  now?: () => number
}): Promise<PlatformSecurityHandle> {
  const values = opts.node.values
  const security = new PlatformSecurity(
    opts.endpoint ?? platformEndpoint(values),
    await loadPolicy(opts.node.configDir),
    {
      cacheTtlSeconds: Number(values.get('security.auth_cache.ttl_seconds')),
      cacheMaxEntries: Number(values.get('security.auth_cache.max_entries')),
    },
    opts.log,
    opts.now,
  )
  const tryReload = securityReloader(opts.node.configDir, opts.log, async () => security.install(await loadPolicy(opts.node.configDir)))
  return { security, loginHints: [], reload: async () => void (await tryReload()), tryReload }
}

// GET /version/check (reference 4.12): the release updates of the installed version from the CTI
// API, reduced to the last release of each kind. CTI errors are passed through with their status.
import type { ClusterSettings } from '../../config/cluster-settings'
import { envelope, json } from '../../http/errors'
import type { Logger } from '../../http/log'
import { route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../../security/actions'
import { VERSION } from '../../version'
import { CtiClient } from '../cti/client'
import type { CtiCredentials } from '../cti/credentials'
import { CtiError } from '../cti/errors'

export const VERSION_CHECK_PATH = '/_plugins/_content_manager/version/check'

export interface VersionCheckDeps {
  settings: ClusterSettings
  log: Logger
  credentials: CtiCredentials
  clusterUuid: () => Promise<string>
  now: () => number
  /** The installed version (tests vary it); defaults to the version file. */
  version?: () => string
}

const last = <T>(list: T[] | undefined): T | Record<string, never> => (list && list.length > 0 ? list[list.length - 1] : {})

export function versionCheckRoutes(deps: VersionCheckDeps): PluginRoute[] {
  return [
    route('GET', VERSION_CHECK_PATH, CONTENT_MANAGER_ACTIONS.versionCheck, async () => {
      const version = (deps.version ?? (() => VERSION))().trim()
      if (!version) return envelope(500, 'Unable to determine current svc version.')
      const s = await deps.settings.snapshot()
      const uuid = await deps.clusterUuid()
      const cti = new CtiClient(s, {
        credentials: deps.credentials,
        log: deps.log,
        clusterUuid: uuid,
        version,
        interactive: true,
      })
      try {
        const updates = await cti.releaseUpdates()
        return {
          message: {
            uuid,
            last_check_date: new Date(deps.now()).toISOString(),
            current_version: cti.tag,
            last_available_major: last(updates.major),
            last_available_minor: last(updates.minor),
            last_available_patch: last(updates.patch),
          },
          status: 200,
        }
      } catch (e) {
        if (!(e instanceof CtiError)) throw e
        if (e.kind === 'http' || e.kind === 'rate_limited') {
          const status = e.status !== undefined && e.status >= 400 && e.status <= 599 ? e.status : 502
          let body: unknown
          try {
            body = JSON.parse(e.body ?? '')
          } catch {
            body = { message: e.body || `CTI API answered ${e.status}`, status }
          }
          return json(body, status)
        }
        if (e.kind === 'bad_payload') return envelope(502, 'The CTI API answered the update check with an unexpected body.')
        deps.log.warn('update check failed: CTI API unreachable', { error: e.message })
        return envelope(500, 'Unable to reach the CTI API to check for updates.')
      }
    }),
  ]
}

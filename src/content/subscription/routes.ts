// Subscription (spec "Subscription", reference 4.11): GET tells whether an access token is held
// and which plan applies; POST stores a token (Base64 in `.svc-internal-state`) and starts a sync
// so the plan's content arrives; DELETE forgets it. The token never appears in an answer or a log.
import { t } from 'elysia'
import type { ClusterSettings } from '../../config/cluster-settings'
import { ApiError, envelope } from '../../http/errors'
import type { BodyLimit } from '../../http/body'
import type { Logger } from '../../http/log'
import { objectBody, route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../../security/actions'
import { CtiClient } from '../cti/client'
import type { CtiCredentials } from '../cti/credentials'

export const SUBSCRIPTION_PATH = '/_plugins/_content_manager/subscription'
/** What `perform_permission_check=true` evaluates on POST (spec Authentication 4). */
export const SUBSCRIPTION_POST_GROUP = 'plugin:content_manager/subscription/post'
const BODY: BodyLimit = { limit: 64 * 1024, status: 413 }
const MISSING_TOKEN = 'Missing [access_token] field.'
export const SubscriptionBody = t.Object({ access_token: t.String({ message: MISSING_TOKEN }) })

export interface SubscriptionDeps {
  settings: ClusterSettings
  log: Logger
  credentials: CtiCredentials
  clusterUuid: () => Promise<string>
  /** Starts a pass for the new registration (retrying while a pass runs); called only when scheduled updates are on. */
  onRegistered(): void
}

export function subscriptionRoutes(deps: SubscriptionDeps): PluginRoute[] {
  const get = route('GET', SUBSCRIPTION_PATH, CONTENT_MANAGER_ACTIONS.subscriptionGet, async () => {
    const s = await deps.settings.snapshot()
    const cti = new CtiClient(s, { credentials: deps.credentials, log: deps.log, clusterUuid: await deps.clusterUuid(), interactive: true })
    let registered = await deps.credentials.isRegistered()
    let plan: { name: string | null; is_public: boolean } = { name: null, is_public: !registered }
    if (registered) {
      const answer = await cti.environmentPlan()
      if ('rejected' in answer) {
        deps.log.warn('CTI console rejected the access token; credentials removed', {})
        await deps.credentials.remove()
        registered = false
      } else if ('plan' in answer) plan = { name: answer.plan.name, is_public: answer.plan.is_public ?? false }
      else plan = { name: null, is_public: false }
    }
    if (!registered) {
      const pub = await cti.publicPlan()
      plan = { name: pub?.name ?? null, is_public: true }
    }
    return { message: { plan, is_registered: registered }, status: 200 }
  })

  const post = route(
    'POST',
    SUBSCRIPTION_PATH,
    CONTENT_MANAGER_ACTIONS.subscriptionCreate,
    async ({ body }) => {
      // Blank is missing too (reference 4.1); the schema cannot say so and still give the walk a sample.
      const token = body.access_token.trim()
      if (token === '') throw new ApiError(400, MISSING_TOKEN)
      await deps.credentials.save(token)
      deps.log.info('CTI access token registered', {})
      const s = await deps.settings.snapshot()
      if (s.bool('plugins.content_manager.catalog.update_on_schedule')) deps.onRegistered()
      return envelope(201, 'Access token received successfully.')
    },
    objectBody(BODY, SubscriptionBody),
  )

  const del = route('DELETE', SUBSCRIPTION_PATH, CONTENT_MANAGER_ACTIONS.subscriptionDelete, async () => {
    try {
      await deps.credentials.remove()
    } catch (e) {
      throw new ApiError(500, (e as Error).message)
    }
    deps.log.info('CTI access token removed', {})
    return envelope(200, 'Credentials removed')
  })

  return [get, { ...post, permissionCheck: SUBSCRIPTION_POST_GROUP }, del]
}

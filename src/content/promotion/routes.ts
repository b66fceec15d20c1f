// `GET /promote?space=` (preview) and `POST /promote` (execute).
import type { BodyLimit } from '../../http/body'
import { envelope } from '../../http/errors'
import { objectBody, route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../../security/actions'
import type { ContentContext } from '../context'
import { parsePromoteRequest, PromoteBody } from './request'
import { PromotionService } from './service'

const PREFIX = '/_plugins/_content_manager'
/** Changesets list ids only; a few MiB covers hundreds of thousands of them. */
const PROMOTE_BODY: BodyLimit = { limit: 4 * 1024 * 1024, status: 413 }

export function promotionRoutes(ctx: ContentContext, service = new PromotionService(ctx)): PluginRoute[] {
  return [
    route('GET', `${PREFIX}/promote`, CONTENT_MANAGER_ACTIONS.promoteGet, async ({ query }) => service.preview(query.space)),
    route(
      'POST',
      `${PREFIX}/promote`,
      CONTENT_MANAGER_ACTIONS.promoteCreate,
      async ({ body, caller }) => envelope(200, await service.promote(body, caller)),
      objectBody(PROMOTE_BODY, PromoteBody, { parse: parsePromoteRequest }),
    ),
  ]
}

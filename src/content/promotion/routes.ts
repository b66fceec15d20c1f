// `GET /promote?space=` (preview) and `POST /promote` (execute).
import { decodeUtf8, parseJson, readBody, type BodyLimit } from '../../http/body'
import { ApiError, envelope } from '../../http/errors'
import { route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS } from '../../security/actions'
import type { ContentContext } from '../context'
import { parsePromoteRequest, PromoteBody } from './request'
import { PromotionService } from './service'

const PREFIX = '/_plugins/_content_manager'
/** Changesets list ids only; a few MiB covers hundreds of thousands of them. */
const PROMOTE_BODY: BodyLimit = { limit: 4 * 1024 * 1024, status: 413 }

async function readPromoteBody(request: Request): Promise<unknown> {
  const bytes = await readBody(request, PROMOTE_BODY)
  try {
    const text = decodeUtf8(bytes)
    if (text.trim() === '') throw new Error('empty')
    return parseJson(text)
  } catch {
    throw new ApiError(400, 'Invalid request body.')
  }
}

export function promotionRoutes(ctx: ContentContext, service = new PromotionService(ctx)): PluginRoute[] {
  return [
    route('GET', `${PREFIX}/promote`, CONTENT_MANAGER_ACTIONS.promoteGet, async ({ query }) => service.preview(query.space)),
    route(
      'POST',
      `${PREFIX}/promote`,
      CONTENT_MANAGER_ACTIONS.promoteCreate,
      async ({ request, caller }) => {
        const promotion = parsePromoteRequest(await readPromoteBody(request))
        return envelope(200, await service.promote(promotion, caller))
      },
      { limit: PROMOTE_BODY, schema: PromoteBody },
    ),
  ]
}

// `POST /logtest`, `/logtest/normalization` and `/logtest/detection` (reference 4.9).
import { json } from '../../http/errors'
import { route, type PluginRoute } from '../../http/route'
import { CONTENT_MANAGER_ACTIONS, RULESET_ACTIONS } from '../../security/actions'
import type { ContentContext } from '../context'
import { LogtestPool } from './pool'
import { combinedRequest, detectionRequest, logtestBody, normalizationRequest } from './request'
import { LogtestService } from './service'

const PREFIX = '/_plugins/_content_manager/logtest'

export function logtestRoutes(ctx: ContentContext, service = new LogtestService(ctx), pool = new LogtestPool()): PluginRoute[] {
  // Detection runs `rules/evaluate` on the caller's behalf, so the routes that can reach it need
  // that action too (the `logtest` and `logtest/detection` groups grant it).
  const evaluates = (r: PluginRoute): PluginRoute => ({ ...r, alsoRequires: [RULESET_ACTIONS.rulesEvaluate] })

  return [
    evaluates(
      route(
        'POST',
        PREFIX,
        CONTENT_MANAGER_ACTIONS.logtest,
        async ({ body: req }) => ({ message: await pool.run(() => service.combined(req.space, req.integration, req.engine)), status: 200 }),
        logtestBody(ctx.settings, combinedRequest),
      ),
    ),

    route(
      'POST',
      `${PREFIX}/normalization`,
      CONTENT_MANAGER_ACTIONS.logtestNormalization,
      async ({ body: req }) => {
        const answer = await pool.run(() => service.normalize(req.engine))
        return json({ message: answer.message, status: answer.status }, answer.status)
      },
      logtestBody(ctx.settings, normalizationRequest),
    ),

    evaluates(
      route(
        'POST',
        `${PREFIX}/detection`,
        CONTENT_MANAGER_ACTIONS.logtestDetection,
        async ({ body: req }) => ({ message: await pool.run(() => service.detect(req.space, req.integration, req.input)), status: 200 }),
        logtestBody(ctx.settings, detectionRequest),
      ),
    ),
  ]
}

/**
 * `GET /_prometheus/metrics`: authenticated and authorized like the exporter plugin's endpoint
 * (`cluster:monitor/prometheus/metrics`, which `cluster_monitor` and all_access hold), errors in
 * OpenSearch's shape.
 */
import type { IndexApiDeps } from '../indexer/context'
import { IndexRouter, Reply } from '../indexer/router'
import { OPERATIONS_ACTIONS } from '../security/actions'
import type { Metrics } from '.'

export const PROMETHEUS_METRICS_PATH = '/_prometheus/metrics'

export function metricsRoutes(deps: IndexApiDeps, metrics: Metrics) {
  const r = new IndexRouter(deps, 'prometheus-metrics')
  r.on('GET', PROMETHEUS_METRICS_PATH, async (ctx) => {
    await ctx.authorizeCluster(OPERATIONS_ACTIONS.prometheusMetrics)
    return new Reply(200, await metrics.scrape(), metrics.contentType)
  })
  return r.app
}

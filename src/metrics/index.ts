/**
 * The node's metrics in the Prometheus text format, served at `GET /_prometheus/metrics` (the
 * path of OpenSearch's Prometheus exporter plugin, under its action name). prom-client renders
 * the format and provides the process metrics (`process_resident_memory_bytes`,
 * `nodejs_eventloop_lag_*` from the event-loop delay monitor), which work unchanged under Bun.
 */
import { collectDefaultMetrics, Registry } from 'prom-client'
import { httpMetrics, type HttpMetrics, routeLabeler, type RoutePattern } from './http'
import { type MetricSources, registerSources } from './sources'

export interface Metrics {
  http: HttpMetrics
  contentType: string
  /** Reads the sources, then renders every metric. */
  scrape(): Promise<string>
}

export function createMetrics(opts: {
  routes: () => RoutePattern[]
  sources: MetricSources
  /** Counters a feature keeps itself (notification deliveries), registered here. */
  collectors?: Array<{ register(registry: Registry): void }>
}): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 })
  const http = httpMetrics(registry, routeLabeler(opts.routes), opts.sources.now)
  const refresh = registerSources(registry, opts.sources)
  for (const c of opts.collectors ?? []) c.register(registry)
  return {
    http,
    contentType: registry.contentType,
    async scrape() {
      await refresh()
      return registry.metrics()
    },
  }
}

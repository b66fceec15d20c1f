/**
 * HTTP request metrics. Labels are the route pattern (`/:index/_doc/:id`), never the raw path, so
 * the number of series is bounded by the routes served, whatever the clients send.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client'
import { remoteAddressOf } from '../http/remote'

export interface RoutePattern {
  method: string
  path: string
}

/** Maps a request to the pattern of the route that serves it; `unmatched` for anything else. */
export function routeLabeler(routes: () => RoutePattern[]): (method: string, path: string) => string {
  const segment = (s: string) => (s.startsWith(':') ? '[^/]+' : s === '*' ? '.*' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
  const params = (p: string) => p.split('/').filter((s) => s.startsWith(':') || s === '*').length
  // Static segments win over parameters, as in the router: fewer parameters are tried first.
  // Built at the first request: the routes are known only once the app is assembled.
  let table: Array<{ path: string; re: RegExp }> | undefined
  const build = () =>
    [...new Set(routes().map((r) => r.path))]
      .sort((a, b) => params(a) - params(b))
      .map((path) => ({ path, re: new RegExp(`^${path.split('/').map(segment).join('/')}/?$`) }))
  return (_method, path) => (table ??= build()).find((t) => t.re.test(path))?.path ?? 'unmatched'
}

/** Addresses answered "too many failed attempts" are remembered this long (the limiter's default block). */
const THROTTLED_WINDOW_MS = 5 * 60_000
const THROTTLED_MAX = 10_000

export interface HttpMetrics {
  /** Wraps the node's request handler so that every answer is counted and timed. */
  instrument(handler: (request: Request) => Promise<Response>): (request: Request) => Promise<Response>
}

export function httpMetrics(registry: Registry, label: (method: string, path: string) => string, now = Date.now): HttpMetrics {
  const duration = new Histogram({
    name: 'svc_http_request_duration_seconds',
    help: 'Time to answer an HTTP request (until the response headers), by method, route pattern and status; _count is the request count.',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  })
  const authFailures = new Counter({
    name: 'svc_auth_failures_total',
    help: 'Requests refused with 401: credentials given but wrong (invalid_credentials) or none given (missing_credentials).',
    labelNames: ['reason'],
    registers: [registry],
  })
  const throttled = new Counter({
    name: 'svc_auth_throttled_requests_total',
    help: 'Requests refused with 429 because their address failed authentication too often.',
    registers: [registry],
  })
  // address -> when it was last refused; insertion order is age order, so the oldest go first.
  const recent = new Map<string, number>()
  const forgetOld = () => {
    for (const [address, at] of recent) {
      if (at > now() - THROTTLED_WINDOW_MS && recent.size <= THROTTLED_MAX) break
      recent.delete(address)
    }
  }
  new Gauge({
    name: 'svc_auth_throttled_addresses',
    help: `Distinct client addresses refused for too many failed authentications in the last ${THROTTLED_WINDOW_MS / 60_000} minutes.`,
    registers: [registry],
    collect() {
      forgetOld()
      this.set(recent.size)
    },
  })

  const observe = (request: Request, status: number, seconds: number) => {
    const url = new URL(request.url)
    duration.observe({ method: request.method, route: label(request.method, url.pathname), status: String(status) }, seconds)
    if (status === 401) authFailures.inc({ reason: request.headers.has('authorization') ? 'invalid_credentials' : 'missing_credentials' })
    if (status === 429) {
      throttled.inc()
      const address = remoteAddressOf(request)
      if (address) {
        recent.delete(address)
        recent.set(address, now())
        forgetOld()
      }
    }
  }

  return {
    instrument: (handler) => async (request) => {
      const started = performance.now()
      try {
        const response = await handler(request)
        observe(request, response.status, (performance.now() - started) / 1000)
        return response
      } catch (e) {
        observe(request, 500, (performance.now() - started) / 1000)
        throw e
      }
    },
  }
}

import { Elysia } from 'elysia'
import type { Security } from './caller'
import type { Logger } from './log'
import { envelope, errorAnswer, errorResponseOf, hasOpenSearchType, json } from './errors'
import { runPluginRoute, type PluginRoute } from './route'
import { remoteAddressOf } from './remote'

/** Bodies are read by the routes themselves (with their own limits), never by the framework. */
const UNPARSED = Symbol('unparsed')

const isPluginPath = (path: string) => path.startsWith('/_plugins/')

/**
 * Turns anything a route threw into its family's answer (errorAnswer); unexpected errors are logged.
 * The index API answers its own errors; the other groups (metrics, snapshots) answer the envelope,
 * but a store error keeps OpenSearch's shape there.
 */
export function errorResponse(error: unknown, path: string, log: Logger): Response {
  const answer = errorAnswer(error, isPluginPath(path) || !hasOpenSearchType(error) ? 'plugin' : 'index')
  if (answer.unexpected) {
    log.error('unhandled error', { path, error: error instanceof Error ? { message: error.message, stack: error.stack } : String(error) })
  }
  return errorResponseOf(answer)
}

function patternToRegExp(path: string): RegExp {
  const src = path
    .split('/')
    .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg === '*' ? '.*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${src}/?$`)
}

export interface AssembleOptions {
  security: Security
  log: Logger
  pluginRoutes: PluginRoute[]
  /** Other route groups (index API, root) that do their own authorization. */
  groups?: Elysia<any, any, any, any, any, any, any>[]
}

/**
 * Builds the Elysia app: every plugin route wrapped with its authorization,
 * the other groups mounted, and one error handler that answers 404/405 and
 * maps typed errors to the spec's envelope or OpenSearch's error shape.
 */
export function assembleApp({ security, log, pluginRoutes, groups = [] }: AssembleOptions) {
  const app = new Elysia().onParse(() => UNPARSED as never)
  // Elysia applies error hooks only to routes registered after them, so the handler comes first.
  const known = () => app.routes.map((r) => ({ method: r.method.toUpperCase(), re: patternToRegExp(r.path) }))
  let table: ReturnType<typeof known> | undefined

  app.onError(({ code, error, request }) => {
    const path = new URL(request.url).pathname
    if (code === 'NOT_FOUND') {
      table ??= known()
      const allowed = [...new Set(table.filter((t) => t.re.test(path)).map((t) => t.method))]
      if (allowed.length > 0) {
        return envelope(405, `Incorrect HTTP method for uri [${path}] and method [${request.method}], allowed: [${allowed.join(', ')}]`)
      }
      return envelope(404, `no handler found for uri [${path}] and method [${request.method}]`)
    }
    if (code === 'PARSE') return envelope(400, 'Invalid request body.')
    return errorResponse(error, path, log)
  })
  for (const r of pluginRoutes) {
    const handler = ({ request, params, query }: any) =>
      runPluginRoute(r, security, { request, params: decodeParams(params), query, remoteAddress: remoteAddressOf(request) })
    app.route(r.method, r.path, handler)
  }
  for (const g of groups) app.use(g)

  return app
}

function decodeParams(params: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(params ?? {})) {
    try {
      out[k] = decodeURIComponent(v)
    } catch {
      out[k] = v
    }
  }
  return out
}

export { json }

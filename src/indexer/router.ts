/**
 * The index API's routing: every handler runs behind authentication and answers errors in
 * OpenSearch's shape (`{error: {root_cause, type, reason, ...}, status}`) itself, so the
 * metadata of typed store errors (`index`, `resource.id`, ...) survives.
 */
import type { Counted } from './status-counter'
import { jsonBody } from '../http/json-body'
import { Elysia } from 'elysia'
import type { TSchema } from '@sinclair/typebox'
import { failureOf } from '../http/validate'
import { errorAnswer } from '../http/errors'
import { remoteAddressOf } from '../http/remote'
import { badRequest, RequestContext, type IndexApiDeps } from './context'
import { nodeIdFrom } from './node-info'

export type Method = 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE'

/** A handler's answer with a status other than 200 (201 for created documents, 404 for a missing one). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly contentType = 'application/json; charset=UTF-8',
  ) {}
}

export type Handler = (ctx: RequestContext) => Promise<unknown> | unknown

const JSON_TYPE = 'application/json; charset=UTF-8'

function respond(
  method: string,
  status: number,
  body: unknown,
  pretty: boolean,
  contentType = JSON_TYPE,
  headers: Record<string, string> = {},
): Response {
  // HEAD answers carry the status only; OpenSearch sends no body.
  if (method === 'HEAD') return new Response(null, { status, headers: { 'content-type': contentType, ...headers } })
  const text =
    typeof body === 'string' && !contentType.includes('json') ? body : pretty ? JSON.stringify(body, null, 2) + '\n' : jsonBody(body)
  return new Response(text, { status, headers: { 'content-type': contentType, ...headers } })
}

export class IndexRouter {
  readonly app: Elysia<''>

  /** `name` must differ per router: Elysia mounts only the first plugin of a given name. */
  constructor(
    private readonly deps: IndexApiDeps,
    name = 'index-api',
  ) {
    this.app = new Elysia({ name })
  }

  /** `counts`: the route's answers are counted in the node's status counter (its document writes, its searches). */
  on(methods: Method | Method[], paths: string | string[], handler: Handler, counts?: Counted): this {
    for (const method of [methods].flat()) {
      for (const path of [paths].flat()) {
        this.app.route(method, path, async ({ request, params }: { request: Request; params: Record<string, string> }) => {
          const response = await this.run(handler, request, params ?? {})
          if (counts) this.deps.statusCounter?.note(counts, response.status)
          return response
        })
      }
    }
    return this
  }

  private async run(handler: Handler, request: Request, params: Record<string, string>): Promise<Response> {
    const pretty = /[?&]pretty(=true|=|&|$)/.test(request.url)
    try {
      const caller = await this.deps.security.authenticate(request, remoteAddressOf(request))
      const ctx = new RequestContext(this.deps, request, params, caller)
      const result = await handler(ctx)
      if (result instanceof Response) return result
      if (result instanceof Reply) return respond(request.method, result.status, result.body, pretty, result.contentType)
      return respond(request.method, 200, result, pretty)
    } catch (error) {
      const answer = errorAnswer(error, 'index', nodeIdFrom(this.deps.node.values))
      if (answer.unexpected) {
        this.deps.log.error('index API request failed', {
          method: request.method,
          path: new URL(request.url).pathname,
          error: error instanceof Error ? { message: error.message, stack: error.stack } : String(error),
        })
      }
      return respond(request.method, answer.status, answer.body, pretty, JSON_TYPE, answer.headers)
    }
  }
}

/** Checks a body against a port schema (the plugin routes' validation); the first problem becomes OpenSearch's 400 naming the field. */
export function validate<T>(schema: TSchema, value: unknown, what: string): T {
  const failure = failureOf(schema, value)
  if (!failure) return value as T
  const where = 'field' in failure && failure.field ? ` field [${failure.field}]` : ''
  throw badRequest(`[${what}] failed to parse${where}: ${'worded' in failure ? failure.worded : failure.why}`, 'x_content_parse_exception')
}

import { describe, expect, test } from 'bun:test'
import { errorResponse } from '../../src/http/assemble'
import { ApiError, errorAnswer, OpenSearchHttpError, UnsupportedContentType } from '../../src/http/errors'
import { EngineError, engineFailure, EngineRefused, EngineTimeout, EngineUnavailable } from '../../src/content/engine'
import { IndexNotFound, StoreError, VersionConflict } from '../../src/store/errors'
import { capturingLogger } from '../security/helpers'

const answer = async (r: Response) => ({ status: r.status, body: (await r.json()) as any })

describe('errorResponse', () => {
  test('API errors answer their own envelope on every path', async () => {
    const { log } = capturingLogger()
    expect(await answer(errorResponse(new ApiError(409, 'conflict', {}, { id: 'x' }), '/_plugins/_setup/x', log))).toEqual({
      status: 409,
      body: { message: 'conflict', status: 409, id: 'x' },
    })
  })

  test("store errors below 500 keep their reason on plugin routes and OpenSearch's shape on the index API", async () => {
    const { log } = capturingLogger()
    const conflict = new VersionConflict('[1]: version conflict', 'idx')
    expect(await answer(errorResponse(conflict, '/_plugins/_setup/ai_assistant/sessions/1', log))).toEqual({
      status: 409,
      body: { message: conflict.reason, status: 409 },
    })
    expect((await answer(errorResponse(conflict, '/idx/_doc/1', log))).body.error.type).toBe('version_conflict_engine_exception')
  })

  test('store failures of the 5xx kind are logged and answered generically on plugin routes', async () => {
    const { log, lines } = capturingLogger()
    const broken = new StoreError('io_exception', 500, 'disk I/O error at /var/lib/svc/store.db')
    expect(await answer(errorResponse(broken, '/_plugins/_setup/ai_assistant/sessions', log))).toEqual({
      status: 500,
      body: { message: 'Internal Server Error.', status: 500 },
    })
    expect(
      await answer(errorResponse(new OpenSearchHttpError(503, 'x', 'shard /var/lib down'), '/_plugins/_content_manager/promote', log)),
    ).toEqual({
      status: 500,
      body: { message: 'Internal Server Error.', status: 500 },
    })
    expect(lines.filter((l) => l.includes('unhandled error'))).toHaveLength(2)
    expect(lines.join('\n')).toContain('disk I/O error')
    // The index API answers as OpenSearch does, reason included.
    expect((await answer(errorResponse(broken, '/idx/_search', log))).body.error.reason).toBe(broken.reason)
  })

  test('anything else is a logged 500 without its message', async () => {
    const { log, lines } = capturingLogger()
    expect(await answer(errorResponse(new TypeError('x is not a function'), '/_plugins/_setup/settings', log))).toEqual({
      status: 500,
      body: { message: 'Internal Server Error.', status: 500 },
    })
    expect(lines.join('\n')).toContain('x is not a function')
  })
})

describe('errorAnswer', () => {
  test("the index API: store errors with their metadata, ApiErrors typed by status, a refused Content-Type in OpenSearch's words", () => {
    const missing = errorAnswer(new IndexNotFound('logs'), 'index')
    expect(missing).toEqual({ status: 404, body: { error: new IndexNotFound('logs').toOpenSearch(), status: 404 } })
    expect((missing.body as any).error['resource.id']).toBe('logs')
    const typeOf = (status: number) => (errorAnswer(new ApiError(status, 'm'), 'index').body as any).error.type
    expect([401, 403, 413, 409].map(typeOf)).toEqual([
      'security_exception',
      'security_exception',
      'content_too_long_exception',
      'status_exception',
    ])
    expect(errorAnswer(new UnsupportedContentType('text/plain'), 'index').body).toEqual({
      error: 'Content-Type header [text/plain] is not supported',
      status: 406,
    })
    expect(errorAnswer(new OpenSearchHttpError(400, 'parsing_exception', 'bad', { line: 1 }), 'index').body).toEqual({
      error: { root_cause: [{ type: 'parsing_exception', reason: 'bad', line: 1 }], type: 'parsing_exception', reason: 'bad', line: 1 },
      status: 400,
    })
    expect(errorAnswer(new TypeError('boom'), 'index')).toMatchObject({ status: 500, unexpected: true })
  })

  test('by class, not by shape: an object that merely looks like a store error is an unexpected 500', () => {
    const lookalike = { status: 404, type: 'index_not_found_exception', reason: 'no such index [x]' }
    expect(errorAnswer(lookalike, 'plugin')).toMatchObject({ status: 500, unexpected: true })
    expect(errorAnswer(lookalike, 'index')).toMatchObject({ status: 500, unexpected: true })
  })
})

describe('engineFailure', () => {
  test("the Engine's error status and words when it refused, 502 for a reply it cannot use, 500 for local failures", () => {
    const answer = (e: EngineError, type?: string) => ({ status: engineFailure(e, type).status, message: engineFailure(e, type).message })
    expect(answer(new EngineRefused(400, 'bad policy'))).toEqual({ status: 400, message: 'bad policy' })
    expect(answer(new EngineRefused(503, 'busy'))).toEqual({ status: 503, message: 'busy' })
    expect(answer(new EngineRefused(302, 'moved'))).toEqual({ status: 502, message: 'moved' })
    expect(answer(new EngineTimeout(1000)).status).toBe(500)
    expect(answer(new EngineUnavailable('/s.sock', 'absent'))).toMatchObject({ status: 500 })
    expect(answer(new EngineUnavailable('/s.sock', 'absent')).message).toContain('The Engine cannot be reached')
  })

  test("a resource write's failure, whatever it is, is the resource's 400 with the spec's prefix", () => {
    for (const e of [
      new EngineRefused(400, 'field x is not in the common schema'),
      new EngineUnavailable('/s.sock', 'denied'),
      new EngineTimeout(5),
    ]) {
      const f = engineFailure(e, 'decoder')
      expect(f.status).toBe(400)
      expect(f.message).toStartWith(`Engine validation failed for decoder: ${e.message}`)
    }
  })
})

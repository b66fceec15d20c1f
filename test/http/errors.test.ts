import { describe, expect, test } from 'bun:test'
import { errorResponse } from '../../src/http/assemble'
import { ApiError, OpenSearchHttpError } from '../../src/http/errors'
import { StoreError, VersionConflict } from '../../src/store/errors'
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

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SETTINGS_INDEX } from '../../src/setup/indices'
import { startSetupServer, type SetupServer } from './harness'

const PATH = '/_plugins/_setup/settings'
let srv: SetupServer
beforeAll(async () => {
  srv = await startSetupServer()
})
afterAll(() => srv.stop())

const storedDocs = async (s: SetupServer) =>
  (await s.store.search({ index: SETTINGS_INDEX, expand_wildcards: 'all', body: { query: { match_all: {} } } })).hits.hits

describe('PUT /_plugins/_setup/settings', () => {
  test('200 and the Settings record in .svc-settings id 1, readable with _search; unknown keys are not stored', async () => {
    const r = await srv.request('PUT', PATH, { body: { engine: { index_raw_events: true, other: 1 }, extra: 'x' } })
    expect(r).toEqual({ status: 200, body: { message: 'Settings updated successfully.', status: 200 } })
    const hits = await storedDocs(srv)
    expect(hits.map((h) => [h._id, h._source])).toEqual([['1', { engine: { index_raw_events: true } }]])
    await srv.request('PUT', PATH, { body: { engine: { index_raw_events: false } } })
    expect((await storedDocs(srv))[0]._source).toEqual({ engine: { index_raw_events: false } })
  })

  test('every 400 rule with its message', async () => {
    const cases: Array<[string, string]> = [
      ['', 'Invalid request body.'],
      ['  ', 'Invalid request body.'],
      ['{oops', 'Invalid request body.'],
      ['[]', "Missing required field: 'engine'."],
      ['{}', "Missing required field: 'engine'."],
      ['{"engine": "yes"}', "Missing required field: 'engine'."],
      ['{"engine": {}}', "Missing required field: 'engine.index_raw_events'."],
      ['{"engine": {"index_raw_events": "true"}}', "Field 'engine.index_raw_events' must be of type boolean."],
      ['{"engine": {"index_raw_events": null}}', "Field 'engine.index_raw_events' must be of type boolean."],
      ['{"engine": {"index_raw_events": 1}}', "Field 'engine.index_raw_events' must be of type boolean."],
    ]
    for (const [raw, message] of cases) {
      expect(await srv.request('PUT', PATH, { raw })).toEqual({ status: 400, body: { message, status: 400 } })
    }
    expect((await storedDocs(srv))[0]._source).toEqual({ engine: { index_raw_events: false } })
  })

  test('403 for callers without the settings permission, and for one without write rights on the index', async () => {
    const denied = await srv.request('PUT', PATH, { user: 'alice', body: { engine: { index_raw_events: true } } })
    expect(denied.status).toBe(403)
    expect(denied.body.status).toBe(403)
    const noIndexRight = await srv.request('PUT', PATH, { user: 'settingsonly', body: { engine: { index_raw_events: true } } })
    expect(noIndexRight.status).toBe(403)
    expect(noIndexRight.body.message).toContain('no permissions')
    const allowed = await srv.request('PUT', PATH, { user: 'writer', body: { engine: { index_raw_events: true } } })
    expect(allowed.status).toBe(200)
  })

  test('413 for a body over the plugin limit', async () => {
    const r = await srv.request('PUT', PATH, { raw: JSON.stringify({ engine: { index_raw_events: true }, pad: 'x'.repeat(1024 * 1024) }) })
    expect(r.status).toBe(413)
  })
})

describe('disabled switch', () => {
  test('403 for everyone, superuser included, before the body is looked at', async () => {
    const off = await startSetupServer({ settings: { 'plugins.setup.settings_update.enabled': false } })
    try {
      const message = 'Setup settings updates are disabled on this deployment.'
      expect(await off.request('PUT', PATH, { body: { engine: { index_raw_events: true } } })).toEqual({
        status: 403,
        body: { message, status: 403 },
      })
      expect(await off.request('PUT', PATH, { raw: 'not json' })).toEqual({ status: 403, body: { message, status: 403 } })
      expect(await off.request('PUT', PATH, { user: 'writer', raw: '' })).toEqual({ status: 403, body: { message, status: 403 } })
      expect((await storedDocs(off))[0]._source).toEqual({ engine: { index_raw_events: false } })
    } finally {
      await off.stop()
    }
  })
})

describe('persistence failure', () => {
  test('500 with the generic message when the store refuses the write', async () => {
    const broken = await startSetupServer()
    try {
      await broken.store.close()
      expect(await broken.request('PUT', PATH, { body: { engine: { index_raw_events: true } } })).toEqual({
        status: 500,
        body: { message: 'Internal Server Error.', status: 500 },
      })
    } finally {
      await broken.stop().catch(() => {})
    }
  })
})

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { AI_ASSISTANT_SETTINGS_DOC_ID, CTI_CREDENTIALS_DOC_ID, INTERNAL_STATE_INDEX } from '../../src/setup/indices'
import { startSetupServer, type SetupServer } from './harness'

const AI = '/_plugins/_setup/ai_assistant'
let srv: SetupServer
beforeAll(async () => {
  srv = await startSetupServer()
  // The Content Manager's token document lives in the same index and must never surface here.
  await srv.store.index({ index: INTERNAL_STATE_INDEX, id: CTI_CREDENTIALS_DOC_ID, body: { access_token: 'c2VjcmV0' }, refresh: true })
})
afterAll(() => srv.stop())

const storedDoc = async (id: string) => {
  const r = await srv.store.get({ index: INTERNAL_STATE_INDEX, id })
  return r.found ? r._source : undefined
}

describe('settings', () => {
  test('GET before any PUT is {}', async () => {
    expect(await srv.request('GET', `${AI}/settings`)).toEqual({ status: 200, body: {} })
  })

  test('PUT keeps the four keys, replaces the whole document; GET answers it flat', async () => {
    const body = {
      privacy_default_on: false,
      privacy_default_per_provider: { '0b0c': true },
      user_can_override: true,
      field_policy: [
        { field: 'svc.agent.name', action: 'anonymize', kind: 'HOST' },
        { field: 'svc.agent.id', action: 'allow' },
      ],
      providers: [{ name: 'x' }],
      access_token: 'nope',
    }
    expect(await srv.request('PUT', `${AI}/settings`, { body })).toEqual({
      status: 200,
      body: { message: 'Settings updated.', status: 200 },
    })
    const { providers, access_token, ...kept } = body
    expect((await srv.request('GET', `${AI}/settings`)).body).toEqual(kept)
    expect(await storedDoc(AI_ASSISTANT_SETTINGS_DOC_ID)).toEqual(kept)
    await srv.request('PUT', `${AI}/settings`, { body: { user_can_override: false } })
    expect((await srv.request('GET', `${AI}/settings`)).body).toEqual({ user_can_override: false })
  })

  test('bad bodies are 400 and change nothing', async () => {
    for (const [raw, message] of [
      ['', 'Validation Failed: 1: request body must not be empty;'],
      ['[1]', 'Invalid request body.'],
      ['{x', 'Invalid request body.'],
      ['{"privacy_default_on": "yes"}', "Field 'privacy_default_on' must be of type boolean."],
      ['{"field_policy": [{"field": "a"}]}', undefined],
    ] as const) {
      const r = await srv.request('PUT', `${AI}/settings`, { raw })
      expect(r.status).toBe(400)
      if (message) expect(r.body.message).toBe(message)
    }
    expect((await srv.request('GET', `${AI}/settings`)).body).toEqual({ user_can_override: false })
  })

  test('permissions: read for GET, write for PUT', async () => {
    expect((await srv.request('GET', `${AI}/settings`, { user: 'reader' })).status).toBe(200)
    expect((await srv.request('PUT', `${AI}/settings`, { user: 'reader', body: {} })).status).toBe(403)
    expect((await srv.request('GET', `${AI}/settings`, { user: 'writer' })).status).toBe(403)
    expect((await srv.request('PUT', `${AI}/settings`, { user: 'writer', body: { user_can_override: false } })).status).toBe(200)
    expect((await srv.request('GET', `${AI}/settings`, { user: 'alice' })).status).toBe(403)
    expect((await srv.request('PUT', `${AI}/settings`, { user: 'alice', body: {} })).status).toBe(403)
  })
})

describe('providers', () => {
  test("POST: id required, a UUID, not reserved; honoured and stripped; updated_at is the server's", async () => {
    expect(await srv.request('POST', `${AI}/providers`, { body: { name: 'n' } })).toEqual({
      status: 400,
      body: { message: 'Provider id is required.', status: 400 },
    })
    expect(await srv.request('POST', `${AI}/providers`, { body: { id: 'my-provider' } })).toEqual({
      status: 400,
      body: { message: 'Provider id must be a valid UUID.', status: 400 },
    })
    expect((await srv.request('POST', `${AI}/providers`, { body: { id: 7 } })).body.message).toBe('Provider id must be a valid UUID.')
    const id = crypto.randomUUID()
    const before = Date.now()
    // What the provider holds, stored as sent; the id and updated_at the client sends are not.
    const provider = {
      name: 'test-ai',
      type: 'anthropic',
      base_url: 'https://api.anthropic.com',
      model: 'm',
      api_key: 'enc:v1:abc',
      is_default: true,
    }
    const r = await srv.request('POST', `${AI}/providers`, { body: { id, ...provider, updated_at: '1999-01-01T00:00:00Z' } })
    expect(r).toEqual({ status: 200, body: { message: 'Provider saved.', status: 200, id } })
    const doc = (await storedDoc(id)) as Record<string, unknown>
    expect(doc).toMatchObject(provider)
    expect(doc.id).toBeUndefined()
    expect(Date.parse(doc.updated_at as string)).toBeGreaterThanOrEqual(before - 1000)
  })

  test('GET lists providers with _id and never the reserved documents', async () => {
    await srv.request('PUT', `${AI}/settings`, { body: { user_can_override: true } })
    const id = crypto.randomUUID()
    await srv.request('POST', `${AI}/providers`, { body: { id, name: 'listed' } })
    const r = await srv.request('GET', `${AI}/providers`)
    expect(r.status).toBe(200)
    const ids = (r.body.providers as Array<{ _id: string }>).map((p) => p._id)
    expect(ids).toContain(id)
    expect(ids).not.toContain(CTI_CREDENTIALS_DOC_ID)
    expect(ids).not.toContain(AI_ASSISTANT_SETTINGS_DOC_ID)
    expect(JSON.stringify(r.body)).not.toContain('c2VjcmV0')
    expect(r.body.providers.find((p: { _id: string }) => p._id === id)).toMatchObject({ _id: id, name: 'listed' })
  })

  test('PUT by path id (any id) upserts; the body id is discarded; reserved ids refused', async () => {
    const r = await srv.request('PUT', `${AI}/providers/custom-one`, { body: { id: 'ignored', name: 'first' } })
    expect(r).toEqual({ status: 200, body: { message: 'Provider saved.', status: 200, id: 'custom-one' } })
    await srv.request('PUT', `${AI}/providers/custom-one`, { body: { model: 'second' } })
    const doc = (await storedDoc('custom-one')) as Record<string, unknown>
    expect(doc.model).toBe('second')
    expect(doc.name).toBeUndefined()
    expect(await storedDoc('ignored')).toBeUndefined()
    for (const reserved of [CTI_CREDENTIALS_DOC_ID, AI_ASSISTANT_SETTINGS_DOC_ID]) {
      expect(await srv.request('PUT', `${AI}/providers/${reserved}`, { body: { name: 'x' } })).toEqual({
        status: 400,
        body: { message: 'Provider id is reserved.', status: 400 },
      })
    }
    expect(await storedDoc(CTI_CREDENTIALS_DOC_ID)).toEqual({ access_token: 'c2VjcmV0' })
  })

  test('unknown or mistyped provider fields are 400 and nothing is stored', async () => {
    const id = crypto.randomUUID()
    expect((await srv.request('POST', `${AI}/providers`, { body: { id, colour: 'red' } })).status).toBe(400)
    expect((await srv.request('POST', `${AI}/providers`, { body: { id, is_default: 'yes' } })).status).toBe(400)
    expect(await storedDoc(id)).toBeUndefined()
  })

  test('DELETE: 200 with the id, then 404; reserved ids are 400', async () => {
    const id = crypto.randomUUID()
    await srv.request('POST', `${AI}/providers`, { body: { id, name: 'gone soon' } })
    expect(await srv.request('DELETE', `${AI}/providers/${id}`)).toEqual({
      status: 200,
      body: { message: 'Provider deleted.', status: 200, id },
    })
    expect(await srv.request('DELETE', `${AI}/providers/${id}`)).toEqual({
      status: 404,
      body: { message: `Provider not found: ${id}`, status: 404 },
    })
    expect((await srv.request('DELETE', `${AI}/providers/${CTI_CREDENTIALS_DOC_ID}`)).body.message).toBe('Provider id is reserved.')
    expect(await storedDoc(CTI_CREDENTIALS_DOC_ID)).toBeDefined()
  })

  test('permissions: read lists, write creates/updates/deletes', async () => {
    const id = crypto.randomUUID()
    expect((await srv.request('GET', `${AI}/providers`, { user: 'reader' })).status).toBe(200)
    expect((await srv.request('POST', `${AI}/providers`, { user: 'reader', body: { id } })).status).toBe(403)
    expect((await srv.request('PUT', `${AI}/providers/${id}`, { user: 'reader', body: {} })).status).toBe(403)
    expect((await srv.request('DELETE', `${AI}/providers/${id}`, { user: 'reader' })).status).toBe(403)
    expect((await srv.request('GET', `${AI}/providers`, { user: 'writer' })).status).toBe(403)
    expect((await srv.request('POST', `${AI}/providers`, { user: 'writer', body: { id } })).status).toBe(200)
    expect((await srv.request('DELETE', `${AI}/providers/${id}`, { user: 'writer' })).status).toBe(200)
    expect((await srv.request('GET', `${AI}/providers`, { user: 'alice' })).status).toBe(403)
  })

  test('413 for a provider body over the plugin limit', async () => {
    const r = await srv.request('POST', `${AI}/providers`, {
      raw: JSON.stringify({ id: crypto.randomUUID(), name: 'x'.repeat(1024 * 1024) }),
    })
    expect(r.status).toBe(413)
  })
})

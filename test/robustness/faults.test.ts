/**
 * Faults where they are cheap to cause: the Engine test server vanishing while a request waits on
 * it (resource write, promotion), and a store that refuses writes under the Setup routes. Each
 * answer is the spec's (or reference's) message in the envelope, nothing half-done stays behind,
 * and the next request after the fault is healed succeeds.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { CONTENT_ALIASES, SETTINGS_INDEX } from '../../src/setup/indices'
import { setupRoutes } from '../../src/setup/routes'
import { startContentApi, dump, type ContentApi } from '../content/promotion/scenario'
import { PREFIX, type Harness } from '../content/harness'
import { faultyStore, type FaultyStore } from '../fixtures/faulty-store'
import { startTestApp, type TestApp } from '../helpers/app'
import { capturingLogger } from '../security/helpers'

/** A decoder the Engine validates (kept free of `parse|...` keys, which the store's mapping is still settling on). */
const decoderBody = (integration: string, name: string) => ({
  integration,
  resource: {
    name,
    metadata: { title: name, author: 'tests' },
    check: [{ 'event.original': 'exists()' }],
    normalize: [{ map: [{ 'event.kind': 'event' }] }],
  },
})

/** Starts `request`, then makes the Engine vanish while the Engine is holding the answer back. */
async function vanishDuring<T>(h: Harness, request: () => Promise<T>): Promise<T> {
  h.engine!.stall(2_000)
  const pending = request()
  // Wait until the call has reached the Engine, then take it away with the connection still open.
  const before = h.engine!.requests.length
  for (let i = 0; i < 200 && h.engine!.requests.length === before; i++) await Bun.sleep(5)
  expect(h.engine!.requests.length).toBeGreaterThan(before)
  await h.engine!.vanish()
  return pending
}

describe('the Engine vanishing mid-request', () => {
  let h: Harness
  let api: ContentApi
  beforeAll(async () => {
    ;({ h, api } = await startContentApi())
  })
  afterAll(() => h.stop())

  test("a resource write answers 400 'Engine validation failed', stores nothing, and the next write succeeds", async () => {
    const parent = await api.integration('vanishing')
    const r = await vanishDuring(h, () => h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent, 'decoder/vanish/0') }))
    expect(r.status).toBe(400)
    expect(r.body.status).toBe(400)
    // Reference 3.2: an I/O failure on the socket is "Failed to communicate with the Engine.".
    expect(r.body.message).toBe('Engine validation failed for decoder: Failed to communicate with the Engine.')
    const parentDoc = await h.store.get({ index: CONTENT_ALIASES.integrations, id: parent })
    expect((parentDoc as any)._source.document.decoders).toEqual([])

    // The Engine comes back: the creation lock was released, the same write goes through.
    h.engine!.heal()
    h.engine!.restart()
    const again = await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent, 'decoder/vanish/0') })
    expect(again.status).toBe(201)
  })

  test("a promotion that needs the Engine answers with the Engine's failure, writes nothing, and releases its lease", async () => {
    const integration = await api.integration('vanish-promo')
    await api.create('decoder', decoderBody(integration, 'decoder/vanish-promo/0'))
    const changes = (await api.preview('draft')).body.changes
    const before = await dump(h, 'test')
    const r = await vanishDuring(h, () => api.promote('draft', changes))
    // A promotion failure is the spec's 500; its message is the Engine's, not a generic crash.
    expect(r.status).toBe(500)
    expect(r.body).toEqual({ message: 'Failed to communicate with the Engine.', status: 500 })
    expect(await dump(h, 'test')).toEqual(before)

    h.engine!.heal()
    h.engine!.restart()
    const again = await api.promote('draft', changes)
    expect(again).toMatchObject({ status: 200, body: { message: 'Promotion completed successfully.' } })
  })
})

describe('a store that refuses writes under the Setup routes', () => {
  let store: FaultyStore
  let app: TestApp
  let lines: string[]

  beforeAll(async () => {
    const captured = capturingLogger()
    lines = captured.lines
    app = await startTestApp({
      users: [{ name: 'admin', password: 'Admin-pass-1', roles: ['all_access'] }],
      store: 'memory',
      wrapStore: (s) => (store = faultyStore(s)),
      settingsIn: 'memory',
      bootstrap: false,
      log: captured.log,
      routes: (deps) => ({ pluginRoutes: setupRoutes(deps) }),
    })
  })
  afterAll(() => app.stop())

  const put = (path: string, body: unknown, method = 'PUT') =>
    app.request(method, path, { body, user: 'admin' }).then((r) => ({ status: r.status, body: r.body }))

  test("settings that cannot be persisted: 500 with the spec's generic message; the cause is logged, not sent", async () => {
    store.arm({ failAt: [1], match: (m) => m.index === SETTINGS_INDEX })
    const r = await put('/_plugins/_setup/settings', { engine: { index_raw_events: true } })
    expect(store.disarm().map((m) => m.failed)).toEqual([true])
    expect(r).toEqual({ status: 500, body: { message: 'Internal Server Error.', status: 500 } })
    expect(lines.some((l) => l.includes('setup settings not persisted') && l.includes('injected fault'))).toBe(true)
    // Healed, the same request is stored.
    expect(await put('/_plugins/_setup/settings', { engine: { index_raw_events: true } })).toEqual({
      status: 200,
      body: { message: 'Settings updated successfully.', status: 200 },
    })
    expect(((await store.get({ index: SETTINGS_INDEX, id: '1' })) as any)._source).toEqual({ engine: { index_raw_events: true } })
  })

  test("a store failure elsewhere is a 500 envelope whose message does not carry the store's reason", async () => {
    store.arm({ failAt: [1] })
    const r = await put('/_plugins/_setup/ai_assistant/sessions', { title: 't', messages: [] }, 'POST')
    store.disarm()
    expect(r).toEqual({ status: 500, body: { message: 'Internal Server Error.', status: 500 } })
    expect(lines.some((l) => l.includes('injected fault'))).toBe(true)
  })
})

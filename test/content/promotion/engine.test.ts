// Step 2 of a promotion: when the Engine is asked (reference 3.4), what it is sent (3.3.2), and
// that a refusal or an unreachable Engine stops the promotion before anything is written.
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { faultyStore, type FaultyStore } from '../../fixtures/faulty-store'
import type { Harness } from '../harness'
import { startContentApi, dump, noChanges, type ContentApi } from './scenario'

let h: Harness
let api: ContentApi
let store: FaultyStore

beforeEach(async () => {
  ;({ h, api } = await startContentApi({ wrapStore: (s) => (store = faultyStore(s)) }))
})
afterEach(() => h.stop())

const VALIDATE = '/content/validate/policy'

/** An integration with a rule, the draft policy changed: nothing the Engine loads. */
async function rulesOnly() {
  const integration = await api.integration('auth')
  const rule = await api.rule(integration, 'failed logins', 'auth')
  await api.draftPolicy((p) => ({ ...p, metadata: { ...p.metadata, description: 'rules only' } }))
  return { integration, rule }
}

async function previewOf(space: string) {
  const r = await api.preview(space)
  expect(r.status).toBe(200)
  return r.body.changes
}

describe('Engine gating', () => {
  test('integrations, rules and policy into a target without Engine resources succeed with the Engine stopped', async () => {
    const { integration, rule } = await rulesOnly()
    const changes = await previewOf('draft')
    expect(changes).toMatchObject({ decoders: [], kvdbs: [], filters: [] })
    await h.engine!.vanish()
    const r = await api.promote('draft', changes)
    expect(r).toMatchObject({ status: 200, body: { message: 'Promotion completed successfully.' } })
    const test_ = await dump(h, 'test')
    expect(Object.keys(test_.integrations)).toEqual([integration])
    expect(Object.keys(test_.rules)).toEqual([rule])
    // test -> custom as well: still nothing for the Engine to validate.
    expect((await api.promote('test', await previewOf('test'))).status).toBe(200)
    expect(Object.keys((await dump(h, 'custom')).rules)).toEqual([rule])
  })

  test('a changeset with decoders is refused with the Engine status and reason, and nothing is written', async () => {
    const integration = await api.integration('web')
    await api.decoder(integration, 'decoder/web/0')
    const changes = await previewOf('draft')
    const before = await dump(h, 'test')
    for (const [status, reason] of [
      [400, "Decoder 'decoder/web/0' could not be built: unknown helper"],
      [500, 'Internal error while importing the policy'],
    ] as const) {
      h.engine!.refuseAll(status, reason, VALIDATE)
      const calls = h.ruleset.calls.length
      const r = await api.promote('draft', changes)
      expect(r).toEqual({ status, body: { message: reason, status } })
      expect(await dump(h, 'test')).toEqual(before)
      expect(h.ruleset.calls.length).toBe(calls)
    }
    h.engine!.heal()
    expect((await api.promote('draft', changes)).status).toBe(200)
    expect(Object.keys((await dump(h, 'test')).decoders)).toHaveLength(1)
  })

  test('a changeset with decoders answers 500-class with the Engine stopped, and nothing is written', async () => {
    const integration = await api.integration('web')
    await api.kvdb(integration, 'codes')
    await api.filter('filter/prefilter/0')
    const changes = await previewOf('draft')
    const before = await dump(h, 'test')
    await h.engine!.vanish()
    const r = await api.promote('draft', changes)
    expect(r.status).toBeGreaterThanOrEqual(500)
    expect(r.body.status).toBe(r.status)
    expect(r.body.message).toContain('cannot be reached')
    expect(await dump(h, 'test')).toEqual(before)
    expect(h.journal.entries('promotion.')).toEqual([])
  })

  test('a target that already holds Engine resources is validated even when the changeset has none', async () => {
    const integration = await api.integration('web')
    await api.decoder(integration, 'decoder/web/0')
    expect((await api.promote('draft', await previewOf('draft'))).status).toBe(200)
    await h.content.engineLoadsSettled()
    // Now only a rule changes; the Engine must still approve the test space.
    const rule = await api.rule(integration, 'scan', 'web')
    const changes = await previewOf('draft')
    expect(changes.rules).toEqual([{ operation: 'add', id: rule }])
    expect(changes.decoders).toEqual([])
    const before = await dump(h, 'test')
    h.engine!.refuseAll(400, 'session busy', VALIDATE)
    expect(await api.promote('draft', changes)).toEqual({ status: 400, body: { message: 'session busy', status: 400 } })
    expect(await dump(h, 'test')).toEqual(before)
    h.engine!.heal()
    await h.engine!.vanish()
    expect((await api.promote('draft', changes)).status).toBeGreaterThanOrEqual(500)
    expect(await dump(h, 'test')).toEqual(before)
  })

  test('the Engine is sent the resulting target space: the policy, every Engine resource with the changes overlaid, no rules', async () => {
    const web = await api.integration('web')
    const d1 = await api.decoder(web, 'decoder/web/0')
    const d2 = await api.decoder(web, 'decoder/web/1')
    const k1 = await api.kvdb(web, 'codes')
    await api.rule(web, 'scan', 'web')
    const f1 = await api.filter('filter/prefilter/0')
    expect((await api.promote('draft', await previewOf('draft'))).status).toBe(200)
    await h.content.engineLoadsSettled()
    // Remove one decoder, change another: the payload must reflect both.
    await api.remove('decoder', d2)
    await api.update('decoder', d1, (d) => ({ ...d, normalize: [{ map: [{ 'event.kind': 'alert' }] }] }))
    const changes = await previewOf('draft')
    const seen = h.engine!.requestsTo(VALIDATE).length
    expect((await api.promote('draft', changes)).status).toBe(200)
    const sent = h.engine!.requestsTo(VALIDATE)[seen].body as any
    const draft = await dump(h, 'draft')
    expect(sent.space).toBe('test')
    expect(sent.load_in_tester).toBe(true)
    expect(sent.full_policy.policy).toEqual(draft.policy.policy._source.document)
    const docs = (list: 'integrations' | 'decoders' | 'kvdbs' | 'filters') => Object.values(draft[list]).map((d) => d._source.document)
    expect(sent.full_policy.resources.decoders).toEqual(docs('decoders'))
    expect(sent.full_policy.resources.decoders.map((d: any) => d.id)).toEqual([d1])
    expect(sent.full_policy.resources.integrations).toEqual(docs('integrations'))
    expect(sent.full_policy.resources.kvdbs.map((d: any) => d.id)).toEqual([k1])
    expect(sent.full_policy.resources.filters.map((d: any) => d.id)).toEqual([f1])
    expect(Object.keys(sent.full_policy.resources).sort()).toEqual(['decoders', 'filters', 'integrations', 'kvdbs'])
    // test -> custom is validated too, as the custom space.
    await h.content.engineLoadsSettled()
    const before = h.engine!.requestsTo(VALIDATE).length
    expect((await api.promote('test', await previewOf('test'))).status).toBe(200)
    expect((h.engine!.requestsTo(VALIDATE)[before].body as any).space).toBe('custom')
  })

  test('an empty changeset into a target without Engine resources asks nothing and changes nothing', async () => {
    await h.engine!.vanish()
    const before = await dump(h, 'test')
    expect((await api.promote('draft', noChanges())).status).toBe(200)
    expect(await dump(h, 'test')).toEqual(before)
  })

  test('after a rollback the Engine session of the target is loaded again from the restored content', async () => {
    const web = await api.integration('web')
    const d1 = await api.decoder(web, 'decoder/web/0')
    expect((await api.promote('draft', await previewOf('draft'))).status).toBe(200)
    await h.content.engineLoadsSettled()
    const decoders = () => h.engine!.sessions.get('test')!.resources.decoders.map((d) => d.id)
    expect(decoders()).toEqual([d1])
    const d2 = await api.decoder(web, 'decoder/web/1')
    const changes = await previewOf('draft')
    expect(changes.decoders).toEqual([{ operation: 'add', id: d2 }])
    const before = await dump(h, 'test')
    // The last write (the decoder add; integrations are written first) fails.
    store.arm({ failAt: [2], match: (m) => m.index.startsWith('svc-threatintel-') })
    const seen = h.engine!.requestsTo(VALIDATE).length
    expect((await api.promote('draft', changes)).status).toBe(500)
    store.disarm()
    expect(await dump(h, 'test')).toEqual(before)
    // Validation loaded d2 into the session; the rollback loaded the restored space back.
    const [validation, restore] = h
      .engine!.requestsTo(VALIDATE)
      .slice(seen)
      .map((r) => r.body as any)
    expect(validation.full_policy.resources.decoders.map((d: any) => d.id).sort()).toEqual([d1, d2].sort())
    expect(restore.full_policy.resources.decoders.map((d: any) => d.id)).toEqual([d1])
    expect(decoders()).toEqual([d1])
  })
})

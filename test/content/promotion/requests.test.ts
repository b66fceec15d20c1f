// The promote routes' answers to bad requests (reference 4.6/4.7 messages), the caller's rights,
// Ruleset Management failures as warnings, and the per-space lease that serialises promotions.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { promotionLeaseId } from '../../../src/content/promotion/lease'
import { RESOURCE_LOCKS_INDEX } from '../../../src/content/indices'
import { PREFIX, type Harness } from '../harness'
import { startContentApi, dump, noChanges, type ContentApi, type Changes } from './scenario'
import { heldLock } from '../../helpers/locks'

let h: Harness
let api: ContentApi

beforeAll(async () => {
  ;({ h, api } = await startContentApi())
})
afterAll(() => h.stop())

const post = (raw: string) => h.request('POST', `${PREFIX}/promote`, { raw })

describe('GET /promote validation', () => {
  test.each([
    ['', 'Missing [space] field.'],
    ['?space=', 'Missing [space] field.'],
    ['?space=%20', 'Missing [space] field.'],
    ['?space=prod', 'Unknown space: [prod].'],
    ['?space=custom', 'Space [custom] cannot be promoted.'],
    ['?space=standard', 'Space [standard] cannot be promoted.'],
  ])('%p -> 400 %p', async (query, message) => {
    expect(await h.request('GET', `${PREFIX}/promote${query}`)).toEqual({ status: 400, body: { message, status: 400 } })
  })

  test('needs the promote/get permission', async () => {
    expect((await h.request('GET', `${PREFIX}/promote?space=draft`, { user: 'editor' })).status).toBe(403)
  })
})

describe('POST /promote validation (nothing is written)', () => {
  let web: string
  let before: { test: unknown; custom: unknown }

  beforeAll(async () => {
    web = await api.integration('web')
    const gone = await api.integration('gone')
    expect(
      (
        await api.promote('draft', {
          ...noChanges(),
          integrations: [
            { operation: 'add', id: web },
            { operation: 'add', id: gone },
          ],
        })
      ).status,
    ).toBe(200)
    await api.remove('integration', gone)
    before = { test: await dump(h, 'test'), custom: await dump(h, 'custom') }
  })

  const lists = (c: Partial<Changes>) => ({ ...noChanges(), ...c })
  const cases: Array<[string, () => string, number, () => string]> = [
    ['empty body', () => '', 400, () => 'Invalid request body.'],
    ['malformed JSON', () => '{"space": ', 400, () => 'Invalid request body.'],
    ['not an object', () => '[]', 400, () => 'Invalid request body.'],
    ['missing space', () => JSON.stringify({ changes: noChanges() }), 400, () => 'Missing [space] field.'],
    ['unknown space', () => JSON.stringify({ space: 'prod', changes: noChanges() }), 400, () => 'Unknown space: [prod].'],
    // Objects without a usable toString are named as JSON, not converted (the conversion throws).
    ['a space that cannot be a string', () => '{"space": {"toString": 1}, "changes": {}}', 400, () => 'Unknown space: [{"toString":1}].'],
    [
      'nesting past the JSON depth bound',
      () => JSON.stringify({ space: 'draft', changes: noChanges() }).replace('"draft"', '['.repeat(5000) + ']'.repeat(5000)),
      400,
      () => 'Invalid request body.',
    ],
    ['custom', () => JSON.stringify({ space: 'custom', changes: noChanges() }), 400, () => 'Space [custom] cannot be promoted.'],
    ['standard', () => JSON.stringify({ space: 'standard', changes: noChanges() }), 400, () => 'Space [standard] cannot be promoted.'],
    ['no changes', () => JSON.stringify({ space: 'draft' }), 400, () => 'Changes object is required'],
    [
      'a list missing',
      () => JSON.stringify({ space: 'draft', changes: { ...noChanges(), kvdbs: undefined } }),
      400,
      () => 'All resource type lists (policy, integrations, kvdbs, decoders, filters, rules) are required in changes',
    ],
    [
      'unknown operation',
      () => JSON.stringify({ space: 'draft', changes: lists({ rules: [{ operation: 'move', id: 'x' } as any] }) }),
      400,
      () => 'Unknown operation: move',
    ],
    [
      'policy add',
      () => JSON.stringify({ space: 'draft', changes: lists({ policy: [{ operation: 'add', id: 'x' }] }) }),
      400,
      () => "Only 'update' operation is supported for policy.",
    ],
    [
      'add of something the target has',
      () => JSON.stringify({ space: 'draft', changes: lists({ integrations: [{ operation: 'add', id: web }] }) }),
      400,
      () => `Resource '${web}' already exists in target space 'test', use UPDATE operation instead`,
    ],
    [
      'a resource of another space',
      () => JSON.stringify({ space: 'test', changes: lists({ integrations: [{ operation: 'add', id: draftOnly }] }) }),
      400,
      () => `Resource '${draftOnly}' is in space 'draft', expected source space 'test'`,
    ],
    [
      'removal of what the target lacks',
      () => JSON.stringify({ space: 'draft', changes: lists({ rules: [{ operation: 'remove', id: 'nope' }] }) }),
      400,
      () => "Resource 'nope' does not exist in target space 'test'.",
    ],
    [
      'the same id twice',
      () =>
        JSON.stringify({
          space: 'draft',
          changes: lists({
            integrations: [
              { operation: 'update', id: web },
              { operation: 'update', id: web },
            ],
          }),
        }),
      400,
      () => `Resource '${web}' is listed more than once in 'integrations'.`,
    ],
    [
      'an operation that cannot be a string',
      () => JSON.stringify({ space: 'draft', changes: lists({ rules: [JSON.parse('{"operation": [{"toString": 1}], "id": "x"}')] }) }),
      400,
      () => 'Unknown operation: [{"toString":1}]',
    ],
    [
      'a resource that exists nowhere',
      () => JSON.stringify({ space: 'draft', changes: lists({ rules: [{ operation: 'add', id: 'no-such-rule' }] }) }),
      400,
      () => "Resource 'no-such-rule' was not found in space 'draft'.",
    ],
  ]
  let draftOnly = ''

  test.each(cases)('%s', async (_name, body, status, message) => {
    draftOnly ||= await api.integration('draft-only')
    const r = await post(body())
    expect(r).toEqual({ status, body: { message: message(), status } })
    expect(await dump(h, 'test')).toEqual(before.test as any)
    expect(await dump(h, 'custom')).toEqual(before.custom as any)
  })

  test('operations are case-insensitive', async () => {
    const r = await post(
      JSON.stringify({ space: 'draft', changes: lists({ integrations: [{ operation: 'UPDATE' as 'update', id: web }] }) }),
    )
    expect(r.status).toBe(200)
  })

  test('a body over the limit is refused before it is read', async () => {
    const r = await post(JSON.stringify({ space: 'draft', changes: noChanges(), padding: 'x'.repeat(5 * 1024 * 1024) }))
    expect(r.status).toBe(413)
  })
})

describe('rights and Ruleset Management', () => {
  test('the writes run with the caller rights: without them 403 and nothing written; with them it succeeds', async () => {
    const id = await api.integration('rights')
    const changes = { ...noChanges(), integrations: [{ operation: 'add' as const, id }] }
    const before = await dump(h, 'test')
    const denied = await api.promote('draft', changes, 'clusterOnly')
    expect(denied.status).toBe(403)
    expect(await dump(h, 'test')).toEqual(before)
    expect((await api.promote('draft', changes, 'editor')).status).toBe(200)
    expect((await dump(h, 'test')).integrations[id]).toBeDefined()
  })

  test('Ruleset Management refusing a rule is a warning: the promotion completes', async () => {
    const integration = await api.integration('rm')
    const rule = await api.rule(integration, 'rm rule', 'rm')
    h.ruleset.refuseRules('rule rejected by the detector engine')
    try {
      const changes = {
        ...noChanges(),
        integrations: [{ operation: 'add' as const, id: integration }],
        rules: [{ operation: 'add' as const, id: rule }],
      }
      expect((await api.promote('draft', changes)).status).toBe(200)
    } finally {
      h.ruleset.refuseRules(undefined)
    }
    expect((await dump(h, 'test')).rules[rule]).toBeDefined()
    expect(h.journal.entries('promotion.completed')[0].detail).toMatchObject({ added: 2, rulesetWarnings: 1 })
  })
})

describe('the promotion lease', () => {
  test('two concurrent promotions into the same space take turns', async () => {
    const web = await api.integration('turn-web')
    const d1 = await api.decoder(web, 'decoder/turn-web/0')
    const fw = await api.integration('turn-fw')
    const d2 = await api.decoder(fw, 'decoder/turn-fw/0')
    await h.content.engineLoadsSettled()
    const validate = '/content/validate/policy'
    const seen = h.engine!.requestsTo(validate).length
    h.engine!.stall(300)
    const [a, b] = await Promise.all([
      api.promote('draft', { ...noChanges(), integrations: [{ operation: 'add', id: web }], decoders: [{ operation: 'add', id: d1 }] }),
      api.promote('draft', { ...noChanges(), integrations: [{ operation: 'add', id: fw }], decoders: [{ operation: 'add', id: d2 }] }),
    ])
    h.engine!.heal()
    expect([a.status, b.status]).toEqual([200, 200])
    const test_ = await dump(h, 'test')
    for (const id of [web, fw]) expect(test_.integrations[id]).toBeDefined()
    for (const id of [d1, d2]) expect(test_.decoders[id]).toBeDefined()
    // The second promotion reached the Engine only after the first had finished with it.
    const times = h
      .engine!.requestsTo(validate)
      .slice(seen)
      .map((r) => r.at)
    expect(times.length).toBeGreaterThanOrEqual(2)
    expect(times[1] - times[0]).toBeGreaterThanOrEqual(290)
    // The second saw the first's result: its Engine payload held both decoders.
    const second = h.engine!.requestsTo(validate)[seen + 1].body as any
    expect(second.full_policy.resources.decoders.map((d: any) => d.id).sort()).toEqual([d1, d2].sort())
    expect(h.journal.entries('lock.acquire').filter((e) => e.subject === 'promotion/test').length).toBeGreaterThanOrEqual(2)
    await h.content.engineLoadsSettled()
  })

  test('a lease held elsewhere (another node) makes the promotion wait until it is released', async () => {
    await h.set({ 'plugins.content_manager.resource_lock.retry_backoff_millis': 20 })
    const id = await api.integration('waiting')
    const lease = { index: RESOURCE_LOCKS_INDEX, id: promotionLeaseId('test') }
    await heldLock(h.store, lease.id)
    let done = false
    const pending = api.promote('draft', { ...noChanges(), integrations: [{ operation: 'add', id }] }).finally(() => (done = true))
    await Bun.sleep(250)
    expect(done).toBe(false)
    expect((await dump(h, 'test')).integrations[id]).toBeUndefined()
    await h.store.delete({ ...lease, refresh: true })
    expect((await pending).status).toBe(200)
    expect((await dump(h, 'test')).integrations[id]).toBeDefined()
    expect((await h.store.get(lease)).found).toBe(false)
  })

  test('a lease left by a dead holder is stolen once stale', async () => {
    const id = await api.integration('stolen')
    const lease = { index: RESOURCE_LOCKS_INDEX, id: promotionLeaseId('test') }
    // Older than the Engine reload timeout (10 min) plus the lock stale threshold (30 s).
    await h.store.index({ ...lease, body: { acquired_at: Date.now() - 11 * 60_000 }, refresh: true })
    expect((await api.promote('draft', { ...noChanges(), integrations: [{ operation: 'add', id }] })).status).toBe(200)
    expect(h.journal.entries('lock.steal')[0]).toMatchObject({ subject: 'promotion/test' })
    expect((await h.store.get(lease)).found).toBe(false)
  })

  test('leases are per target space: a held test lease does not block test -> custom', async () => {
    const lease = { index: RESOURCE_LOCKS_INDEX, id: promotionLeaseId('test') }
    await heldLock(h.store, lease.id)
    try {
      const r = await api.preview('test')
      expect((await api.promote('test', r.body.changes)).status).toBe(200)
    } finally {
      await h.store.delete({ ...lease, refresh: true })
    }
  })
})

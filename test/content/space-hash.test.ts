import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { documentHash, sha256Hex } from '../../src/content/hash'
import { ContentRepository } from '../../src/content/repository'
import { computeSpaceHash } from '../../src/content/space-hash'
import { CONTENT_ALIASES } from '../../src/setup/indices'
import { decoderBody, filterBody, integrationBody, kvdbBody, PREFIX, ruleBody, startHarness, type Harness } from './harness'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
  // A standard space as CTI sync leaves it: a policy with one integration and its decoder.
  const decoder = { id: 'std-dec', name: 'decoder/std/0', metadata: { title: 'std' }, 'parse|event.original': ['<source.ip>'] }
  const integration = { id: 'std-int', metadata: { title: 'std' }, category: 'applications', decoders: ['std-dec'], rules: [], kvdbs: [] }
  const policy = {
    id: 'std-policy',
    metadata: { title: 'Standard' },
    root_decoder: null,
    integrations: ['std-int'],
    filters: [],
    enrichments: [],
    enabled: true,
    index_unclassified_events: false,
    index_discarded_events: false,
  }
  const put = (alias: string, doc: Record<string, unknown>) =>
    h.content.repo.put(alias, String(doc.id), { document: doc, hash: { sha256: documentHash(doc) }, space: { name: 'standard' } })
  await put(CONTENT_ALIASES.decoders, decoder)
  await put(CONTENT_ALIASES.integrations, integration)
  await put(CONTENT_ALIASES.policies, policy)
  await h.content.recomputeSpaces(['standard'])
  await h.content.engineLoadsSettled()
})
afterAll(() => h.stop())

const hashes = async () => ({
  draft: await h.content.spaceHash('draft'),
  standard: await h.content.spaceHash('standard'),
  test: await h.content.spaceHash('test'),
  custom: await h.content.spaceHash('custom'),
})
const loads = () => h.engine!.requestsTo('/content/validate/policy')

describe('aggregate space hash', () => {
  test('is the SHA-256 of the policy hash and every referenced hash, in policy order', async () => {
    const policy = (await h.content.repo.policy('standard'))!
    const integration = (await h.content.repo.getById(CONTENT_ALIASES.integrations, 'std-int'))!
    const decoder = (await h.content.repo.getById(CONTENT_ALIASES.decoders, 'std-dec'))!
    expect(await h.content.spaceHash('standard')).toBe(sha256Hex(policy.hash + integration.hash + decoder.hash))
  })

  test('changes on every draft content change and only in the draft space', async () => {
    let last = await hashes()
    const step = async (what: string, action: () => Promise<{ status: number }>, expected: number) => {
      const r = await action()
      expect({ what, status: r.status }).toEqual({ what, status: expected })
      const now = await hashes()
      expect({ what, changed: now.draft !== last.draft }).toEqual({ what, changed: true })
      expect({ what, others: [now.standard, now.test, now.custom] }).toEqual({ what, others: [last.standard, last.test, last.custom] })
      last = now
    }
    let parent = ''
    await step(
      'integration create',
      async () => {
        const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('hashy') })
        parent = r.body.message
        return r
      },
      201,
    )
    let dec = ''
    await step(
      'decoder create',
      async () => {
        const r = await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent) })
        dec = r.body.message
        return r
      },
      201,
    )
    let rule = ''
    await step(
      'rule create',
      async () => {
        const r = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'hashy rule', 'hashy') })
        rule = r.body.message
        return r
      },
      201,
    )
    await step('kvdb create', () => h.request('POST', `${PREFIX}/kvdbs`, { body: kvdbBody(parent) }), 201)
    const ruleDoc = (await h.content.repo.getById(CONTENT_ALIASES.rules, rule))!.document
    await step('rule update', () => h.request('PUT', `${PREFIX}/rules/${rule}`, { body: { resource: { ...ruleDoc, level: 'high' } } }), 200)
    await step('draft filter create', () => h.request('POST', `${PREFIX}/filters`, { body: filterBody('draft') }), 201)
    const policy = (await h.content.repo.policy('draft'))!.document
    await step(
      'policy enabled',
      () => h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: { ...policy, enabled: false } } }),
      200,
    )
    await step('decoder delete', () => h.request('DELETE', `${PREFIX}/decoders/${dec}`), 200)
  })

  test('does not change on identical writes or refused writes', async () => {
    const parent = (await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('stable') })).body.message
    const before = await hashes()
    const stored = (await h.content.repo.getById(CONTENT_ALIASES.integrations, parent))!
    expect((await h.request('PUT', `${PREFIX}/integrations/${parent}`, { body: { resource: stored.document } })).status).toBe(200)
    const policy = (await h.content.repo.policy('draft'))!.document
    expect((await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: policy } })).status).toBe(200)
    expect((await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('stable') })).status).toBe(400)
    expect((await h.request('DELETE', `${PREFIX}/integrations/unknown`)).status).toBe(404)
    expect(await hashes()).toEqual(before)
  })
})

describe('standard policy loading into the Engine', () => {
  test('one load per standard hash change, none for draft changes or unchanged standard writes', async () => {
    const start = loads().length
    // Draft-only changes never load anything.
    expect((await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('draft-only') })).status).toBe(201)
    await h.content.engineLoadsSettled()
    expect(loads().length).toBe(start)

    // A standard settings change: exactly one load carrying the whole standard space.
    const policy = (await h.content.repo.policy('standard'))!.document
    const before = await h.content.spaceHash('standard')
    expect(
      (await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: { ...policy, index_discarded_events: true } } })).status,
    ).toBe(200)
    await h.content.engineLoadsSettled()
    expect(await h.content.spaceHash('standard')).not.toBe(before)
    expect(loads().length).toBe(start + 1)
    const sent = loads().at(-1)!.body as any
    expect(sent.space).toBe('standard')
    expect(sent.load_in_tester).toBe(true)
    expect(sent.full_policy.policy.index_discarded_events).toBe(true)
    expect(sent.full_policy.resources.integrations.map((d: any) => d.id)).toEqual(['std-int'])
    expect(sent.full_policy.resources.decoders.map((d: any) => d.id)).toEqual(['std-dec'])
    expect(h.engine!.sessions.get('standard')).toBeDefined()

    // The same settings again: no hash change, no load. Only the allowed subset is taken.
    const same = { ...policy, index_discarded_events: true, metadata: { title: 'ignored' } }
    expect((await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: same } })).status).toBe(200)
    await h.content.engineLoadsSettled()
    expect(loads().length).toBe(start + 1)
    expect((await h.content.repo.policy('standard'))!.document.metadata).toEqual({ title: 'Standard' })

    // A standard filter changes the standard hash: one more load, then its deletion another.
    const f = await h.request('POST', `${PREFIX}/filters`, { body: filterBody('standard') })
    expect(f.status).toBe(201)
    await h.content.engineLoadsSettled()
    expect(loads().length).toBe(start + 2)
    expect((loads().at(-1)!.body as any).full_policy.policy.filters).toEqual([f.body.message])
    expect((await h.request('DELETE', `${PREFIX}/filters/${f.body.message}`)).status).toBe(200)
    await h.content.engineLoadsSettled()
    expect(loads().length).toBe(start + 3)
  })

  test('standard filters may be reordered but not added through the policy', async () => {
    const a = (await h.request('POST', `${PREFIX}/filters`, { body: filterBody('standard', 'filter/one/0') })).body.message
    const b = (await h.request('POST', `${PREFIX}/filters`, { body: filterBody('standard', 'filter/two/0') })).body.message
    await h.content.engineLoadsSettled()
    const start = loads().length
    const policy = (await h.content.repo.policy('standard'))!.document
    expect(policy.filters).toEqual([a, b])
    const reorder = await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: { ...policy, filters: [b, a] } } })
    expect(reorder.status).toBe(200)
    await h.content.engineLoadsSettled()
    expect(loads().length).toBe(start + 1)
    const add = await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: { ...policy, filters: [a, b, 'x'] } } })
    expect(add.status).toBe(400)
  })

  test('an Engine that is down does not fail the write; the next change loads the whole current state', async () => {
    const policy = (await h.content.repo.policy('standard'))!.document
    await h.engine!.vanish()
    const r = await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: { ...policy, enabled: false } } })
    expect(r.status).toBe(200)
    const outcomes = await h.content.engineLoadsSettled()
    expect(outcomes).toContain('failed')
    expect((await h.content.repo.policy('standard'))!.document.enabled).toBe(false)
    h.engine!.restart()
    const start = loads().length
    const flipped = { ...policy, enabled: false, index_unclassified_events: !policy.index_unclassified_events }
    const next = await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: flipped } })
    expect(next.status).toBe(200)
    await h.content.engineLoadsSettled()
    expect(loads().length).toBe(start + 1)
    expect((loads().at(-1)!.body as any).full_policy.policy.enabled).toBe(false)
  })

  test('an Engine that refuses the load does not fail the write either', async () => {
    const policy = (await h.content.repo.policy('standard'))!.document
    h.engine!.refuseNext(400, 'Failed to import policy', '/content/validate/policy')
    const start = loads().length
    const changed = { ...policy, index_unclassified_events: !policy.index_unclassified_events }
    const r = await h.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: changed } })
    expect(r.status).toBe(200)
    expect(await h.content.engineLoadsSettled()).toEqual(['failed'])
    expect(loads().length).toBe(start + 1)
    expect((await h.content.repo.policy('standard'))!.document.index_unclassified_events).toBe(changed.index_unclassified_events)
  })
})

describe('the copy of a space kept between recomputes', () => {
  // computeSpaceHash keeps a copy of each space's hashed fields per repository and reads only what
  // changed since; a repository of its own reads everything. Whatever happens in between, both agree.
  test('agrees with a whole read after documents are added, changed, deleted, replaced and moved', async () => {
    const kept = h.content.repo
    const whole = async () => computeSpaceHash(new ContentRepository(h.store), (await kept.policy('standard'))!)
    const check = async (what: string) => {
      const policy = (await kept.policy('standard'))!
      expect({ what, hash: await computeSpaceHash(kept, policy) }).toEqual({ what, hash: await whole() })
    }
    const put = (alias: string, doc: Record<string, unknown>, space = 'standard') =>
      kept.put(alias, String(doc.id), { document: doc, hash: { sha256: documentHash(doc) }, space: { name: space } })
    const rule = (id: string, word: string) => ({
      id,
      metadata: { title: id },
      detection: { sel: { 'event.action': word }, condition: 'sel' },
    })
    const integration = (rules: string[]) => ({
      id: 'std-int',
      metadata: { title: 'std' },
      category: 'applications',
      decoders: ['std-dec'],
      rules,
      kvdbs: [],
    })
    await check('as it is')
    await put(CONTENT_ALIASES.rules, rule('r1', 'a'))
    await put(CONTENT_ALIASES.rules, rule('r2', 'b'))
    await put(CONTENT_ALIASES.integrations, integration(['r1', 'r2', 'r3']))
    await check('rules added and listed')
    await put(CONTENT_ALIASES.rules, rule('r1', 'changed'))
    await check('a rule changed')
    await put(CONTENT_ALIASES.rules, rule('r4', 'd'))
    await put(CONTENT_ALIASES.rules, rule('r2', 'changed too'))
    await put(CONTENT_ALIASES.integrations, integration(['r1', 'r2', 'r3', 'r4']))
    await check('a rule appended to the list and a listed one changed between two recomputes')
    await put(CONTENT_ALIASES.integrations, integration(['r4', 'r1', 'r2', 'r3']))
    await check('the same rules listed in another order')
    await put(CONTENT_ALIASES.integrations, integration(['r1', 'r2', 'r3']))
    await kept.remove(CONTENT_ALIASES.rules, 'r4')
    await check('the appended rule unlisted and deleted')
    await kept.remove(CONTENT_ALIASES.rules, 'r2')
    await check('a listed rule deleted')
    await kept.remove(CONTENT_ALIASES.rules, 'r1')
    await put(CONTENT_ALIASES.rules, rule('r3', 'c'))
    await check('one deleted and one added between two recomputes (same count)')
    await put(CONTENT_ALIASES.rules, rule('r3', 'c'), 'test')
    await put(CONTENT_ALIASES.rules, rule('r1', 'back'))
    await check('one moved to another space and one added (same count)')
    await put(CONTENT_ALIASES.integrations, integration([]))
    await kept.remove(CONTENT_ALIASES.rules, 'r1')
    await check('as it was')
  })
})

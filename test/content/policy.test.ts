import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { documentHash } from '../../src/content/hash'
import { DEFAULT_POLICY_DOCUMENT_ID, defaultPolicyId, ensureSpacePolicies } from '../../src/content/policy/defaults'
import { CONTENT_ALIASES } from '../../src/setup/indices'
import { decoderBody, integrationBody, PREFIX, startHarness, type Harness } from './harness'

let h: Harness

beforeAll(async () => {
  h = await startHarness({ engine: 'mock' })
})
afterAll(() => h.stop())

const draftPolicy = async () => (await h.content.repo.policy('draft'))!

describe('space policies', () => {
  test('draft, test and custom policies exist after start-up, with their hashes; standard is not invented', async () => {
    for (const space of ['draft', 'test', 'custom'] as const) {
      const p = await h.content.repo.policy(space)
      expect(p?._id).toBe(defaultPolicyId(space))
      expect(p!.document.id).toBe(DEFAULT_POLICY_DOCUMENT_ID)
      expect(p!.document.enabled).toBe(space === 'draft')
      expect(p!.hash).toBe(documentHash(p!.document))
      expect(await h.content.spaceHash(space)).toMatch(/^[0-9a-f]{64}$/)
    }
    expect(await h.content.repo.policy('standard')).toBeUndefined()
  })

  test('ensureSpacePolicies is idempotent', async () => {
    const before = await draftPolicy()
    expect(await ensureSpacePolicies({ store: h.store, now: Date.now })).toEqual([])
    const after = await draftPolicy()
    expect(after.seqNo).toBe(before.seqNo)
    expect((await h.store.count({ index: CONTENT_ALIASES.policies })).count).toBe(3)
  })
})

describe('PUT /policy/{space}', () => {
  test('draft: required fields are all reported at once', async () => {
    const r = await h.request('PUT', `${PREFIX}/policy/draft`, {
      body: { resource: { metadata: { title: 'x' }, index_discarded_events: true } },
    })
    expect(r).toMatchObject({
      status: 400,
      body: { message: 'Missing [enabled, index_unclassified_events, author, description, documentation, references] field.' },
    })
    expect((await h.request('PUT', `${PREFIX}/policy/draft`, { body: {} })).body.message).toBe('Missing [resource] field.')
    expect((await h.request('PUT', `${PREFIX}/policy/draft`, { raw: 'nope' })).body.message).toBe('Invalid request body.')
  })

  test('unknown or unsupported spaces are 400', async () => {
    for (const space of ['test', 'custom', 'nope']) {
      const r = await h.request('PUT', `${PREFIX}/policy/${space}`, { body: { resource: (await draftPolicy()).document } })
      expect(r).toMatchObject({ status: 400, body: { message: 'Invalid space value. Must be one of: draft, standard.' } })
    }
  })

  test('draft: the document is replaced, id/date/compatibility kept, lists may only be reordered', async () => {
    const id1 = (await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('p-one') })).body.message
    const id2 = (await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('p-two') })).body.message
    const stored = await draftPolicy()
    const resource = {
      ...stored.document,
      id: 'ignored',
      metadata: { ...(stored.document.metadata as object), description: 'mine', date: '1999-01-01T00:00:00Z' },
      integrations: [id2, id1],
      enabled: false,
    }
    const r = await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource } })
    expect(r).toMatchObject({ status: 200, body: { message: stored._id, status: 200 } })
    const after = await draftPolicy()
    expect(after.document.id).toBe(stored.document.id)
    expect(after.document.integrations).toEqual([id2, id1])
    expect(after.document.enabled).toBe(false)
    expect((after.document.metadata as any).description).toBe('mine')
    expect((after.document.metadata as any).date).toBe((stored.document.metadata as any).date)
    expect(after.hash).toBe(documentHash(after.document))

    const added = await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: { ...resource, integrations: [id1] } } })
    expect(added.status).toBe(400)
    expect(added.body.message).toStartWith("Content of 'integrations' cannot be added or removed via update.")
  })

  test('enrichments must be known types without duplicates', async () => {
    const resource = (await draftPolicy()).document
    const dup = await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: { ...resource, enrichments: ['geo', 'geo'] } } })
    expect(dup.body.message).toBe("Duplicate enrichment type 'geo'.")
    const unknown = await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: { ...resource, enrichments: ['ip'] } } })
    expect(unknown.body.message).toStartWith("Invalid enrichment type 'ip'.")
    // IoC types become valid once the IoC summary document lists them.
    await h.content.repo.put(CONTENT_ALIASES.enrichments, '__ioc_type_hashes__', { type_hashes: { ip: { hash: { sha256: 'a' } } } })
    const ok = await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: { ...resource, enrichments: ['ip', 'geo'] } } })
    expect(ok.status).toBe(200)
    expect((await draftPolicy()).document.enrichments).toEqual(['ip', 'geo'])
  })
})

describe('DELETE /space/{space}', () => {
  test('test and custom cannot be reset; unknown spaces are 400', async () => {
    expect((await h.request('DELETE', `${PREFIX}/space/test`)).body).toEqual({ message: "Cannot reset the 'test' space.", status: 400 })
    expect((await h.request('DELETE', `${PREFIX}/space/custom`)).status).toBe(400)
    expect((await h.request('DELETE', `${PREFIX}/space/standard`)).status).toBe(400)
    expect((await h.request('DELETE', `${PREFIX}/space/nope`)).body.message).toBe('Invalid space: [nope].')
  })

  test('draft reset removes every draft document and recreates the default policy', async () => {
    const parent = (await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('reset-me') })).body.message
    expect((await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent) })).status).toBe(201)
    const testBefore = await h.content.repo.policy('test')
    const r = await h.request('DELETE', `${PREFIX}/space/draft`)
    expect(r).toEqual({ status: 200, body: { message: 'Successfully reset space [draft].', status: 200 } })
    for (const alias of [CONTENT_ALIASES.integrations, CONTENT_ALIASES.decoders]) {
      expect(await h.content.repo.count(alias, 'draft')).toBe(0)
    }
    const fresh = await draftPolicy()
    expect(fresh._id).toBe(defaultPolicyId('draft'))
    expect(fresh.document.integrations).toEqual([])
    expect(fresh.document.enabled).toBe(true)
    expect(h.ruleset.calls).toContainEqual({ op: 'deleteIntegration', space: 'draft', id: parent })
    // Other spaces untouched.
    expect((await h.content.repo.policy('test'))!.seqNo).toBe(testBefore!.seqNo)
  })
})

describe('catalog.policy_update.enabled: false', () => {
  test('PUT /policy answers 403 for everyone, all_access included, before reading the body', async () => {
    const off = await startHarness({ engine: 'mock', node: { 'plugins.content_manager.catalog.policy_update.enabled': false } })
    try {
      const r = await off.request('PUT', `${PREFIX}/policy/draft`, { raw: 'not even json' })
      expect(r).toMatchObject({ status: 403, body: { message: 'Policy updates are disabled on this deployment.', status: 403 } })
      const standard = await off.request('PUT', `${PREFIX}/policy/standard`, { body: { resource: {} } })
      expect(standard.status).toBe(403)
    } finally {
      await off.stop()
    }
  })
})

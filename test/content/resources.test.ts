import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { documentHash } from '../../src/content/hash'
import { CONTENT_ALIASES } from '../../src/setup/indices'
import { decoderBody, filterBody, integrationBody, kvdbBody, PREFIX, ruleBody, startHarness, type Harness } from './harness'

let h: Harness

beforeAll(async () => {
  h = await startHarness()
})
afterAll(() => h.stop())

async function source(alias: string, id: string): Promise<any> {
  const r = await h.store.get({ index: alias, id })
  return r.found ? r._source : undefined
}

async function newIntegration(title: string): Promise<string> {
  const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody(title) })
  expect(r.status).toBe(201)
  return r.body.message
}

describe('integrations', () => {
  test('create answers 201 with the UUID; the stored envelope carries document, hash and draft space', async () => {
    const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('azure-functions') })
    expect(r.status).toBe(201)
    expect(r.body.status).toBe(201)
    const id = r.body.message
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    const stored = await source(CONTENT_ALIASES.integrations, id)
    expect(stored.space).toEqual({ name: 'draft' })
    expect(stored.document.id).toBe(id)
    expect(stored.hash.sha256).toBe(documentHash(stored.document))
    expect(stored.document).toMatchObject({ category: 'applications', enabled: true, decoders: [], rules: [], kvdbs: [] })
    expect(stored.document.metadata.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(stored.document.metadata.modified).toBe(stored.document.metadata.date)
    // Linked into the draft policy.
    const policy = await h.content.repo.policy('draft')
    expect(policy!.document.integrations).toContain(id)
    // Ruleset Management was told.
    expect(h.ruleset.calls).toContainEqual({ op: 'upsertIntegration', space: 'draft', id, existed: false })
  })

  test('root-level metadata fields are nested, client lists and ids are replaced by the server', async () => {
    const r = await h.request('POST', `${PREFIX}/integrations`, {
      body: { resource: { id: 'mine', title: 'nested-title', author: 'Me', category: 'cloud-services', rules: ['x'], enabled: false } },
    })
    expect(r.status).toBe(201)
    const stored = await source(CONTENT_ALIASES.integrations, r.body.message)
    expect(stored.document.id).toBe(r.body.message)
    expect(stored.document.metadata).toMatchObject({ title: 'nested-title', author: 'Me', supports: [] })
    expect(stored.document.title).toBeUndefined()
    expect(stored.document.rules).toEqual([])
    expect(stored.document.enabled).toBe(false)
  })

  test('missing fields and duplicate titles are 400', async () => {
    const miss = await h.request('POST', `${PREFIX}/integrations`, { body: { resource: { metadata: { title: 't', author: 'a' } } } })
    expect(miss).toMatchObject({ status: 400, body: { message: 'Missing [category] field.', status: 400 } })
    const blank = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('   ') })
    expect(blank.body.message).toBe('Missing [metadata.title] field.')
    expect((await h.request('POST', `${PREFIX}/integrations`, { body: {} })).body.message).toBe('Missing [resource] field.')
    const bad = await h.request('POST', `${PREFIX}/integrations`, { raw: '{"resource": ' })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toStartWith('Invalid request body.')
    await newIntegration('dup-title')
    const dup = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('dup-title') })
    expect(dup).toMatchObject({
      status: 400,
      body: { message: "An integration with the name 'dup-title' already exists in the draft space." },
    })
  })

  test('update keeps date, re-stamps nothing when unchanged, and refuses list changes', async () => {
    const id = await newIntegration('upd')
    const before = await source(CONTENT_ALIASES.integrations, id)
    const same = await h.request('PUT', `${PREFIX}/integrations/${id}`, { body: { resource: before.document } })
    expect(same).toMatchObject({ status: 200, body: { message: id, status: 200 } })
    expect((await source(CONTENT_ALIASES.integrations, id)).hash.sha256).toBe(before.hash.sha256)

    const changed = { ...before.document, category: 'security', metadata: { ...before.document.metadata, description: 'changed' } }
    expect((await h.request('PUT', `${PREFIX}/integrations/${id}`, { body: { resource: changed } })).status).toBe(200)
    const after = await source(CONTENT_ALIASES.integrations, id)
    expect(after.document.category).toBe('security')
    expect(after.document.metadata.date).toBe(before.document.metadata.date)
    expect(after.hash.sha256).not.toBe(before.hash.sha256)
    expect(after.hash.sha256).toBe(documentHash(after.document))

    const added = await h.request('PUT', `${PREFIX}/integrations/${id}`, { body: { resource: { ...changed, rules: ['sneaky'] } } })
    expect(added).toMatchObject({
      status: 400,
      body: { message: "Content of 'rules' cannot be added or removed via update. Please use the specific resource endpoints." },
    })
    const noEnabled = { ...changed }
    delete (noEnabled as Record<string, unknown>).enabled
    expect((await h.request('PUT', `${PREFIX}/integrations/${id}`, { body: { resource: noEnabled } })).body.message).toBe(
      'Missing [enabled] field.',
    )
  })

  test('unknown ids are 404 (odd-but-valid ids too); characters outside [A-Za-z0-9_-] are 400', async () => {
    for (const method of ['PUT', 'DELETE']) {
      const unknown = await h.request(method, `${PREFIX}/integrations/not-a-uuid`, { body: integrationBody('x') })
      expect(unknown).toMatchObject({ status: 404, body: { message: 'Resource not found.', status: 404 } })
      const malformed = await h.request(method, `${PREFIX}/rules/bad.id`, { body: integrationBody('x') })
      expect(malformed).toMatchObject({ status: 400, body: { message: "Invalid 'id' format." } })
    }
  })

  test('an integration with attached resources cannot be deleted; once empty it can, and leaves the policy', async () => {
    const id = await newIntegration('with-children')
    const dec = await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(id) })
    expect(dec.status).toBe(201)
    const refused = await h.request('DELETE', `${PREFIX}/integrations/${id}`)
    expect(refused).toMatchObject({ status: 400, body: { message: 'Cannot delete integration because it has decoders attached.' } })
    expect((await h.request('DELETE', `${PREFIX}/decoders/${dec.body.message}`)).status).toBe(200)
    const ok = await h.request('DELETE', `${PREFIX}/integrations/${id}`)
    expect(ok).toMatchObject({ status: 200, body: { message: id, status: 200 } })
    expect(await source(CONTENT_ALIASES.integrations, id)).toBeUndefined()
    expect((await h.content.repo.policy('draft'))!.document.integrations).not.toContain(id)
    expect(h.ruleset.calls).toContainEqual({ op: 'deleteIntegration', space: 'draft', id })
    expect((await h.request('DELETE', `${PREFIX}/integrations/${id}`)).status).toBe(404)
  })
})

describe('decoders, KVDBs and rules belong to an integration', () => {
  test('a decoder is listed in its integration, whose hash follows; deleting unlists it', async () => {
    const parent = await newIntegration('dec-parent')
    const before = await source(CONTENT_ALIASES.integrations, parent)
    const r = await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent) })
    expect(r.status).toBe(201)
    const stored = await source(CONTENT_ALIASES.decoders, r.body.message)
    expect(stored.space.name).toBe('draft')
    expect(stored.yaml).toStartWith('name: decoder/app-access/0\nmetadata:')
    const after = await source(CONTENT_ALIASES.integrations, parent)
    expect(after.document.decoders).toEqual([r.body.message])
    expect(after.hash.sha256).toBe(documentHash(after.document))
    expect(after.hash.sha256).not.toBe(before.hash.sha256)
    expect((await h.request('DELETE', `${PREFIX}/decoders/${r.body.message}`)).status).toBe(200)
    expect((await source(CONTENT_ALIASES.integrations, parent)).document.decoders).toEqual([])
  })

  test('the integration must be named, exist and be in draft', async () => {
    const noParent = { ...decoderBody('x') } as Record<string, unknown>
    delete noParent.integration
    expect((await h.request('POST', `${PREFIX}/decoders`, { body: noParent })).body.message).toBe('Missing [integration] field.')
    const unknown = await h.request('POST', `${PREFIX}/kvdbs`, { body: kvdbBody('0000') })
    expect(unknown).toMatchObject({ status: 400, body: { message: 'Integration [0000] not found.' } })
    // A standard-space integration (as CTI sync writes it) is not a valid parent.
    await h.content.repo.put(CONTENT_ALIASES.integrations, 'std-int', {
      document: { id: 'std-int', metadata: { title: 'std' }, decoders: [], rules: [], kvdbs: [] },
      hash: { sha256: 'x' },
      space: { name: 'standard' },
    })
    const std = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody('std-int', 'r', 'std') })
    expect(std).toMatchObject({ status: 400, body: { message: "Integration with ID 'std-int' is not in draft space." } })
    const upd = await h.request('PUT', `${PREFIX}/integrations/std-int`, { body: integrationBody('std') })
    expect(upd.body.message).toBe("Integration with ID 'std-int' is not in draft space.")
  })

  test("a rule's logsource.product must equal its integration's title; titles are unique", async () => {
    const parent = await newIntegration('sshd')
    const wrong = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'brute force', 'apache') })
    expect(wrong.status).toBe(400)
    expect(wrong.body.message).toContain("'apache'")
    expect(wrong.body.message).toContain("'sshd'")
    const ok = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'brute force', 'sshd') })
    expect(ok.status).toBe(201)
    expect((await source(CONTENT_ALIASES.integrations, parent)).document.rules).toEqual([ok.body.message])
    expect(h.ruleset.calls).toContainEqual({ op: 'upsertRule', space: 'draft', id: ok.body.message, existed: false, parent })
    const dup = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'brute force', 'sshd') })
    expect(dup.body.message).toBe("A rule with the name 'brute force' already exists in the draft space.")
    // Update: title unique excluding itself, product still checked.
    const rule = await source(CONTENT_ALIASES.rules, ok.body.message)
    const again = await h.request('PUT', `${PREFIX}/rules/${ok.body.message}`, { body: { resource: { ...rule.document, level: 'high' } } })
    expect(again.status).toBe(200)
    expect(h.ruleset.calls).toContainEqual({ op: 'upsertRule', space: 'draft', id: ok.body.message, existed: true, parent })
    const moved = await h.request('PUT', `${PREFIX}/rules/${ok.body.message}`, {
      body: { resource: { ...rule.document, logsource: { product: 'other' } } },
    })
    expect(moved.status).toBe(400)
    expect((await h.request('DELETE', `${PREFIX}/rules/${ok.body.message}`)).status).toBe(200)
    expect(h.ruleset.calls).toContainEqual({ op: 'deleteRule', space: 'draft', id: ok.body.message })
  })

  test('Ruleset Management refusing a rule is a 400 and nothing is stored', async () => {
    const parent = await newIntegration('refused-parent')
    h.ruleset.refuseRules('field foo.bar is not in the schema')
    try {
      const r = await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'refused', 'refused-parent') })
      expect(r).toMatchObject({ status: 400, body: { message: 'Error in Security Analytics. field foo.bar is not in the schema' } })
    } finally {
      h.ruleset.refuseRules(undefined)
    }
    expect((await source(CONTENT_ALIASES.integrations, parent)).document.rules).toEqual([])
    expect(await h.content.repo.findByTitle(CONTENT_ALIASES.rules, 'draft', 'refused')).toEqual([])
  })

  test('a decoder set as the draft root decoder cannot be deleted', async () => {
    const parent = await newIntegration('root-parent')
    const dec = (await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent, 'decoder/root/0') })).body.message
    const policy = await h.content.repo.policy('draft')
    const resource = { ...policy!.document, root_decoder: dec }
    expect((await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource } })).status).toBe(200)
    const r = await h.request('DELETE', `${PREFIX}/decoders/${dec}`)
    expect(r).toMatchObject({ status: 400, body: { message: `Cannot remove decoder [${dec}] as it is set as root decoder.` } })
    await h.request('PUT', `${PREFIX}/policy/draft`, { body: { resource: { ...resource, root_decoder: '' } } })
    expect((await h.content.repo.policy('draft'))!.document.root_decoder).toBeNull()
    expect((await h.request('DELETE', `${PREFIX}/decoders/${dec}`)).status).toBe(200)
  })

  test('KVDB create and update need content and titles; YAML bodies are accepted', async () => {
    const parent = await newIntegration('kv-parent')
    const noContent = kvdbBody(parent) as { resource: Record<string, unknown> }
    delete noContent.resource.content
    expect((await h.request('POST', `${PREFIX}/kvdbs`, { body: noContent })).body.message).toBe('Missing [content] field.')
    const yaml = `integration: ${parent}\nresource:\n  metadata:\n    title: yaml-kv\n    author: ACME\n  content:\n    a: b\n`
    const r = await h.request('POST', `${PREFIX}/kvdbs`, { raw: yaml, headers: { 'content-type': 'application/yaml' } })
    expect(r.status).toBe(201)
    const stored = await source(CONTENT_ALIASES.kvdbs, r.body.message)
    expect(stored.document.content).toEqual({ a: 'b' })
    expect(stored.yaml).toContain('content:')
    expect((await source(CONTENT_ALIASES.integrations, parent)).document.kvdbs).toEqual([r.body.message])
  })

  test('YAML aliases that expand past the bound and JSON nested past it are refused before anything is stored', async () => {
    const parent = await newIntegration('kv-bomb')
    // Seven levels of nine aliases: 4.8 million copies of a 100-character string once expanded.
    const lines = [
      `a: &a [${Array(9)
        .fill(JSON.stringify('x'.repeat(100)))
        .join(',')}]`,
    ]
    for (let i = 1; i < 7; i++)
      lines.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(96 + i)}`)
          .join(',')}]`,
      )
    const yaml = `${lines.join('\n')}\nintegration: ${parent}\nresource:\n  metadata: {title: bomb, author: ACME}\n  content: {k: *g}\n`
    const bomb = await h.request('POST', `${PREFIX}/kvdbs`, { raw: yaml, headers: { 'content-type': 'application/yaml' } })
    expect(bomb).toEqual({
      status: 400,
      body: { message: 'Invalid request body. The body expands to more than 1000000 values.', status: 400 },
    })
    const deep = JSON.stringify(kvdbBody(parent, 'deep')).replace('"value1"', '['.repeat(2000) + ']'.repeat(2000))
    expect(await h.request('POST', `${PREFIX}/kvdbs`, { raw: deep })).toEqual({
      status: 400,
      body: { message: 'Invalid request body. The body nests deeper than 1000 levels.', status: 400 },
    })
    expect((await source(CONTENT_ALIASES.integrations, parent)).document.kvdbs).toEqual([])
  })
})

describe('filters', () => {
  test('need a valid space and no id; are linked into that space policy', async () => {
    expect((await h.request('POST', `${PREFIX}/filters`, { body: { resource: filterBody('draft').resource } })).body.message).toBe(
      'Missing [space] field.',
    )
    expect((await h.request('POST', `${PREFIX}/filters`, { body: filterBody('test') })).body.message).toBe('Invalid space value.')
    const withId = filterBody('draft') as { resource: Record<string, unknown> }
    withId.resource.id = 'x'
    expect((await h.request('POST', `${PREFIX}/filters`, { body: withId })).body.message).toBe('ID should not be provided in the payload.')
    const r = await h.request('POST', `${PREFIX}/filters`, { body: filterBody('draft') })
    expect(r.status).toBe(201)
    const stored = await source(CONTENT_ALIASES.filters, r.body.message)
    expect(stored.document.id).toBe(r.body.message)
    expect((await h.content.repo.policy('draft'))!.document.filters).toContain(r.body.message)
    // Update must name the space the filter is in.
    const wrongSpace = await h.request('PUT', `${PREFIX}/filters/${r.body.message}`, {
      body: { space: 'standard', resource: stored.document },
    })
    expect(wrongSpace.status).toBe(400)
    expect((await h.request('DELETE', `${PREFIX}/filters/${r.body.message}`)).status).toBe(200)
    expect((await h.content.repo.policy('draft'))!.document.filters).not.toContain(r.body.message)
  })
})

describe('Engine validation', () => {
  test('an undefined temporary field without `_` is refused with the Engine reason; with `_` it passes', async () => {
    const parent = await newIntegration('tmp-fields')
    const bad = decoderBody(parent, 'decoder/tmp/0', {
      check: [{ 'tmp_json.event.action': 'exists()' }],
    })
    const r = await h.request('POST', `${PREFIX}/decoders`, { body: bad })
    expect(r.status).toBe(400)
    expect(r.body.message).toStartWith('Engine validation failed')
    expect(r.body.message).toContain('decoder')
    expect(r.body.message).toContain('is not defined')
    expect(r.body.message).toContain('temporary field')
    expect((await source(CONTENT_ALIASES.integrations, parent)).document.decoders).toEqual([])
    const good = decoderBody(parent, 'decoder/tmp/0', { check: [{ '_tmp_json.event.action': 'exists()' }] })
    expect((await h.request('POST', `${PREFIX}/decoders`, { body: good })).status).toBe(201)
    const sent = h.engine!.requestsTo('/content/validate/resource').at(-1)!.body as { type: string; resource: { id: string } }
    expect(sent.type).toBe('decoder')
    expect(typeof sent.resource.id).toBe('string')
  })

  test('rules are never sent to the Engine', async () => {
    const parent = await newIntegration('no-engine-rules')
    const before = h.engine!.requests.length
    expect((await h.request('POST', `${PREFIX}/rules`, { body: ruleBody(parent, 'r-no-engine', 'no-engine-rules') })).status).toBe(201)
    expect(h.engine!.requests.slice(before).filter((q) => q.path === '/content/validate/resource')).toEqual([])
  })

  test('an unreachable Engine socket refuses the write with the spec message', async () => {
    const parent = await newIntegration('engine-down')
    await h.engine!.vanish()
    try {
      const r = await h.request('POST', `${PREFIX}/decoders`, { body: decoderBody(parent) })
      expect(r.status).toBe(400)
      expect(r.body.message).toStartWith('Engine validation failed')
      expect(r.body.message).toContain('cannot be reached because its API socket is not available')
    } finally {
      h.engine!.restart()
    }
  })
})

describe("writes run with the caller's rights", () => {
  test('a user without write rights on the content indices gets 403 and nothing is written', async () => {
    const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('forbidden'), user: 'clusterOnly' })
    expect(r.status).toBe(403)
    expect(await h.content.repo.findByTitle(CONTENT_ALIASES.integrations, 'draft', 'forbidden')).toEqual([])
    const ok = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('allowed'), user: 'editor' })
    expect(ok.status).toBe(201)
  })
})

describe('draft policy prerequisite', () => {
  test('a write that arrives while the node starts waits for its start-up work (the policies) and succeeds', async () => {
    const bare = await startHarness({ engine: 'mock', skipStartup: true })
    try {
      const early = bare.request('POST', `${PREFIX}/integrations`, { body: integrationBody('early') })
      await Bun.sleep(100)
      await bare.content.start()
      expect((await early).status).toBe(201)
    } finally {
      await bare.stop()
    }
  })

  test('once started, without a draft policy every resource write is 500 Draft policy not found.', async () => {
    const bare = await startHarness({ engine: 'mock' })
    try {
      const draft = (await bare.content.repo.policy('draft'))!
      expect(await bare.content.repo.remove(CONTENT_ALIASES.policies, draft._id)).toBe(true)
      const r = await bare.request('POST', `${PREFIX}/integrations`, { body: integrationBody('x') })
      expect(r).toMatchObject({ status: 500, body: { message: 'Draft policy not found.', status: 500 } })
    } finally {
      await bare.stop()
    }
  })
})

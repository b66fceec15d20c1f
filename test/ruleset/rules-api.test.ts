// Rules and log types over real HTTP and through the Content Manager's sync calls: Sigma YAML in,
// compile errors as 400s naming the construct, search without the `rule` wrapper, rules in use by
// detectors, per-space ids, field mappings with the default schema, and backend-role filtering.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RulesetRejected } from '../../src/ports/ruleset-sync'
import { CUSTOM_RULES_INDEX, PREPACKAGED_RULES_INDEX } from '../../src/ruleset/indices'
import type { FieldMappingEntry } from '../../src/ruleset/model'
import { ctiRule, detectorBody, LINUX, type RulesetServer, startLinuxServer } from './harness'

const BASE = '/_plugins/_security_analytics'
const SA = 'plugins.security_analytics.'

const yaml = (title: string, detection: string, product = 'linux') => `title: ${title}
status: experimental
level: high
tags: [attack.execution]
logsource:
  product: ${product}
detection:
${detection}
`

let s: RulesetServer
beforeAll(async () => {
  s = await startLinuxServer()
})
afterAll(async () => {
  await s.stop()
})

describe('REST rules', () => {
  test('create from Sigma YAML, get, search without the wrapper', async () => {
    const body = yaml('Curl download', "  sel:\n    process.command_line|contains: 'curl '\n  condition: sel")
    const r = await s.request('POST', `${BASE}/rules?category=linux`, { raw: body })
    expect(r.status).toBe(201)
    expect(r.body.rule).toMatchObject({
      title: 'Curl download',
      category: 'linux',
      level: 'high',
      space: 'custom',
      rule: body,
      tags: [{ value: 'attack.execution' }],
    })
    expect(r.body.rule.document.id).toBe(r.body._id)
    expect(JSON.parse(r.body.rule.queries[0].value)).toEqual({
      wildcard: { 'process.command_line': { value: '*curl *', case_insensitive: true, _name: 'sel' } },
    })
    const g = await s.request('GET', `${BASE}/rules/${r.body._id}`)
    expect(g.status).toBe(200)
    expect(g.body.rule.title).toBe('Curl download')
    const found = await s.request('POST', `${BASE}/rules/_search?pre_packaged=false`, {
      body: { query: { term: { 'rule.title.keyword': 'Curl download' } } },
    })
    expect(found.body.hits.hits.map((h: any) => [h._id, h._source.title])).toEqual([[r.body._id, 'Curl download']])
    expect(found.body.hits.hits[0]._source.rule).toBe(body)
  })

  test('compile errors are 400 naming the Sigma construct, and nothing is stored', async () => {
    const before = (await s.request('POST', `${BASE}/rules/_search?pre_packaged=false`, { body: { size: 0 } })).body.hits.total.value
    const unknown = await s.request('POST', `${BASE}/rules?category=linux`, {
      raw: yaml('Bad', '  sel:\n    a|minute: 5\n  condition: sel'),
    })
    expect(unknown.status).toBe(400)
    expect(unknown.body.message).toContain("modifier 'minute'")
    const agg = await s.request('POST', `${BASE}/rules?category=linux`, {
      raw: yaml('Agg', '  sel:\n    a: 5\n  condition: sel | count() > 5'),
    })
    expect(agg.status).toBe(400)
    expect(agg.body.message).toContain('condition aggregation')
    const badYaml = await s.request('POST', `${BASE}/rules?category=linux`, { raw: 'title: [unclosed' })
    expect(badYaml.status).toBe(400)
    const unknownId = await s.request('POST', `${BASE}/rules?category=linux`, {
      raw: yaml('Ref', '  sel:\n    a: 5\n  condition: sel and other'),
    })
    expect(unknownId.body.message).toContain("unknown search identifier 'other'")
    const after = (await s.request('POST', `${BASE}/rules/_search?pre_packaged=false`, { body: { size: 0 } })).body.hits.total.value
    expect(after).toBe(before)
  })

  test('the category must be a known log type', async () => {
    const r = await s.request('POST', `${BASE}/rules?category=windows`, { raw: yaml('W', '  sel:\n    a: 1\n  condition: sel') })
    expect(r.body).toEqual({ message: 'Invalid rule category [windows]', status: 400 })
    // Without the parameter, logsource.product decides.
    expect((await s.request('POST', `${BASE}/rules`, { raw: yaml('L', '  sel:\n    a: 1\n  condition: sel') })).status).toBe(201)
  })

  test('a rule used by a detector is only updated or deleted when forced', async () => {
    const r = await s.request('POST', `${BASE}/rules?category=linux`, {
      raw: yaml('Used', '  sel:\n    user.name: root\n  condition: sel'),
    })
    const d = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: [r.body._id] }) })
    expect(d.status).toBe(201)
    const newer = yaml('Used v2', '  sel:\n    user.name: admin\n  condition: sel')
    const u = await s.request('PUT', `${BASE}/rules/${r.body._id}?category=linux`, { raw: newer })
    expect(u.body).toEqual({
      message: `Rule with id ${r.body._id} is actively used by detectors. Update can be forced by setting forced flag to true`,
      status: 400,
    })
    const forced = await s.request('PUT', `${BASE}/rules/${r.body._id}?category=linux&forced=true`, { raw: newer })
    expect(forced.status).toBe(200)
    expect(forced.body.rule.title).toBe('Used v2')
    const del = await s.request('DELETE', `${BASE}/rules/${r.body._id}`)
    expect(del.body).toEqual({
      message: `Rule with id ${r.body._id} is actively used by detectors. Deletion can be forced by setting forced flag to true`,
      status: 400,
    })
    expect((await s.request('DELETE', `${BASE}/rules/${r.body._id}?forced=true`)).status).toBe(200)
    expect((await s.request('GET', `${BASE}/rules/${r.body._id}`)).status).toBe(404)
  })

  test('filter_by_backend_roles hides rules created by callers sharing no backend role; CTI rules stay visible', async () => {
    await s.ruleset.sync.upsertRule('custom', ctiRule('cti-visible', { sel: { a: 1 }, condition: 'sel' }), LINUX.id, false)
    const mine = await s.request('POST', `${BASE}/rules?category=linux`, {
      user: 'admin',
      raw: yaml('Admin only', '  sel:\n    a: 1\n  condition: sel'),
    })
    await s.setSetting(`${SA}filter_by_backend_roles`, true)
    try {
      const titles = async (user: string) =>
        (await s.request('POST', `${BASE}/rules/_search?pre_packaged=false`, { user, body: { size: 100 } })).body.hits.hits.map(
          (h: any) => h._source.title,
        )
      expect(await titles('blue')).toContain('Rule cti-visible')
      expect(await titles('blue')).not.toContain('Admin only')
      expect(await titles('admin')).toContain('Admin only')
      expect((await s.request('GET', `${BASE}/rules/${mine.body._id}`, { user: 'blue' })).status).toBe(403)
      expect((await s.request('DELETE', `${BASE}/rules/${mine.body._id}`, { user: 'blue' })).status).toBe(403)
    } finally {
      await s.setSetting(`${SA}filter_by_backend_roles`, false)
    }
    expect((await s.request('GET', `${BASE}/rules/${mine.body._id}`, { user: 'blue' })).status).toBe(200)
  })
})

describe('Content Manager sync', () => {
  test('standard rules keep the CTI id; other spaces get their own id, stable across upserts', async () => {
    await s.ruleset.sync.upsertRule('standard', ctiRule('cti-1', { sel: { a: 1 }, condition: 'sel' }), LINUX.id, false)
    expect((await s.deps.store.get({ index: PREPACKAGED_RULES_INDEX, id: 'cti-1' })).found).toBe(true)
    await s.ruleset.sync.upsertRule('draft', ctiRule('cti-1', { sel: { a: 1 }, condition: 'sel' }), LINUX.id, false)
    await s.ruleset.sync.upsertRule('draft', ctiRule('cti-1', { sel: { a: 2 }, condition: 'sel' }, { level: 'low' }), LINUX.id, true)
    const drafts = await s.deps.store.search({
      index: CUSTOM_RULES_INDEX,
      body: { query: { bool: { filter: [{ term: { 'rule.document.id': 'cti-1' } }, { term: { 'rule.space': 'draft' } }] } } },
    })
    expect(drafts.hits.hits.length).toBe(1)
    expect(drafts.hits.hits[0]._id).not.toBe('cti-1')
    expect((drafts.hits.hits[0]._source as any).rule.level).toBe('low')
    const pre = await s.request('POST', `${BASE}/rules/_search`, { body: { query: { term: { 'rule.document.id': 'cti-1' } } } })
    expect(pre.body.hits.hits.map((h: any) => h._id)).toEqual(['cti-1'])
  })

  test('a rule that does not compile: refused in user spaces, stored without queries in standard', async () => {
    const bad = ctiRule('cti-bad', { sel: { 'a|minute': 1 }, condition: 'sel' })
    await expect(s.ruleset.sync.upsertRule('draft', bad, LINUX.id, false)).rejects.toBeInstanceOf(RulesetRejected)
    await s.ruleset.sync.upsertRule('standard', bad, LINUX.id, false)
    const got = await s.deps.store.get({ index: PREPACKAGED_RULES_INDEX, id: 'cti-bad' })
    const rule = (got as any)._source.rule
    expect(rule.queries).toEqual([])
    expect(rule.compile_error).toContain("modifier 'minute'")
  })

  test('delete and deleteSpace', async () => {
    await s.ruleset.sync.upsertIntegration('test', { ...LINUX, id: 'int-t' }, false)
    await s.ruleset.sync.upsertRule('test', ctiRule('t-1', { sel: { a: 1 }, condition: 'sel' }), 'int-t', false)
    await s.ruleset.sync.upsertRule('test', ctiRule('t-2', { sel: { a: 1 }, condition: 'sel' }), 'int-t', false)
    await s.ruleset.sync.deleteRule('test', 't-1')
    await s.ruleset.sync.deleteRule('test', 't-1') // unknown: not an error
    expect(await s.ruleset.sync.deleteSpace('test')).toEqual({ integrations: 1, rules: 1, failures: [] })
    expect(await s.ruleset.sync.deleteSpace('test')).toEqual({ integrations: 0, rules: 0, failures: [] })
  })
})

describe('log types and field mappings', () => {
  test('log type search over GET and POST', async () => {
    const all = await s.request('GET', `${BASE}/logtype/_search`)
    expect(all.status).toBe(200)
    expect(all.body.hits.hits.map((h: any) => h._source.name)).toContain('linux')
    const r = await s.request('POST', `${BASE}/logtype/_search`, { body: { query: { term: { name: 'linux' } } } })
    expect(r.status).toBe(200)
    expect(r.body.hits.hits.map((h: any) => [h._id, h._source.name, h._source.category])).toEqual([['int-linux', 'linux', 'Security']])
  })

  test('rules map Sigma fields through the log type, with the default schema unless it names its own', async () => {
    await s.ruleset.logTypes.upsert('standard', {
      id: 'int-win',
      name: 'windows',
      mappings: [{ raw_field: 'CommandLine', ecs: 'process.command_line', ocsf: 'actor.process.cmd_line' } as FieldMappingEntry],
    })
    const body = yaml('Win', '  sel:\n    CommandLine|contains: whoami\n  condition: sel', 'windows')
    const ecs = await s.request('POST', `${BASE}/rules`, { raw: body })
    expect(JSON.parse(ecs.body.rule.queries[0].value).wildcard).toHaveProperty(['process.command_line'])
    await s.setSetting(`${SA}mappings.default_schema`, 'ocsf')
    try {
      const ocsf = await s.request('POST', `${BASE}/rules`, { raw: body })
      expect(JSON.parse(ocsf.body.rule.queries[0].value).wildcard).toHaveProperty(['actor.process.cmd_line'])
      await s.ruleset.logTypes.upsert('standard', {
        id: 'int-win',
        name: 'windows',
        schema: 'ecs',
        mappings: [{ raw_field: 'CommandLine', ecs: 'process.command_line', ocsf: 'actor.process.cmd_line' } as FieldMappingEntry],
      })
      const own = await s.request('POST', `${BASE}/rules`, { raw: body })
      expect(JSON.parse(own.body.rule.queries[0].value).wildcard).toHaveProperty(['process.command_line'])
    } finally {
      await s.setSetting(`${SA}mappings.default_schema`, 'ecs')
    }
  })
})

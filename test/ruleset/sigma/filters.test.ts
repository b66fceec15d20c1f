// Sigma filter rules (filters specification v2.1; `rules: any` from the v2.2 draft): which rules a
// filter applies to (id, Sigma id, name, any; logsource), the effective `rule and not filter`,
// validation naming the construct, and the filter applied by rules/evaluate (logtest's path).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { applies, parseFilterDocument, withFilters } from '../../../src/ruleset/filters'
import { compileSigmaRule, evaluateRules, SigmaError } from '../../../src/ruleset/sigma'
import { LINUX, type RulesetServer, startRulesetServer } from '../harness'

// The specification's example.
const SPEC_FILTER = `
title: Filter Administrator account
description: The valid administrator account start with adm_
logsource:
    category: process_creation
    product: windows
filter:
    rules:
        - 6f3e2987-db24-4c78-a860-b4f4095a7095 # Data Compressed - rar.exe
        - df0841c0-9846-4e9f-ad8a-7df91571771b # Login on jump host
    selection:
        User|startswith: 'adm_'
    condition: selection
`
const RAR = `
title: Data Compressed - rar.exe
id: 6f3e2987-db24-4c78-a860-b4f4095a7095
name: rar_compress
logsource:
    category: process_creation
    product: windows
detection:
    selection:
        Image|endswith: '\\rar.exe'
    condition: selection
`
const target = (yaml: string) => {
  const c = compileSigmaRule(yaml)
  return { rule: c, target: { ids: [c.id!], name: c.document.name, logsource: c.logsource } }
}
const matches = (yaml: string, filters: string[], event: Record<string, unknown>) => {
  const { rule, target: t } = target(yaml)
  const tuned = withFilters(
    rule,
    t,
    filters.map((f) => parseFilterDocument(f)),
  )
  return evaluateRules(event, [tuned]).length === 1
}

describe('filter rules', () => {
  test('spec example: the adm_ account no longer triggers the referenced rule; others still do', () => {
    expect(matches(RAR, [SPEC_FILTER], { Image: 'C:\\x\\rar.exe', User: 'adm_bob' })).toBe(false)
    expect(matches(RAR, [SPEC_FILTER], { Image: 'C:\\x\\rar.exe', User: 'bob' })).toBe(true)
    expect(matches(RAR, [SPEC_FILTER], { Image: 'C:\\x\\rar.exe' })).toBe(true)
    expect(matches(RAR, [], { Image: 'C:\\x\\rar.exe', User: 'adm_bob' })).toBe(true)
  })

  test('a filter applies by id, by name, or to any rule, only within its logsource', () => {
    const { target: t } = target(RAR)
    const f = (rules: string, logsource = '{category: process_creation, product: windows}') =>
      parseFilterDocument(`title: f\nlogsource: ${logsource}\nfilter:\n  rules: ${rules}\n  s: {User: x}\n  condition: s`)
    expect(applies(f('[6f3e2987-db24-4c78-a860-b4f4095a7095]'), t)).toBe(true)
    expect(applies(f('[rar_compress]'), t)).toBe(true)
    expect(applies(f('any'), t)).toBe(true)
    expect(applies(f('[other]'), t)).toBe(false)
    expect(applies(f('any', '{product: windows}'), t)).toBe(true)
    expect(applies(f('any', '{product: linux}'), t)).toBe(false)
    expect(applies(f('any', '{category: process_creation, product: windows, service: sysmon}'), t)).toBe(false)
  })

  test('several filters and a compound filter condition', () => {
    const two = `title: f2\nlogsource: {product: windows}\nfilter:\n  rules: any\n  a: {Host: build}\n  b: {User: ci}\n  condition: a and not b`
    expect(matches(RAR, [SPEC_FILTER, two], { Image: 'x\\rar.exe', Host: 'build', User: 'dev' })).toBe(false)
    expect(matches(RAR, [SPEC_FILTER, two], { Image: 'x\\rar.exe', Host: 'build', User: 'ci' })).toBe(true)
  })

  test("the filter's identifiers are not reported as the rule's conditions", () => {
    const { rule, target: t } = target(RAR)
    const f = `title: f\nlogsource: {product: windows}\nfilter:\n  rules: any\n  selection: {User: x}\n  other: {User: y}\n  condition: selection and other`
    const [m] = evaluateRules({ Image: 'a\\rar.exe', User: 'x' }, [withFilters(rule, t, [parseFilterDocument(f)])])
    expect(m.selections).toEqual(['selection'])
  })

  test.each([
    ['title: f\nfilter: {rules: [a], s: {A: 1}, condition: s}', "field 'logsource'"],
    ['title: f\nlogsource: {product: x}\nfilter: {s: {A: 1}, condition: s}', "field 'filter.rules'"],
    ['title: f\nlogsource: {product: x}\nfilter: {rules: [a], s: {A: 1}, condition: t}', "condition 't'"],
    ['title: f\nlogsource: {product: x}\nfilter: {rules: [a], s: {A|bogus: 1}, condition: s}', "modifier 'bogus'"],
  ])('invalid filter %#', (yaml, construct) => {
    let thrown: unknown
    try {
      parseFilterDocument(yaml)
    } catch (e) {
      thrown = e
    }
    expect(thrown).toBeInstanceOf(SigmaError)
    expect((thrown as SigmaError).construct).toContain(construct)
  })
})

describe('rules/evaluate (logtest) applies stored filters', () => {
  let s: RulesetServer
  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
  })
  afterAll(async () => {
    await s.stop()
  })

  test('a filter created through the rules API suppresses the match; deleting it restores it', async () => {
    const rule = `title: sudo\nid: 11111111-2222-3333-4444-555555555555\nlogsource: {product: linux}\ndetection:\n  sel: {process.name: sudo}\n  condition: sel`
    const filter = `title: ops\nlogsource: {product: linux}\nfilter:\n  rules: [11111111-2222-3333-4444-555555555555]\n  ops: {user.name: ops}\n  condition: ops`
    const evaluate = (user: string) =>
      s.ruleset.evaluate({
        normalizedEvent: JSON.stringify({ process: { name: 'sudo' }, user: { name: user } }),
        rulesBodies: [rule],
        integrationId: LINUX.id,
        logType: 'linux',
        sourceIndices: ['svc-events-v5-security'],
      })
    expect((await evaluate('ops')).rules_matched).toBe(1)
    const created = await s.request('POST', '/_plugins/_security_analytics/rules?category=linux', { raw: filter })
    expect(created.status).toBe(201)
    expect((await evaluate('ops')).rules_matched).toBe(0)
    expect((await evaluate('dev')).rules_matched).toBe(1)
    const updated = await s.request('PUT', `/_plugins/_security_analytics/rules/${created.body._id}?category=linux`, {
      raw: filter.replace('user.name: ops', 'user.name: dev'),
    })
    expect(updated.status).toBe(200)
    expect((await evaluate('ops')).rules_matched).toBe(1)
    expect((await evaluate('dev')).rules_matched).toBe(0)
    expect((await s.request('DELETE', `/_plugins/_security_analytics/rules/${created.body._id}`)).status).toBe(200)
    expect((await evaluate('dev')).rules_matched).toBe(1)
  })

  test('a filter tunes the rules of its own space only: a custom filter never silences standard content', async () => {
    const doc = {
      id: 'std-sudo',
      metadata: { title: 'sudo' },
      logsource: { product: 'linux' },
      detection: { sel: { 'process.name': 'sudo' }, condition: 'sel' },
    }
    await s.ruleset.sync.upsertRule('standard', doc, LINUX.id, false)
    const { rules } = await s.ruleset.rules.bySpaceIds('standard', ['std-sudo'])
    const filter = parseFilterDocument(
      'title: f\nlogsource: {product: linux}\nfilter:\n  rules: any\n  s: {user.name: ops}\n  condition: s',
    )
    const settings = await s.deps.settings.snapshot()
    const compiled = (space: 'custom' | 'standard') =>
      s.ruleset.rules.compileForDetection(rules[0].rule, settings, undefined, Promise.resolve([{ space, filter }]))
    const event = { process: { name: 'sudo' }, user: { name: 'ops' } }
    expect(evaluateRules(event, [await compiled('custom')])).toHaveLength(1)
    expect(evaluateRules(event, [await compiled('standard')])).toHaveLength(0)
  })
})

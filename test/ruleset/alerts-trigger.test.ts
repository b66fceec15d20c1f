// Trigger conditions and action templates on their own: the condition over one document's matched
// rules, the condition string the peer would write, and the template rewrite and escaping.
import { describe, expect, test } from 'bun:test'
import { conditionSource, triggerMatches } from '../../src/ruleset/alerts/trigger'
import type { FindingRule } from '../../src/ruleset/findings/writer'
import { render } from '../../src/notifications/template'

const rule = (id: string, level: string, tags: string[] = [], category = 'linux'): FindingRule => ({ id, level, tags, category })
const high = rule('r1', 'high', ['attack.t1110'])
const low = rule('r2', 'low', ['attack.t1548', 'attack.privesc'])
const t = (x: Record<string, unknown>) => ({ name: 't', detection_types: ['rules'], ...x })
const idsOf = (matched: FindingRule[] | undefined) => matched?.map((r) => r.id).sort()

describe('triggerMatches', () => {
  test('OR within a list, AND across lists, each list may be met by another rule of the document', () => {
    expect(triggerMatches(t({ sev_levels: ['HIGH', 'critical'] }), [high, low])).toEqual([high])
    expect(idsOf(triggerMatches(t({ ids: ['r2'], tags: ['attack.t1110'] }), [high, low]))).toEqual(['r1', 'r2'])
    expect(triggerMatches(t({ ids: ['r2'], sev_levels: ['high'] }), [low])).toBeUndefined()
    expect(idsOf(triggerMatches(t({ types: ['Linux'], sev_levels: ['low'] }), [high, low]))).toEqual(['r1', 'r2'])
    expect(triggerMatches(t({ types: ['Linux'], sev_levels: ['low'] }), [high])).toBeUndefined()
    expect(triggerMatches(t({ types: ['windows'] }), [high, low])).toBeUndefined()
  })

  test('every tag counts, not only the first; a trigger with no list raises nothing', () => {
    expect(triggerMatches(t({ tags: ['attack.none', 'attack.privesc'] }), [high, low])).toEqual([low])
    expect(triggerMatches(t({}), [high, low])).toBeUndefined()
    expect(triggerMatches(t({ ids: [], tags: [] }), [high])).toBeUndefined()
  })
})

describe('conditionSource', () => {
  test('the peer expression, threat intel ORed last', () => {
    expect(conditionSource(t({ types: ['Windows'], ids: ['R1', 'R2'], sev_levels: ['high'] }))).toBe(
      '(query[tag=windows]) && (query[id=R1] || query[id=R2]) && (query[tag=high])',
    )
    expect(conditionSource(t({ tags: ['a', 'b'], detection_types: ['rules', 'threat_intel'] }))).toBe(
      '(query[tag=a] || query[tag=b]) || (query[tag=threat_intel])',
    )
  })
})

describe('templates', () => {
  test('{{ctx.detector is read as {{ctx.monitor, sections are not rewritten; values escape for JSON, triple braces raw', () => {
    const ctx = { monitor: { name: 'say "hi"' }, detector: { name: 'never' }, alerts: [{ id: 'a' }, { id: 'b' }] }
    expect(render('{{ctx.detector.name}}|{{{ctx.detector.name}}}', ctx)).toBe('say \\"hi\\"|say "hi"')
    expect(render({ source: '{{#ctx.detector}}{{name}}{{/ctx.detector}}', lang: 'mustache' }, ctx)).toBe('never')
    expect(render('{{#ctx.alerts}}[{{id}}]{{/ctx.alerts}}{{ctx.missing}}', ctx)).toBe('[a][b]')
  })
})

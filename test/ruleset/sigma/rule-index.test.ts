// What the rule index waits for before it asks the evaluator: whole values, prefixes and suffixes
// anchored at the value's ends, and the field's presence for a rule made only of exclusions.
// Each answer is also checked against every rule tested on the event (the tree evaluator).
import { expect, test } from 'bun:test'
import { compileSigmaRule, evaluateRules, evaluateRulesTree, ruleSet } from '../../../src/ruleset/sigma'
import { DocView } from '../../../src/store/query'

const rule = (detection: string) => compileSigmaRule(`title: t\nlogsource: {product: windows}\ndetection:\n${detection}`)
const candidates = (rules: ReturnType<typeof rule>[], event: Record<string, unknown>) => {
  const tree = evaluateRulesTree(event, rules)
  expect(evaluateRules(event, rules)).toEqual(tree)
  return ruleSet(rules).index.candidates(new DocView(event))
}

test('an endswith / startswith / equals value is waited for at the end / start / whole of the value', () => {
  const rules = [
    rule(`  s:\n    Image|endswith: '\\cmd.exe'\n  condition: s`),
    rule(`  s:\n    Image|startswith: 'C:\\Temp\\'\n  condition: s`),
    rule(`  s:\n    OriginalFileName: 'Cmd.Exe'\n  condition: s`),
  ]
  expect(candidates(rules, { Image: 'D:\\Tools\\CMD.EXE', OriginalFileName: 'cmd.exe' })).toEqual([0, 2])
  expect(candidates(rules, { Image: 'C:\\temp\\x.exe' })).toEqual([1])
  // The same texts elsewhere in the value: no candidate (a substring index asked all three).
  expect(candidates(rules, { Image: 'X:\\C:\\Temp\\cmd.exe.old', OriginalFileName: 'cmd.exe.mui' })).toEqual([])
})

test('a rule made only of exclusions, one of them `field: null`, waits for the field', () => {
  const rules = [
    rule(`  filter_null:\n    Image: null\n  filter_sys:\n    Image|startswith: 'C:\\Windows\\'\n  condition: not 1 of filter_*`),
  ]
  expect(ruleSet(rules).index.stats.always).toBe(0)
  expect(candidates(rules, { CommandLine: 'x' })).toEqual([])
  expect(candidates(rules, { Image: 'C:\\Users\\x.exe' })).toEqual([0])
  expect(evaluateRules({ Image: 'C:\\Users\\x.exe' }, rules)).toHaveLength(1)
  expect(candidates(rules, { Image: 'C:\\Windows\\x.exe' })).toEqual([0])
  expect(evaluateRules({ Image: 'C:\\Windows\\x.exe' }, rules)).toHaveLength(0)
})

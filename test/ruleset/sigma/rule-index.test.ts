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
  // The event meets an exclusion: the rule cannot match, and is not asked (vetoes.ts).
  expect(candidates(rules, { Image: 'C:\\Windows\\x.exe' })).toEqual([])
  expect(evaluateRules({ Image: 'C:\\Windows\\x.exe' }, rules)).toHaveLength(0)
})

const exclusions = () => [
  rule(`  ext:\n    Image|endswith: ['.exe', '.com']\n  condition: not ext`),
  rule(`  filter_main_path:\n    Image|contains: '\\'\n  filter_main_empty:\n    Image: ['-', '']\n  condition: not 1 of filter_main_*`),
  // A case-sensitive exclusion with letters: the folding scan cannot tell it, so it vetoes nothing.
  rule(`  cased:\n    Image|cased|endswith: '.EXE'\n  condition: not cased`),
  // Two exclusions that must both hold to exclude prove nothing alone.
  rule(`  both:\n    Image|startswith: 'C:\\Windows\\'\n    Image|endswith: '.dll'\n  condition: not both`),
]

test('a rule an event cannot match through one of its exclusions is not a candidate', () => {
  const rules = exclusions()
  expect(candidates(rules, { Image: 'C:\\Windows\\X.EXE' })).toEqual([2, 3])
  expect(candidates(rules, { Image: 'C:\\Windows\\x.exe' })).toEqual([2, 3])
  expect(candidates(rules, { Image: 'C:\\Windows\\x.dll' })).toEqual([0, 2, 3])
  expect(candidates(rules, { Image: 'System' })).toEqual([0, 1, 2, 3])
  expect(candidates(rules, { Image: '-' })).toEqual([0, 2, 3])
  // Any value of an array meeting an exclusion excludes, as the evaluator reads a multi-valued field.
  expect(candidates(rules, { Image: ['System', 'a\\b.com'] })).toEqual([2, 3])
})

test('a value holding the scan anchors, or longer than ignore_above, vetoes nothing', () => {
  const rules = exclusions()
  // \u0002 is the scan's value end: `.exe` before it is not the end of this value.
  expect(candidates(rules, { Image: 'a\\x.exe\u0002y' })).toEqual([0, 1, 2, 3])
  expect(candidates(rules, { Image: '\u0001-\u0002' })).toEqual([0, 1, 2, 3])
  // Under a mapping, a value longer than the keyword's ignore_above is invisible to the evaluator.
  const types = { Image: { type: 'keyword', ignore_above: 8 } }
  for (const [Image, expected] of [
    ['a\\b.exe', [2, 3]],
    ['a\\long.exe', []],
  ] as const) {
    const event = { Image }
    expect(evaluateRules(event, rules, types)).toEqual(evaluateRulesTree(event, rules, types))
    expect(ruleSet(rules, types).index.candidates(new DocView(event))).toEqual(expected.length ? [...expected] : [0, 1, 2, 3])
  }
})

test('a short value met again is answered from what its first scan found (any case, any field order)', () => {
  const rules = [
    rule(`  s:\n    Image|endswith: '\\cmd.exe'\n  condition: s`),
    rule(`  s:\n    User|contains: 'admin'\n    Image|startswith: 'C:\\Temp\\'\n  condition: s`),
  ]
  const events = [
    { Image: 'C:\\Temp\\cmd.exe', User: 'bob' },
    { User: 'Admin', Image: 'C:\\Temp\\cmd.exe' },
    { Image: 'C:\\TEMP\\CMD.EXE', User: 'ADMIN' },
    { Image: 'C:\\Temp\\cmd.exe.txt', User: 'admin' },
  ]
  const memo = () => (ruleSet(rules).index as unknown as { paths: Map<string, { memo?: unknown }> }).paths.get('Image')!.memo
  for (let round = 0; round < 5; round++) {
    expect(events.map((e) => candidates(rules, e))).toEqual([[0], [0, 1], [0, 1], [1]])
    // More distinct values than a path remembers: it forgets them and scans again, and once it
    // has seen values seldom recur, it stops remembering them.
    for (let i = 0; i < 1100; i++)
      expect(ruleSet(rules).index.candidates(new DocView({ Image: `C:\\Temp\\${round}-${i}.exe` }))).toEqual([])
    if (round === 0) expect(memo()).toBeDefined()
  }
  expect(memo()).toBeUndefined()
})

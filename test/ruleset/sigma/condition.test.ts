import { expect, test } from 'bun:test'
import { parseCondition } from '../../../src/ruleset/sigma/condition'

test('grammar and binding', () => {
  expect(parseCondition('a or b and not c')).toEqual({
    op: 'or',
    args: [
      { op: 'id', name: 'a' },
      {
        op: 'and',
        args: [
          { op: 'id', name: 'b' },
          { op: 'not', arg: { op: 'id', name: 'c' } },
        ],
      },
    ],
  })
  expect(parseCondition('not (a or b)')).toEqual({
    op: 'not',
    arg: {
      op: 'or',
      args: [
        { op: 'id', name: 'a' },
        { op: 'id', name: 'b' },
      ],
    },
  })
  expect(parseCondition('1 of sel* and all of them and any of x')).toEqual({
    op: 'and',
    args: [
      { op: 'of', quantifier: 'any', pattern: 'sel*' },
      { op: 'of', quantifier: 'all', pattern: 'them' },
      { op: 'of', quantifier: 'any', pattern: 'x' },
    ],
  })
  expect(parseCondition('not not sel-1')).toEqual({ op: 'not', arg: { op: 'not', arg: { op: 'id', name: 'sel-1' } } })
  expect(parseCondition('(((a)))')).toEqual({ op: 'id', name: 'a' })
})

test('malformed conditions', () => {
  for (const bad of ['', 'a and', 'and a', 'a b', '(a', 'a)', '1 of', 'all of (a)', 'a & b', 'not'])
    expect(() => parseCondition(bad)).toThrow(/condition/)
})

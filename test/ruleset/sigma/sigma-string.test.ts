import { describe, expect, test } from 'bun:test'
import { ANY, ONE, parseSigmaString, toWildcardPattern } from '../../../src/ruleset/sigma/sigma-string'

// pySigma's reading of backslashes (reference sigma.md 2.4), as YAML delivers the text.
describe('Sigma string escaping', () => {
  const cases: [string, unknown[]][] = [
    ['C:\\Windows\\x.exe', ['C:\\Windows\\x.exe']],
    ['a\\*b', ['a*b']],
    ['a\\\\*b', ['a\\', ANY, 'b']],
    ['a\\\\\\*b', ['a\\*b']],
    ['\\\\server\\share', ['\\server\\share']],
    ['\\\\\\\\server\\share', ['\\\\server\\share']],
    ['end\\', ['end\\']],
    ['a?b*', ['a', ONE, 'b', ANY]],
    ['a\\?', ['a?']],
    ['', []],
  ]
  for (const [input, parts] of cases) test(JSON.stringify(input), () => expect(parseSigmaString(input).parts).toEqual(parts as never))

  test('placeholders only under expand; \\% is a literal percent there', () => {
    expect(parseSigmaString('%a%').parts).toEqual(['%a%'])
    expect(parseSigmaString('%a%x', true).parts).toEqual([{ placeholder: 'a' }, 'x'])
    expect(parseSigmaString('\\%a%', true).parts).toEqual(['%a%'])
  })

  test('OpenSearch wildcard syntax escapes literal specials', () => {
    expect(toWildcardPattern(parseSigmaString('a\\*b\\\\*?'))).toBe('a\\*b\\\\*?')
  })
})

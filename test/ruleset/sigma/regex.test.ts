import { describe, expect, test } from 'bun:test'
import { luceneRegExp } from '../../../src/store/query'
import { SigmaInvalid, SigmaUnsupported } from '../../../src/ruleset/sigma/errors'
import { compileRegex, type RegexFlag } from '../../../src/ruleset/sigma/regex'

const LT = '\n\r\u2028\u2029'
const lucene = (p: string, flags: RegexFlag[] = []) => compileRegex(p, new Set(flags)).lucene

describe('PCRE -> Lucene regexp', () => {
  test('unanchored ends get .*, anchors are dropped', () => {
    expect(lucene('abc')).toBe('.*abc.*')
    expect(lucene('^abc$')).toBe('abc')
    expect(lucene('^a|b$')).toBe('a.*|.*b')
  })

  test('. excludes line terminators like JavaScript, unless s', () => {
    expect(lucene('^a.b$')).toBe(`a[^${LT}]b`)
    expect(lucene('^a.b$', ['s'])).toBe('a.b')
  })

  test('m turns ^ and $ into line anchors', () => {
    expect(lucene('^x$', ['m'])).toBe(`(.*[${LT}])?x([${LT}].*)?`)
  })

  test('shorthand classes are spelled out', () => {
    expect(lucene('^\\d\\D$')).toBe('[0-9][^0-9]')
    expect(lucene('^[\\w.]$')).toBe('[A-Za-z0-9_\\.]')
  })

  test('non-capturing and named groups become plain groups; lazy quantifiers lose the ?', () => {
    expect(lucene('^(?:a|b)+?c*?(?<n>d)$')).toBe('(a|b)+c*(d)')
  })

  test("Lucene's optional operators and string quotes are escaped", () => {
    expect(lucene('^a"#@&~<>b$')).toBe('a\\"\\#\\@\\&\\~\\<\\>b')
  })

  test('escapes become the characters they denote', () => {
    expect(lucene('^\\x41\\u0042\\t\\.$')).toBe('AB\\\t\\.')
  })

  test('quantifier braces pass; a brace that is not a quantifier is literal', () => {
    expect(lucene('^a{2,3}b{2,}c{,2}$')).toBe('a{2,3}b{2,}c\\{\\,2\\}')
  })

  test('a dash after a shorthand class is literal (JavaScript reading)', () => {
    expect(lucene('^[\\w-.]$')).toBe('[A-Za-z0-9_\\-\\.]')
    expect(lucene('^[a-z-]$')).toBe('[a-z\\-]')
  })

  test('leading inline flags become flags', () => {
    const r = compileRegex('(?i)abc', new Set())
    expect(r).toMatchObject({ caseInsensitive: true, pcre: { pattern: 'abc', flags: 'i' } })
  })

  test('the original pattern travels for the evaluator', () => {
    expect(compileRegex('\\s-H\\s', new Set(['i', 's'])).pcre).toEqual({ pattern: '\\s-H\\s', flags: 'is' })
  })

  // Zero-width assertions Lucene cannot say are left out: the translation accepts a superset,
  // flagged so the platform adapter evaluates the original pattern on what it fetches.
  const superset: [string, string[], string[]][] = [
    // pattern, strings the pattern finds (both accept), strings only the superset accepts
    ['\\bcmd\\b', ['run cmd now', 'cmd', 'a-cmd'], ['xcmdx', 'cmdx']],
    ['a$b', [], ['ab', 'xaby']],
    ['(^|\\s)x', ['x', 'a x'], ['ax']],
    ['x^a', [], ['xa']],
    ['(a$)|b', ['a', 'b', 'xa'], ['ax']],
  ]
  for (const [p, finds, extra] of superset)
    test(`translates ${p} to a flagged superset`, () => {
      const r = compileRegex(p, new Set())
      expect(r.exact).toBe(false)
      expect(r.pcre.superset).toBe(true)
      const lucene = luceneRegExp(r.lucene, 'NONE', false)
      const js = new RegExp(r.pcre.pattern, r.pcre.flags)
      for (const s of finds) expect([s, js.test(s), lucene.test(s)]).toEqual([s, true, true])
      for (const s of extra) expect([s, js.test(s), lucene.test(s)]).toEqual([s, false, true])
    })

  test('an exact translation is not flagged', () => {
    expect(compileRegex('^a$|b', new Set())).toMatchObject({ exact: true, pcre: { pattern: '^a$|b', flags: '' } })
    expect(compileRegex('^a$|b', new Set()).pcre.superset).toBeUndefined()
  })

  const refused: [string, string][] = [
    ['a(?=b)', 'look-around'],
    ['(?<!a)b', 'look-around'],
    ['(a)\\1', 'back-reference'],
    ['[]a]', 'empty character class'],
    ['[^\\D]', 'negated class'],
  ]
  for (const [p, construct] of refused)
    test(`refuses ${p}`, () => {
      expect(() => compileRegex(p, new Set())).toThrow(SigmaUnsupported)
      expect(() => compileRegex(p, new Set())).toThrow(construct)
    })

  test('an invalid regex is SigmaInvalid', () => {
    expect(() => compileRegex('a(', new Set())).toThrow(SigmaInvalid)
  })

  test('translations too long for index.max_regex_length are refused', () => {
    expect(() => compileRegex('\\s'.repeat(60), new Set())).toThrow(SigmaUnsupported)
  })
})

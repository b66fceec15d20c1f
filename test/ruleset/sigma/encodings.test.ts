import { describe, expect, test } from 'bun:test'
import { base64, base64offset, expand, utf16, windash } from '../../../src/ruleset/sigma/encodings'
import { SigmaInvalid, SigmaUnsupported } from '../../../src/ruleset/sigma/errors'
import { literal, parseSigmaString, toWildcardPattern, withPrefixAny, withSuffixAny } from '../../../src/ruleset/sigma/sigma-string'

const text = (s: { parts: unknown[] }) => toWildcardPattern(s as never)

// Vectors computed with pySigma's modifier code (reference sigma.md 2.5).
describe('encoding modifiers', () => {
  test('base64 encodes the whole value', () => {
    expect(text(base64(literal('ping')))).toBe('cGluZw==')
  })

  test('base64offset gives the three alignments with unstable edges trimmed', () => {
    expect(base64offset(literal('ping')).map(text)).toEqual(['cGluZ', 'Bpbm', 'waW5n'])
  })

  test('wide then base64offset', () => {
    expect(base64offset(utf16(literal('ping'), 'utf16le')).map(text)).toEqual(['cABpAG4AZw', 'AAaQBuAGcA', 'wAGkAbgBnA'])
  })

  test('utf16be and utf16 (little endian with byte-order mark)', () => {
    expect(utf16(literal('ab'), 'utf16be').parts).toEqual(['\0a\0b'])
    expect(utf16(literal('ab'), 'utf16').parts).toEqual(['\xff\xfea\0b\0'])
  })

  test('base64 of non-ASCII text encodes UTF-8', () => {
    expect(text(base64(literal('é')))).toBe(Buffer.from('é').toString('base64'))
  })

  test('base64 refuses wildcards', () => {
    expect(() => base64(parseSigmaString('a*'))).toThrow(SigmaInvalid)
  })

  test('windash expands a word-leading dash or slash into five variants', () => {
    expect(windash(literal(' -enc ')).map(text)).toEqual([' -enc ', ' /enc ', ' \u2013enc ', ' \u2014enc ', ' \u2015enc '])
  })

  test('windash leaves dashes inside words alone', () => {
    expect(windash(literal('a-b /x')).map(text)).toEqual(['a-b -x', 'a-b /x', 'a-b \u2013x', 'a-b \u2014x', 'a-b \u2015x'])
  })

  test('windash combines every dash', () => {
    expect(windash(literal('-a -b'))).toHaveLength(25)
  })

  test('windash refuses expansions beyond the clause budget', () => {
    expect(() => windash(literal('-a -b -c -d -e'))).toThrow(SigmaUnsupported)
  })

  test('contains/startswith/endswith do not double a wildcard', () => {
    expect(text(withSuffixAny(withPrefixAny(parseSigmaString('*a*'))))).toBe('*a*')
  })

  test('expand substitutes every configured value and keeps their wildcards', () => {
    const values = (n: string) => (n === 'dir' ? [parseSigmaString('C:\\a'), parseSigmaString('D:\\b*')] : undefined)
    expect(expand(parseSigmaString('%dir%\\x.exe', true), values).map(text)).toEqual(['C:\\\\a\\\\x.exe', 'D:\\\\b*\\\\x.exe'])
  })

  test('expand refuses unknown placeholders, naming them', () => {
    expect(() => expand(parseSigmaString('%nope%', true), () => undefined)).toThrow("expand placeholder '%nope%'")
  })
})

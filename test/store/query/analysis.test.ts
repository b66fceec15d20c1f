// The ASCII fast paths of the analyzer and of the text index's encoding give exactly the Unicode
// regular expression's tokens.
import { expect, test } from 'bun:test'
import { analyze, plainTokensJoined } from '../../../src/store/query/analysis'
import { ftsToken, textKeys } from '../../../src/store/embedded/text-index'
import { DocView } from '../../../src/store/query/doc'
import type { FieldSpec } from '../../../src/store/query/compile'
import { nextSeed } from '../../../scripts/bench/lib/random'

const WORD = /[\p{L}\p{N}\p{M}_]+(?:['.’][\p{L}\p{N}\p{M}_]+)*/gu
const reference = (text: string) => [...text.matchAll(WORD)].map((m) => m[0].toLowerCase())

/** 5,000 texts of up to 23 characters of `alphabet`, the same every run. */
function* randomTexts(alphabet: string): Generator<string> {
  let x = 12345
  const next = () => (x = nextSeed(x)) >>> 8
  for (let k = 0; k < 5000; k++) {
    let s = ''
    for (let i = next() % 24; i > 0; i--) s += alphabet[next() % alphabet.length]
    yield s
  }
}

test('ASCII texts: the same tokens as the regular expression', () => {
  for (const s of randomTexts("aZ9_ .'-,:/\\\"\t\n@#x..''Ab")) expect({ s, t: analyze(s) }).toEqual({ s, t: reference(s) })
  for (const s of ["don't stop", 'example.com.', "a.b'c..d", '_x_ __', 'ÀB after an ascii run', 'caf\u00e9 ok', 'x\u0301y'])
    expect({ s, t: analyze(s) }).toEqual({ s, t: reference(s) })
})

test('plain ASCII texts joined in one pass: the tokens of the regular expression, or undefined', () => {
  let plain = 0
  for (const s of randomTexts('aZ9 -,:/\\"\t\n@#x09zzAZ_.\'\u00e9')) {
    const joined = plainTokensJoined(s)
    if (joined === undefined) expect(/[_.'\u0080-\uffff]/.test(s)).toBe(true)
    else {
      plain++
      expect({ s, joined }).toEqual({ s, joined: [reference(s).join(' '), reference(s).length] })
      // With the text index's separator: the same tokens, each after the first prefixed.
      expect({ s, joined: plainTokensJoined(s, ' 7_') }).toEqual({ s, joined: [reference(s).join(' 7_'), reference(s).length] })
    }
  }
  expect(plain).toBeGreaterThan(100)
})

const specs = new Map<string, FieldSpec>([['m', { type: 'text' } as FieldSpec]])

/** A text value's row in the text index: its analysed tokens, each stored as ftsToken writes it. */
function expectEncoded(value: unknown, tokens: string[]): void {
  const rows = textKeys(specs, new DocView({ m: value }), () => 7)
  const want: { body: string; lengths: Array<[number, number]> } =
    tokens.length === 0 ? { body: '', lengths: [] } : { body: tokens.map((t) => ftsToken(7, t)).join(' '), lengths: [[7, tokens.length]] }
  expect({ value, body: rows.body, lengths: rows.lengths }).toEqual({ value, ...want })
}

test('text index rows: the analysed tokens, whichever path (one pass over ASCII, or token by token) encodes them', () => {
  for (const s of randomTexts("aZ9_ .'-,:/\\\"\t\n@#x..''Ab\u0010\u0019\u007f\u212a\u00e9 09zzAZ   ")) expectEncoded(s, reference(s))
  for (const s of [
    '',
    '  ',
    'plain words only',
    '  lead and trail  ',
    'Mixed CASE-words, with: punctuation/paths',
    'x_y a.b',
    '\u212aelvin',
  ])
    expectEncoded(s, reference(s))
  expectEncoded(['two Values', 'here'], ['two', 'values', 'here'])
  expectEncoded(42, ['42'])
})

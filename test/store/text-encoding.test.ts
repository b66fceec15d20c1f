// A text value's row in the text index is its analysed tokens, each stored as ftsToken writes it,
// whichever path encodes it (the one-pass ASCII encoder or the token-by-token one).
import { expect, test } from 'bun:test'
import { ftsToken, textKeys } from '../../src/store/embedded/text-index'
import { DocView } from '../../src/store/query/doc'
import type { FieldSpec } from '../../src/store/query/compile'

const WORD = /[\p{L}\p{N}\p{M}_]+(?:['.’][\p{L}\p{N}\p{M}_]+)*/gu
const reference = (text: string) => [...text.matchAll(WORD)].map((m) => m[0].toLowerCase())
const specs = new Map<string, FieldSpec>([['m', { type: 'text' } as FieldSpec]])

function expectEncoded(value: unknown, tokens: string[]): void {
  const rows = textKeys(specs, new DocView({ m: value }), () => 7)
  const want: { body: string; lengths: Array<[number, number]> } =
    tokens.length === 0 ? { body: '', lengths: [] } : { body: tokens.map((t) => ftsToken(7, t)).join(' '), lengths: [[7, tokens.length]] }
  expect({ value, body: rows.body, lengths: rows.lengths }).toEqual({ value, ...want })
}

test('text values: the stored row holds the analysed tokens', () => {
  const alphabet = "aZ9_ .'-,:/\\\"\t\n@#x..''Ab\u0010\u0019\u007f\u212a\u00e9 09zzAZ   "
  let x = 12345
  const next = () => (x = (x * 1103515245 + 12345) >>> 0) >>> 8
  for (let k = 0; k < 5000; k++) {
    let s = ''
    for (let i = next() % 24; i > 0; i--) s += alphabet[next() % alphabet.length]
    expectEncoded(s, reference(s))
  }
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

// The ASCII fast path of the analyzer gives exactly the Unicode regular expression's tokens.
import { expect, test } from 'bun:test'
import { analyze } from '../../../src/store/query/analysis'

const WORD = /[\p{L}\p{N}\p{M}_]+(?:['.’][\p{L}\p{N}\p{M}_]+)*/gu
const reference = (text: string) => [...text.matchAll(WORD)].map((m) => m[0].toLowerCase())

test('ASCII texts: the same tokens as the regular expression', () => {
  const alphabet = "aZ9_ .'-,:/\\\"\t\n@#x..''Ab"
  let x = 12345
  const next = () => (x = (x * 1103515245 + 12345) >>> 0) >>> 8
  for (let k = 0; k < 5000; k++) {
    let s = ''
    for (let i = next() % 24; i > 0; i--) s += alphabet[next() % alphabet.length]
    expect({ s, t: analyze(s) }).toEqual({ s, t: reference(s) })
  }
  for (const s of ["don't stop", 'example.com.', "a.b'c..d", '_x_ __', 'ÀB after an ascii run', 'caf\u00e9 ok', 'x\u0301y'])
    expect({ s, t: analyze(s) }).toEqual({ s, t: reference(s) })
})

// The rule index's sampled substring matcher against a naive search of the folded, anchored value:
// every pattern length band (one unit, bigram-found, and each sampled band with its stride), values
// that need folding (non-ASCII, surrogates), patterns at the value's very start and end.
import { expect, test } from 'bun:test'
import { GramMatcher } from '../../../src/store/query/gram-matcher'
import { VALUE_END, VALUE_START } from '../../../src/store/query/aho-corasick'
import { fold } from '../../../src/store/query'
import { nextSeed } from '../../../scripts/bench/lib/random'

let seed = 7
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]

function expectNaive(patterns: string[], texts: string[], anchored: boolean): number {
  const matcher = new GramMatcher(patterns)
  let hits = 0
  for (const text of texts) {
    const found = new Set<number>()
    matcher.scanFolding(text, (id) => found.add(id), anchored)
    const whole = anchored ? `${VALUE_START}${fold(text)}${VALUE_END}` : fold(text)
    const expected = patterns.flatMap((p, id) => (whole.includes(p) ? [id] : []))
    expect({ text, found: [...found].sort((a, b) => a - b) }).toEqual({ text, found: expected })
    hits += found.size
  }
  return hits
}

test('every pattern of every length band is reported once when the folded value holds it, and only then', () => {
  const ALPHABET = 'abcdef0123456789\\.- '
  const word = (n: number) => Array.from({ length: n }, () => pick([...ALPHABET])).join('')
  const lengths = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 40, 63, 64, 100]
  const patterns = Array.from({ length: 3000 }, (_, i) => word(lengths[i % lengths.length]))
  const texts = Array.from({ length: 600 }, () => {
    const parts = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () =>
      rnd() < 0.6 ? pick(patterns).toUpperCase() : word(Math.floor(rnd() * 40)),
    )
    return parts.join(word(Math.floor(rnd() * 3)))
  })
  expect(expectNaive(patterns, texts, false)).toBeGreaterThan(3000)
})

test('anchored patterns are found only at the value ends; values needing folding are folded first', () => {
  const CASED = 'aBcDeF0123\\.-éÉΣσςſKİı€𝐀𝐚\ud800ǅ'
  const cased = (n: number) => Array.from({ length: n }, () => pick([...CASED])).join('')
  const bare = Array.from({ length: 600 }, (_, i) => fold(cased(1 + (i % 24))))
  const patterns = bare.map((p, i) => [p, `${VALUE_START}${p}`, `${p}${VALUE_END}`, `${VALUE_START}${p}${VALUE_END}`][i % 4])
  const texts = Array.from({ length: 2000 }, () => {
    const p = pick(bare)
    return rnd() < 0.2
      ? p.toUpperCase()
      : rnd() < 0.5
        ? cased(Math.floor(rnd() * 8)) + p + cased(Math.floor(rnd() * 8))
        : cased(Math.floor(rnd() * 30))
  })
  expect(expectNaive(patterns, texts, true)).toBeGreaterThan(1000)
})

test('an ASCII value is not folded whole: its hash-list patterns are found as a naive search finds them', () => {
  const hex = (n: number) => Array.from({ length: n }, () => pick([...'0123456789ABCDEF'])).join('')
  const patterns = Array.from({ length: 4000 }, (_, i) =>
    fold([`MD5=${hex(32)}`, `SHA256=${hex(64)}`, `IMPHASH=${hex(32)}`, hex(32)][i % 4]),
  )
  const texts = Array.from({ length: 500 }, () =>
    [
      `SHA1=${hex(40)}`,
      `MD5=${rnd() < 0.3 ? pick(patterns).slice(4).toUpperCase() : hex(32)}`,
      `SHA256=${hex(64)}`,
      `IMPHASH=${hex(32)}`,
    ].join(','),
  )
  expect(expectNaive(patterns, texts, true)).toBeGreaterThan(30)
})

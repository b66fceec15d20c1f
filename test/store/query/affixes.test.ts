// The prefix and suffix tests with a quick reject against startsWith / endsWith: values shorter
// than, equal to and longer than the literals, the compared code unit alike or not.
import { expect, test } from 'bun:test'
import { anyPrefix, anySuffix, prefixMatcher, suffixMatcher } from '../../../src/store/query/affixes'
import { nextSeed } from '../../../scripts/bench/lib/random'

let seed = 7
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
const ALPHABET = 'ab\\.é𝐀'
const word = (n: number) => Array.from({ length: n }, () => ALPHABET[Math.floor(rnd() * ALPHABET.length)]).join('')

test('each answers what startsWith / endsWith answer', () => {
  for (let i = 0; i < 300; i++) {
    const literals = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => word(Math.floor(rnd() * 4)))
    const [one] = literals
    const pre = prefixMatcher(one)
    const suf = suffixMatcher(one)
    const anyPre = anyPrefix(literals)
    const anySuf = anySuffix(literals)
    for (let j = 0; j < 50; j++) {
      const v =
        rnd() < 0.3
          ? `${word(Math.floor(rnd() * 3))}${literals[j % literals.length]}${word(Math.floor(rnd() * 3))}`
          : word(Math.floor(rnd() * 6))
      expect([v, pre(v), suf(v), anyPre(v), anySuf(v)]).toEqual([
        v,
        v.startsWith(one),
        v.endsWith(one),
        literals.some((l) => v.startsWith(l)),
        literals.some((l) => v.endsWith(l)),
      ])
    }
  }
})

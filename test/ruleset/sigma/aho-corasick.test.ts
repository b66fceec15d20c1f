// The rule index's substring matcher against a naive search: patterns enough to leave most
// states without a dense row (thousands of hash-like strings), ASCII and non-ASCII code units.
import { expect, test } from 'bun:test'
import { AhoCorasick } from '../../../src/store/query/aho-corasick'

let seed = 99
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000
const ALPHABET = 'abcdef0123456789\\.-é€Σ'
const word = (n: number) => Array.from({ length: n }, () => ALPHABET[Math.floor(rnd() * ALPHABET.length)]).join('')

test('every pattern found in a text is reported, and only those', () => {
  const patterns = [...Array.from({ length: 3000 }, () => word(8 + Math.floor(rnd() * 56))), 'a', 'ab', 'b\\', 'é€', '€']
  const matcher = new AhoCorasick(patterns)
  for (let i = 0; i < 300; i++) {
    const parts = Array.from({ length: 1 + Math.floor(rnd() * 4) }, () =>
      rnd() < 0.5 ? patterns[Math.floor(rnd() * patterns.length)].slice(Math.floor(rnd() * 3)) : word(Math.floor(rnd() * 30)),
    )
    const text = parts.join(word(Math.floor(rnd() * 3)))
    const found = new Set<number>()
    matcher.scan(text, (id) => found.add(id))
    const expected = new Set(patterns.flatMap((p, id) => (text.includes(p) ? [id] : [])))
    expect([...found].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b))
  }
})

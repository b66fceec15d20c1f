// The rule index's substring matcher against a naive search: patterns enough to leave most
// states without a dense row (thousands of hash-like strings), ASCII and non-ASCII code units.
import { expect, test } from 'bun:test'
import { AhoCorasick, VALUE_END, VALUE_START } from '../../../src/store/query/aho-corasick'
import { fold } from '../../../src/store/query'
import { nextSeed } from '../../../scripts/bench/lib/random'

let seed = 99
const rnd = () => (seed = nextSeed(seed)) / 0x80000000
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

// The rule index's scan: folded as it reads (ASCII and other code points, surrogate pairs, lone
// surrogates), anchored patterns found only at the value's start or end.
test('a folding, anchored scan reports what a plain scan of VALUE_START + fold(text) + VALUE_END does', () => {
  const CASED = 'aBcDeF0123\\.-éÉΣσςſKİı€𝐀𝐚\ud800ǅ'
  const cased = (n: number) => Array.from({ length: n }, () => [...CASED][Math.floor(rnd() * [...CASED].length)]).join('')
  const bare = Array.from({ length: 400 }, () => fold(cased(1 + Math.floor(rnd() * 6))))
  const patterns = bare.map((p, i) => [p, `${VALUE_START}${p}`, `${p}${VALUE_END}`, `${VALUE_START}${p}${VALUE_END}`][i % 4])
  const matcher = new AhoCorasick(patterns)
  let anchoredHits = 0
  for (let i = 0; i < 2000; i++) {
    const text = rnd() < 0.3 ? bare[Math.floor(rnd() * bare.length)].toUpperCase() : cased(Math.floor(rnd() * 12))
    const found = new Set<number>()
    matcher.scanFolding(text, (id) => found.add(id), true)
    const whole = `${VALUE_START}${fold(text)}${VALUE_END}`
    const expected = new Set(patterns.flatMap((p, id) => (whole.includes(p) ? [id] : [])))
    expect({ text, found: [...found].sort((a, b) => a - b) }).toEqual({ text, found: [...expected].sort((a, b) => a - b) })
    for (const id of found) if (patterns[id].startsWith(VALUE_START) || patterns[id].endsWith(VALUE_END)) anchoredHits++
  }
  expect(anchoredHits).toBeGreaterThan(100)
})

// A large automaton gives its rows left to the states scans reach most (after 65,536 arrivals at
// states without one): answers before, while and after it does so are those of a naive search.
test('the rows learned from scans change no answer', () => {
  const lower = (n: number) => Array.from({ length: n }, () => 'abcd0123\\.-'[Math.floor(rnd() * 11)]).join('')
  const patterns = Array.from({ length: 2000 }, () => lower(4 + Math.floor(rnd() * 12)))
  const matcher = new AhoCorasick(patterns, 2)
  const texts = Array.from({ length: 400 }, () => lower(20) + patterns[Math.floor(rnd() * patterns.length)] + lower(60))
  const learnt = () => (matcher as unknown as { room: number }).room === 0
  expect(learnt()).toBe(false)
  for (let round = 0; round < 12; round++)
    for (const text of texts) {
      const found = new Set<number>()
      matcher.scanFolding(text, (id) => found.add(id))
      const expected = new Set(patterns.flatMap((p, id) => (text.includes(p) ? [id] : [])))
      expect([...found].sort((a, b) => a - b)).toEqual([...expected].sort((a, b) => a - b))
    }
  expect(learnt()).toBe(true)
})

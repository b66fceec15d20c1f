// Lucene's minimal-interval semantics, on the cases its own bug reports are about. Each score is
// what OpenSearch 3.4 answered for the same document (the saturation of the sloppy frequency tells
// which intervals Lucene found: 1 / (width - least width + 1) each).
import { describe, expect, test } from 'bun:test'
import { DocView } from '../../../src/store/query'
import { compileIntervals } from '../../../src/store/query/intervals'

const TYPES = new Map([['t', { type: 'text' }]])

/** The document's score (0: no match), checked against the compiled test. */
function score(rule: Record<string, unknown>, text: string): number {
  const q = compileIntervals({ t: rule }, TYPES)
  const d = new DocView({ t: text })
  const s = Math.fround(q.score(d))
  expect(q.test(d)).toBe(s > 0)
  return Number(s.toPrecision(7))
}

describe('intervals on one document', () => {
  test('ordered over interleaved terms finds both minimal intervals (LUCENE-9418, lucene#12213)', () => {
    // [0,3] and [4,6]: 1/2 + 1 -> 0.6
    expect(score({ match: { query: 'a b c', mode: 'ordered' } }, 'a b a c a b c')).toBe(0.6)
    // [0,3] only, not [2,3]
    expect(score({ match: { query: 'a b c', mode: 'ordered' } }, 'a b a c')).toBe(0.3333333)
    expect(score({ match: { query: 'a b c', mode: 'ordered', max_gaps: 0 } }, 'a b a c a b c')).toBe(0.5)
  })

  test('a repeated term must occur as often (LUCENE-9099)', () => {
    expect(score({ match: { query: 'to be or not to be' } }, 'to be or not')).toBe(0)
    expect(score({ match: { query: 'to be or not to be' } }, 'to be or not to be')).toBe(0.25)
  })

  test('nested ordered sources keep their own gaps (not flattened since Lucene 10.1)', () => {
    const nested = { intervals: [{ match: { query: 'a' } }, { match: { query: 'b c', mode: 'ordered' } }], mode: 'ordered', max_gaps: 0 }
    expect(score({ all_of: nested }, 'a b x c')).toBe(0.3333333)
    expect(score({ all_of: nested }, 'a b a c a b c')).toBe(0.6)
    expect(score({ match: { query: 'a b c', mode: 'ordered', max_gaps: 0 } }, 'a b x c')).toBe(0)
  })

  test('unordered over a nested unordered source with max_gaps', () => {
    const rule = { all_of: { intervals: [{ match: { query: 'a' } }, { match: { query: 'b c' } }], max_gaps: 0 } }
    expect(score(rule, 'a b a c a b c')).toBe(0.75)
    expect(score(rule, 'a b a c')).toBe(0.5)
  })

  test('without a mapping every field is text', () => {
    const q = compileIntervals({ msg: { match: { query: 'disk full', mode: 'ordered' } } })
    expect(q.test(new DocView({ msg: 'ERROR: disk is full' }))).toBe(true)
    expect(q.test(new DocView({ msg: 'full disk' }))).toBe(false)
  })
})

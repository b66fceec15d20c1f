/**
 * Which of many patterns a value contains (folded, as `AhoCorasick.scanFolding` answers), with
 * long patterns found in far fewer steps than the value's length. An automaton steps every code
 * unit of a value, each step waiting for the last: SigmaHQ's hash lists are 200-unit values
 * matched against thousands of 36-71 unit patterns (`MD5=…`, `IMPHASH=…`), whose automaton of
 * 200,000 states outgrows the caches.
 *
 * Patterns of LONG units or more are found by sampling: one GRAM-unit gram is read every `w`
 * units, `w = shortest - GRAM + 1`, so any occurrence of a long pattern covers a gram read (the
 * sampling of Wu-Manber and Hyperscan's long-literal matchers); the gram's hash names the
 * patterns holding it at each offset, each then compared in full. A hash list is read at ~7 places.
 * Shorter patterns stay with an automaton (`AhoCorasick`), whose shared prefixes cost nothing
 * where a gram would name hundreds of candidates.
 */
import { AhoCorasick, VALUE_END, VALUE_START } from './aho-corasick'
import { fold } from './fold'

/** Patterns this long or longer are sampled. */
const LONG = 32
/** Units in a gram. */
const GRAM = 8
/** Bits of the grams' presence filter per registered gram (about 1 probe in 8 passes it by chance). */
const FILTER_BITS_PER_GRAM = 8

const VALUE_START_UNIT = VALUE_START.charCodeAt(0)
const VALUE_END_UNIT = VALUE_END.charCodeAt(0)
/** ASCII lower-cased, every other unit as it is (a folded value's): one load instead of two branches a unit. */
const LOWER = Uint16Array.from({ length: 0x10000 }, (_, c) => (c >= 65 && c <= 90 ? c + 32 : c))

/** What the rule index asks of a matcher: every pattern a folded value holds (at least once each). */
export interface SubstringMatcher {
  scanFolding(text: string, hit: (id: number) => void, anchored?: boolean): void
}

/**
 * A matcher for `patterns`: sampling pays where nearly all of them are long (hash lists); beside
 * short ones the automaton's pass is made anyway, and a second pass over the value cost more than
 * the long patterns cost the automaton (SigmaHQ's registry paths, half of them long).
 */
export function substringMatcher(patterns: readonly string[]): SubstringMatcher {
  const long = patterns.filter((p) => p.length >= LONG).length
  return long > 0 && long * 10 >= patterns.length * 9 ? new GramMatcher(patterns) : new AhoCorasick(patterns)
}

export class GramMatcher implements SubstringMatcher {
  /** The short patterns' automaton, and the id of each of its patterns here. */
  private readonly automaton?: AhoCorasick
  private readonly automatonIds: Int32Array
  /** The long patterns' code units back to back: pattern p is units[start[p]..start[p + 1]) (empty for short ones). */
  private readonly units: Uint16Array
  private readonly start: Int32Array
  private readonly w: number = 0
  /** Which gram hashes some long pattern holds (a bitmap read before the slots, which outgrow the caches). */
  private readonly filter: Int32Array
  private readonly filterShift: number = 32
  /** The registered grams of slot s: slotStart[s]..slotStart[s + 1] in gram/pattern/offset. */
  private readonly slotShift: number = 32
  private readonly slotStart: Int32Array
  private readonly gram: Int32Array
  private readonly pattern: Int32Array
  private readonly offset: Int32Array
  /** The scan in which each long pattern was last reported: once a scan. */
  private readonly reported: Uint32Array
  private scans = 0
  private hit: (id: number) => void = () => {}
  private readonly fromAutomaton = (k: number) => this.hit(this.automatonIds[k])

  constructor(patterns: readonly string[]) {
    const short: number[] = []
    const long: number[] = []
    patterns.forEach((p, id) => (p.length >= LONG ? long : short).push(id))
    this.automatonIds = Int32Array.from(short)
    if (short.length > 0) this.automaton = new AhoCorasick(short.map((id) => patterns[id]))
    this.reported = new Uint32Array(patterns.length)
    this.start = new Int32Array(patterns.length + 1)
    patterns.forEach((p, i) => (this.start[i + 1] = this.start[i] + (p.length >= LONG ? p.length : 0)))
    this.units = new Uint16Array(this.start[patterns.length])
    for (const id of long) for (let k = 0; k < patterns[id].length; k++) this.units[this.start[id] + k] = patterns[id].charCodeAt(k)
    this.filter = this.slotStart = this.gram = this.pattern = this.offset = new Int32Array(0)
    if (long.length === 0) return
    const w = (this.w = Math.min(...long.map((id) => patterns[id].length)) - GRAM + 1)
    const offsets = this.offsetsOf(long, w)
    const count = long.length * w
    const bits = log2AtLeast(count * FILTER_BITS_PER_GRAM)
    this.filterShift = 32 - bits
    this.filter = new Int32Array(Math.max(1, (1 << bits) >>> 5))
    this.slotShift = 32 - log2AtLeast(count)
    // Laid out by slot (a counting sort): each slot's grams are contiguous.
    this.slotStart = new Int32Array((1 << (32 - this.slotShift)) + 1)
    const each = (visit: (g: number, id: number, j: number) => void) =>
      long.forEach((id, k) => {
        for (let j = offsets[k]; j < offsets[k] + w; j++) visit(this.gramAt(id, j), id, j)
      })
    each((g) => {
      this.slotStart[((g >>> 0) >>> this.slotShift) + 1]++
      const f = filterBit(g, this.filterShift)
      this.filter[f >>> 5] |= 1 << (f & 31)
    })
    for (let s = 1; s < this.slotStart.length; s++) this.slotStart[s] += this.slotStart[s - 1]
    const next = this.slotStart.slice(0, -1)
    this.gram = new Int32Array(count)
    this.pattern = new Int32Array(count)
    this.offset = new Int32Array(count)
    each((g, id, j) => {
      const at = next[(g >>> 0) >>> this.slotShift]++
      this.gram[at] = g
      this.pattern[at] = id
      this.offset[at] = j
    })
  }

  /**
   * Where each long pattern's w registered offsets start (any w consecutive offsets will do: an
   * occurrence covers one gram read at each): those whose grams fewest patterns share. `imphash=`
   * starts every imphash pattern, its hex digits do not, and a gram few patterns hold names few
   * to compare.
   */
  private offsetsOf(long: number[], w: number): Int32Array {
    const lengthOf = (id: number) => this.start[id + 1] - this.start[id]
    const shared = new Map<number, number>()
    for (const id of long)
      for (let j = 0; j + GRAM <= lengthOf(id); j++) {
        const g = this.gramAt(id, j)
        shared.set(g, (shared.get(g) ?? 0) + 1)
      }
    return Int32Array.from(long, (id) => {
      const costs = Array.from({ length: lengthOf(id) - GRAM + 1 }, (_, j) => shared.get(this.gramAt(id, j))!)
      let sum = 0
      for (let j = 0; j < w; j++) sum += costs[j]
      let best = 0
      let bestSum = sum
      for (let o = 1; o + w <= costs.length; o++) {
        sum += costs[o + w - 1] - costs[o - 1]
        if (sum < bestSum) [best, bestSum] = [o, sum]
      }
      return best
    })
  }

  private gramAt(id: number, j: number): number {
    const u = this.units
    const at = this.start[id] + j
    return hashGram(u[at], u[at + 1], u[at + 2], u[at + 3], u[at + 4], u[at + 5], u[at + 6], u[at + 7])
  }

  /**
   * Calls `hit` with the id of every pattern found in `text` folded (fold.ts), a long pattern once;
   * `anchored`: as if `text` were between VALUE_START and VALUE_END.
   */
  scanFolding(text: string, hit: (id: number) => void, anchored = false): void {
    if (this.automaton) {
      this.hit = hit
      this.automaton.scanFolding(text, this.fromAutomaton, anchored)
    }
    if (this.w === 0) return
    if (++this.scans === 0xffffffff) {
      this.reported.fill(0)
      this.scans = 1
    }
    // ASCII (as long in UTF-8 as in UTF-16, checked natively) is lower-cased as read; other values are folded whole first.
    const t = Buffer.byteLength(text, 'utf8') === text.length ? text : fold(text)
    const a = anchored ? 1 : 0
    const { w, filter, filterShift, slotShift, slotStart, gram, pattern, offset } = this
    const n = t.length + 2 * a
    for (let s = 0; s + GRAM <= n; s += w) {
      const k = s - a
      const g =
        s >= a && s + GRAM <= t.length + a
          ? hashGram(
              LOWER[t.charCodeAt(k)],
              LOWER[t.charCodeAt(k + 1)],
              LOWER[t.charCodeAt(k + 2)],
              LOWER[t.charCodeAt(k + 3)],
              LOWER[t.charCodeAt(k + 4)],
              LOWER[t.charCodeAt(k + 5)],
              LOWER[t.charCodeAt(k + 6)],
              LOWER[t.charCodeAt(k + 7)],
            )
          : this.gramOfText(t, s, a)
      const f = filterBit(g, filterShift)
      if ((filter[f >>> 5] & (1 << (f & 31))) === 0) continue
      const slot = (g >>> 0) >>> slotShift
      for (let e = slotStart[slot], end = slotStart[slot + 1]; e < end; e++) {
        const id = pattern[e]
        if (gram[e] !== g || this.reported[id] === this.scans || !this.matches(id, t, s - offset[e], a)) continue
        this.reported[id] = this.scans
        hit(id)
      }
    }
  }

  /** The gram at position s of the virtual text, where it meets an anchor. */
  private gramOfText(t: string, s: number, a: number): number {
    const u = (i: number) => unitAt(t, s + i, a)
    return hashGram(u(0), u(1), u(2), u(3), u(4), u(5), u(6), u(7))
  }

  /** Whether long pattern `id` is at position `at` of the virtual text. */
  private matches(id: number, t: string, at: number, a: number): boolean {
    const { units } = this
    const from = this.start[id]
    const len = this.start[id + 1] - from
    if (at < 0 || at + len > t.length + 2 * a) return false
    for (let k = 0; k < len; k++) if (unitAt(t, at + k, a) !== units[from + k]) return false
    return true
  }
}

/** Unit i of the virtual text: `t` lower-cased, between the anchors when `a` is 1. */
function unitAt(t: string, i: number, a: number): number {
  if (a === 1) {
    if (i === 0) return VALUE_START_UNIT
    if (i === t.length + 1) return VALUE_END_UNIT
  }
  return LOWER[t.charCodeAt(i - a)]
}

/** Eight units hashed to 32 bits (two independent halves, so the multiplies overlap). */
function hashGram(c0: number, c1: number, c2: number, c3: number, c4: number, c5: number, c6: number, c7: number): number {
  const lo = c0 ^ (c1 << 7) ^ (c2 << 14) ^ (c3 << 21) ^ (c3 >>> 11)
  const hi = c4 ^ (c5 << 7) ^ (c6 << 14) ^ (c7 << 21) ^ (c7 >>> 11)
  const h = Math.imul(lo, 0x9e3779b1) ^ Math.imul(hi ^ (hi >>> 15), 0x85ebca6b)
  return h ^ (h >>> 16)
}

const filterBit = (g: number, shift: number): number => Math.imul(g, 0xc2b2ae35) >>> shift

/** The least b with 2^b >= n (at least 1). */
function log2AtLeast(n: number): number {
  let b = 1
  while (1 << b < n && b < 30) b++
  return b
}

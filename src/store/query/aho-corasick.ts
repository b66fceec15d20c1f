/**
 * A multi-pattern substring matcher (Aho-Corasick): one pass over a value reports every pattern
 * it contains, whatever the number of patterns (the rule index's substrings, a query's long
 * lists of `contains` values). The shallowest states, then those scans reach most (see
 * `learn`), have a dense table for ASCII code units, one column per code unit the patterns
 * use (the others lead to the root from anywhere: one shared column): a Sigma rule set's command
 * line patterns use 39 of 128, so a row is a third of the bytes and a scan touches a third of the
 * cache lines. Deeper states keep only their own edges
 * and follow failure links. A dense row per state would cost 512 bytes for each of the 100,000+
 * states of one rule listing thousands of file hashes (SigmaHQ's driver-load rules): hundreds of
 * MiB for a real rule set.
 *
 * States are numbered breadth first, so a state's children are consecutive states and the edge
 * into state `t` is edge `t - 1`: an edge is its label alone, and the whole automaton is a few
 * typed arrays (about 18 bytes a state, its row's offset included) with no
 * object per state, at build time either (a Map per state made hundreds of thousands of them).
 */
import { foldCodePoint } from './fold'

const ASCII = 128
/**
 * Code units a scan may step before and after a value (`anchored`): a pattern that starts with
 * VALUE_START matches only at the value's start, one that ends with VALUE_END only at its end,
 * so one pass also answers "equals", "starts with" and "ends with". A value holding them itself
 * can only add matches, never lose one.
 */
export const VALUE_START = '\u0001'
export const VALUE_END = '\u0002'
/**
 * Dense rows by default, in full-width (128-column) rows' worth: as many narrower rows fit in the
 * same bytes. The rows learned from scans (`learn`) are where the hot states get theirs: 1,024 of
 * them held 25.6 MiB of rows for SigmaHQ's 2,407 Windows rules (12.0 MiB at 256) for no more
 * events/s at 1,000 or 2,407 rules (3 alternated rounds each).
 */
const DENSE_STATES = 256
/** Arrivals at row-less states after which a scanned automaton gives its rows left to the states reached most. */
const LEARN_ARRIVALS = 1 << 16

/**
 * The patterns as a trie in insertion order: first child / next sibling lists. A trie has at most
 * one state per pattern character (plus the root), so its arrays are sized once: no growth, and
 * no garbage but themselves once the automaton is laid out.
 */
class Trie {
  readonly firstChild: Int32Array
  readonly nextSibling: Int32Array
  readonly label: Uint16Array
  /** First pattern ending at each state, and the next pattern ending at the same state. */
  readonly firstPattern: Int32Array
  readonly nextPattern: Int32Array
  size = 1

  constructor(patterns: readonly string[]) {
    let chars = 0
    for (const p of patterns) chars += p.length
    this.firstChild = new Int32Array(chars + 1).fill(-1)
    this.nextSibling = new Int32Array(chars + 1)
    this.label = new Uint16Array(chars + 1)
    this.firstPattern = new Int32Array(chars + 1).fill(-1)
    this.nextPattern = new Int32Array(patterns.length)
    // Patterns are linked in reverse so each state's list comes out in ascending id order.
    for (let id = patterns.length - 1; id >= 0; id--) {
      const p = patterns[id]
      let s = 0
      for (let i = 0; i < p.length; i++) s = this.child(s, p.charCodeAt(i))
      this.nextPattern[id] = this.firstPattern[s]
      this.firstPattern[s] = id
    }
  }

  private child(s: number, c: number): number {
    for (let t = this.firstChild[s]; t !== -1; t = this.nextSibling[t]) if (this.label[t] === c) return t
    const t = this.size++
    this.label[t] = c
    this.nextSibling[t] = this.firstChild[s]
    this.firstChild[s] = t
    return t
  }
}

export class AhoCorasick {
  /** Pattern ids reported by each state (own patterns, then those of its suffix states): outIds[outStart[s]..outStart[s + 1]). */
  private readonly outStart: Int32Array
  private readonly outIds: Int32Array
  /**
   * Dense ASCII rows of `width` columns (see rowOf), two numbers a cell: where the target's own
   * row starts in `ascii` (-1 for a state without one), then the target state (its complement
   * when it reports patterns). A scan steps from cell to cell without a multiply or a second
   * lookup on the chain of loads each code unit waits for.
   */
  private ascii: Int32Array
  /** The column of each ASCII code unit (0: a code unit no pattern uses). */
  private readonly column: Uint8Array
  /** Where the column of each ASCII code unit once folded (A-Z read as a-z) starts in a row of `ascii`. */
  private readonly foldedColumn: Uint16Array
  private readonly width: number
  /** Each state's children are states edgeStart[s] + 1 .. edgeStart[s + 1]; the label of the edge into state t is edgeLabel[t - 1]. */
  private readonly edgeStart: Int32Array
  private readonly edgeLabel: Uint16Array
  private readonly fail: Int32Array
  /** The scan (`scans`) in which each pattern was last reported by scanFolding. */
  private readonly reported: Uint32Array
  private scans = 0

  /** `denseStates`: the bytes of dense rows, as so many 128-column rows (512 bytes each). */
  constructor(patterns: readonly string[], denseStates = DENSE_STATES) {
    const trie = new Trie(patterns)
    this.reported = new Uint32Array(patterns.length)
    const n = trie.size
    this.edgeStart = new Int32Array(n + 1)
    this.edgeLabel = new Uint16Array(Math.max(0, n - 1))
    this.fail = new Int32Array(n)
    this.rowOf = new Int32Array(n).fill(-1)
    // Breadth first: trie state of each new state; a state's failure target is shallower, so
    // complete before the state itself (and its edges laid out before anyone follows them).
    const old = new Int32Array(n)
    const ownCount = new Int32Array(n)
    let placed = 1
    for (let q = 0; q < n; q++) {
      const s = old[q]
      this.edgeStart[q] = placed - 1
      for (let t = trie.firstChild[s]; t !== -1; t = trie.nextSibling[t]) {
        const c = trie.label[t]
        this.edgeLabel[placed - 1] = c
        this.fail[placed] = q === 0 ? 0 : this.next(this.fail[q], c)
        old[placed++] = t
      }
      for (let id = trie.firstPattern[s]; id !== -1; id = trie.nextPattern[id]) ownCount[q]++
    }
    this.edgeStart[n] = n - 1
    // Outputs: a state's own patterns then its failure target's (computed before it, being shallower).
    this.outStart = new Int32Array(n + 1)
    for (let q = 0; q < n; q++) {
      const inherited = q === 0 ? 0 : this.outStart[this.fail[q] + 1] - this.outStart[this.fail[q]]
      this.outStart[q + 1] = this.outStart[q] + ownCount[q] + inherited
    }
    this.outIds = new Int32Array(this.outStart[n])
    for (let q = 0; q < n; q++) {
      let at = this.outStart[q]
      for (let id = trie.firstPattern[old[q]]; id !== -1; id = trie.nextPattern[id]) this.outIds[at++] = id
      if (q !== 0)
        for (let k = this.outStart[this.fail[q]], end = this.outStart[this.fail[q] + 1]; k < end; k++) this.outIds[at++] = this.outIds[k]
    }
    this.column = new Uint8Array(ASCII)
    let width = 1
    for (let t = 0; t < n - 1; t++) {
      const c = this.edgeLabel[t]
      if (c < ASCII && this.column[c] === 0) this.column[c] = width++
    }
    this.width = width
    this.foldedColumn = Uint16Array.from(this.column, (_, c) => this.column[c >= 65 && c <= 90 ? c + 32 : c] * 2)
    this.unitOf = new Int32Array(width).fill(-1)
    this.column.forEach((col, c) => col !== 0 && (this.unitOf[col] = c))
    const dense = Math.max(1, Math.min(n, Math.floor((denseStates * ASCII) / width)))
    this.ascii = new Int32Array(dense * width * 2)
    this.addRows(Array.from({ length: dense }, (_, q) => q))
    // Half as many rows again, for the states scans reach most (see `learn`).
    this.room = dense < n ? Math.min(n - dense, Math.ceil(dense / 2)) : 0
  }

  /** Code unit of each column (-1 for column 0, the code units no pattern uses). */
  private readonly unitOf: Int32Array
  /** Where each state's row starts in `ascii`, -1 for a state without one. */
  private readonly rowOf: Int32Array
  /** Rows laid out so far, and rows left to learn. */
  private rows = 0
  private room: number
  /** Arrivals at each state without a row, while scans learn which states to give the rows left. */
  private visits?: Uint32Array
  private arrivals = 0

  /** Rows for `states` (the shallowest, then the most visited): every cell rewritten, as a row-less target may have one now. */
  private addRows(states: readonly number[]): void {
    const { ascii, width, unitOf, rowOf, outStart } = this
    // Targets first, read through the rows already laid out (a new row is filled before it is named).
    for (const q of states) {
      const row = 2 * this.rows++ * width
      for (let col = 0; col < width; col++) {
        // Column 0: a code unit no pattern uses leads to the root from every state.
        const t = unitOf[col] === -1 ? 0 : this.next(q, unitOf[col])
        ascii[row + 2 * col + 1] = outStart[t + 1] > outStart[t] ? ~t : t
      }
      rowOf[q] = -2 - row // laid out, not named yet
    }
    for (const q of states) rowOf[q] = -2 - rowOf[q]
    for (let at = 0; at < 2 * this.rows * width; at += 2) {
      const t = ascii[at + 1]
      ascii[at] = rowOf[t < 0 ? ~t : t]
    }
  }

  /**
   * The rows left go to the states scans reached most without one, once they have reached such
   * states LEARN_ARRIVALS times: which states a field's values visit (a command line's `\users\`
   * paths, deep in SigmaHQ's 8,904 command-line patterns) is not the breadth-first order, which
   * gave nine steps in ten of those scans no row.
   */
  private learn(): void {
    const visits = this.visits!
    this.visits = undefined
    const reached: number[] = []
    visits.forEach((v, q) => v > 0 && reached.push(q))
    reached.sort((a, b) => visits[b] - visits[a])
    const added = reached.slice(0, this.room)
    this.room = 0
    const ascii = new Int32Array(this.ascii.length + added.length * this.width * 2)
    ascii.set(this.ascii)
    this.ascii = ascii
    this.addRows(added)
  }

  /**
   * Calls `hit` with the id of every pattern found in `text` (a pattern may be reported more than
   * once); `anchored`: as if `text` were between VALUE_START and VALUE_END.
   */
  scan(text: string, hit: (id: number) => void, anchored = false): void {
    let s = anchored ? this.step(0, 1, hit) : 0
    for (let i = 0; i < text.length; i++) s = this.step(s, text.charCodeAt(i), hit)
    if (anchored) this.step(s, 2, hit)
  }

  /**
   * `scan(fold(text))` without making the folded string: ASCII code units are lower-cased as
   * read, other code points folded one by one (a Windows `Product` is `Microsoft® Windows®...`:
   * folding the whole value first cost more than scanning it).
   */
  scanFolding(text: string, hit: (id: number) => void, anchored = false): void {
    const { outStart, outIds, ascii, rowOf, foldedColumn, reported } = this
    // Only scans learn (a `has` automaton of a query keeps its rows): the counts are made on the first.
    const visits = this.room > 0 ? (this.visits ??= new Uint32Array(rowOf.length)) : undefined
    // Each pattern is reported once (`\\users\\` at every path of a command line was 45 calls a value).
    if (++this.scans === 0xffffffff) {
      reported.fill(0)
      this.scans = 1
    }
    const scan = this.scans
    let s = anchored ? this.step(0, 1, hit) : 0
    // The current state's row in `ascii`, or -1 when it has none.
    let row = rowOf[s]
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      let out = false
      if (c >= ASCII) {
        // A high surrogate followed by a low one is one code point; fold.ts folds lone ones as themselves.
        const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00
        const folded = foldCodePoint(pair ? text.slice(i, i + 2) : text[i])
        if (pair) i++
        for (let j = 0; j < folded.length; j++) s = this.step(s, folded.charCodeAt(j), hit)
        row = rowOf[s]
        continue
      } else if (row >= 0) {
        const at = row + foldedColumn[c]
        row = ascii[at]
        s = ascii[at + 1]
        if (s < 0) {
          s = ~s
          out = true
        }
      } else {
        s = this.next(s, c >= 65 && c <= 90 ? c + 32 : c)
        row = rowOf[s]
        out = outStart[s + 1] > outStart[s]
        if (row < 0 && visits !== undefined) {
          visits[s]++
          this.arrivals++
        }
      }
      if (out)
        for (let k = outStart[s], end = outStart[s + 1]; k < end; k++) {
          const id = outIds[k]
          if (reported[id] === scan) continue
          reported[id] = scan
          hit(id)
        }
    }
    if (anchored) this.step(s, 2, hit)
    // Between scans: this one read the rows it started with.
    if (this.arrivals >= LEARN_ARRIVALS && this.visits !== undefined) this.learn()
  }

  private step(s: number, c: number, hit: (id: number) => void): number {
    const { outStart, outIds } = this
    s = this.next(s, c)
    for (let k = outStart[s], end = outStart[s + 1]; k < end; k++) hit(outIds[k])
    return s
  }

  /** Whether `text` contains any of the patterns. */
  has(text: string): boolean {
    const { outStart } = this
    if (outStart[1] > 0) return true // the empty pattern
    let s = 0
    for (let i = 0; i < text.length; i++) {
      s = this.next(s, text.charCodeAt(i))
      if (outStart[s + 1] > outStart[s]) return true
    }
    return false
  }

  /** The state after `s` reads code unit `c`. */
  private next(s: number, c: number): number {
    for (;;) {
      if (c < ASCII && this.rowOf[s] >= 0) {
        const t = this.ascii[this.rowOf[s] + 2 * this.column[c] + 1]
        return t < 0 ? ~t : t
      }
      for (let t = this.edgeStart[s] + 1, end = this.edgeStart[s + 1] + 1; t < end; t++) if (this.edgeLabel[t - 1] === c) return t
      if (s === 0) return 0
      s = this.fail[s]
    }
  }
}

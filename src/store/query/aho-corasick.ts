/**
 * A multi-pattern substring matcher (Aho-Corasick): one pass over a value reports every pattern
 * it contains, whatever the number of patterns (the rule index's substrings, a query's long
 * lists of `contains` values). The shallowest states (where a scan spends nearly
 * all its steps) have a dense table for ASCII code units; deeper states keep only their own edges
 * and follow failure links. A dense row per state would cost 512 bytes for each of the 100,000+
 * states of one rule listing thousands of file hashes (SigmaHQ's driver-load rules): hundreds of
 * MiB for a real rule set.
 */
const ASCII = 128
/** States given a dense ASCII row by default, shallowest first (2 MiB of rows at most). */
const DENSE_STATES = 4096
const NONE: readonly number[] = []

export class AhoCorasick {
  /** Pattern ids reported by each state (own patterns and those of its suffix states). */
  private readonly out: Array<readonly number[]>
  /** Row of each state in `ascii`, or -1. */
  private readonly row: Int32Array
  private readonly ascii: Int32Array
  /** Each state's own edges: labels and targets in [edgeStart[s], edgeStart[s + 1]). */
  private readonly edgeStart: Int32Array
  private readonly edgeLabel: Uint16Array
  private readonly edgeTarget: Int32Array
  private readonly fail: Int32Array

  /** `denseStates`: how many of the shallowest states get a dense row (512 bytes each). */
  constructor(patterns: readonly string[], denseStates = DENSE_STATES) {
    const goto: Array<Map<number, number>> = [new Map()]
    const own: Array<readonly number[]> = [NONE]
    patterns.forEach((p, id) => {
      let s = 0
      for (let i = 0; i < p.length; i++) {
        const c = p.charCodeAt(i)
        let next = goto[s].get(c)
        if (next === undefined) {
          next = goto.length
          goto.push(new Map())
          own.push(NONE)
          goto[s].set(c, next)
        }
        s = next
      }
      own[s] = [...own[s], id]
    })
    const n = goto.length
    this.edgeStart = new Int32Array(n + 1)
    let edges = 0
    for (let s = 0; s < n; s++) {
      this.edgeStart[s] = edges
      edges += goto[s].size
    }
    this.edgeStart[n] = edges
    this.edgeLabel = new Uint16Array(edges)
    this.edgeTarget = new Int32Array(edges)
    for (let s = 0; s < n; s++) {
      let e = this.edgeStart[s]
      for (const [c, t] of goto[s]) {
        this.edgeLabel[e] = c
        this.edgeTarget[e++] = t
      }
    }
    this.fail = new Int32Array(n)
    this.out = own
    this.row = new Int32Array(n).fill(-1)
    // Breadth first: a state's failure target is shallower, so complete before the state itself.
    const order = [0]
    for (let q = 0; q < order.length; q++) {
      const s = order[q]
      if (s !== 0 && this.out[this.fail[s]].length > 0) this.out[s] = [...this.out[s], ...this.out[this.fail[s]]]
      for (const [c, t] of goto[s]) {
        this.fail[t] = s === 0 ? 0 : this.next(this.fail[s], c)
        order.push(t)
      }
    }
    const dense = Math.max(1, Math.min(n, denseStates))
    this.ascii = new Int32Array(dense * ASCII)
    for (let q = 0; q < dense; q++) {
      const s = order[q]
      const row = q * ASCII
      for (let c = 0; c < ASCII; c++) this.ascii[row + c] = this.next(s, c)
      this.row[s] = q
    }
  }

  /** Calls `hit` with the id of every pattern found in `text` (a pattern may be reported more than once). */
  scan(text: string, hit: (id: number) => void): void {
    let s = 0
    for (let i = 0; i < text.length; i++) {
      s = this.next(s, text.charCodeAt(i))
      const o = this.out[s]
      for (let k = 0; k < o.length; k++) hit(o[k])
    }
  }

  /** Whether `text` contains any of the patterns. */
  has(text: string): boolean {
    let s = 0
    for (let i = 0; i < text.length; i++) {
      s = this.next(s, text.charCodeAt(i))
      if (this.out[s].length > 0) return true
    }
    return this.out[0].length > 0 // the empty pattern
  }

  /** The state after `s` reads code unit `c`. */
  private next(s: number, c: number): number {
    for (;;) {
      const row = this.row[s]
      if (row >= 0 && c < ASCII) return this.ascii[row * ASCII + c]
      for (let e = this.edgeStart[s], end = this.edgeStart[s + 1]; e < end; e++) if (this.edgeLabel[e] === c) return this.edgeTarget[e]
      if (s === 0) return 0
      s = this.fail[s]
    }
  }
}

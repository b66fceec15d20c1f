/**
 * A multi-pattern substring matcher (Aho-Corasick): one pass over a value reports every pattern
 * it contains, whatever the number of patterns. Transitions for ASCII code units are a dense
 * table (folded event values are mostly ASCII); other code units walk the trie with failure links.
 */
const ASCII = 128

export class AhoCorasick {
  /** Pattern ids reported by each state (own patterns and those of its suffix states). */
  private readonly out: number[][]
  private readonly ascii: Int32Array
  private readonly other: Array<Map<number, number> | undefined>
  private readonly fail: Int32Array

  constructor(patterns: readonly string[]) {
    const goto: Array<Map<number, number>> = [new Map()]
    const own: number[][] = [[]]
    patterns.forEach((p, id) => {
      let s = 0
      for (let i = 0; i < p.length; i++) {
        const c = p.charCodeAt(i)
        let next = goto[s].get(c)
        if (next === undefined) {
          next = goto.length
          goto.push(new Map())
          own.push([])
          goto[s].set(c, next)
        }
        s = next
      }
      own[s].push(id)
    })
    const n = goto.length
    this.fail = new Int32Array(n)
    this.ascii = new Int32Array(n * ASCII)
    this.other = new Array(n)
    this.out = own
    // Breadth first, so a state's failure target is complete before the state itself.
    const queue: number[] = []
    for (let c = 0; c < ASCII; c++) {
      const t = goto[0].get(c)
      this.ascii[c] = t ?? 0
      if (t !== undefined) queue.push(t)
    }
    for (const [c, t] of goto[0]) if (c >= ASCII) queue.push(t)
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]
      const f = this.fail[s]
      if (this.out[f].length > 0) this.out[s] = [...this.out[s], ...this.out[f]]
      for (let c = 0; c < ASCII; c++) {
        const t = goto[s].get(c)
        if (t !== undefined) {
          this.fail[t] = this.ascii[f * ASCII + c]
          this.ascii[s * ASCII + c] = t
          queue.push(t)
        } else this.ascii[s * ASCII + c] = this.ascii[f * ASCII + c]
      }
      for (const [c, t] of goto[s]) {
        if (c < ASCII) continue
        this.fail[t] = this.step(goto, f, c)
        queue.push(t)
      }
    }
    for (let s = 0; s < n; s++) {
      let m: Map<number, number> | undefined
      for (const [c, t] of goto[s]) if (c >= ASCII) (m ??= new Map()).set(c, t)
      this.other[s] = m
    }
  }

  /** Calls `hit` with the id of every pattern found in `text` (a pattern may be reported more than once). */
  scan(text: string, hit: (id: number) => void): void {
    let s = 0
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c < ASCII) s = this.ascii[s * ASCII + c]
      else {
        for (;;) {
          const t = this.other[s]?.get(c)
          if (t !== undefined) {
            s = t
            break
          }
          if (s === 0) break
          s = this.fail[s]
        }
      }
      const o = this.out[s]
      for (let k = 0; k < o.length; k++) hit(o[k])
    }
  }

  /** The transition from `s` on a non-ASCII code unit while the tables are being built. */
  private step(goto: Array<Map<number, number>>, s: number, c: number): number {
    for (;;) {
      const t = goto[s].get(c)
      if (t !== undefined) return t
      if (s === 0) return 0
      s = this.fail[s]
    }
  }
}

/** A small seeded PRNG (mulberry32): the same seed makes the same workload on every machine. */
export class Random {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1))
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]
  }

  /** Between min and max distinct items, in their given order. */
  some<T>(items: readonly T[], min = 1, max = items.length): T[] {
    const n = this.int(min, Math.min(max, items.length))
    const chosen = new Set<number>()
    while (chosen.size < n) chosen.add(Math.floor(this.next() * items.length))
    return [...chosen].sort((a, b) => a - b).map((i) => items[i])
  }
}

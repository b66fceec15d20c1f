// Sums of longs answer the exact sum rounded once, in whatever order the store reads the values.
import { expect, test } from 'bun:test'
import { CompensatedSum } from '../../src/store/embedded/compensated-sum'
import { nextSeed } from '../../scripts/bench/lib/random'

const LONGS = [0, 1, -1, 42, -42, 2 ** 53 - 1, -(2 ** 53) + 1, 1e15, -1e15, 123456789]

/** Kahan summation alone, in the given order (what the sum answered before it kept the exact sum). */
function kahan(values: number[]): number {
  let sum = 0
  let delta = 0
  for (const v of values) {
    const corrected = v + delta
    const updated = sum + corrected
    delta = corrected - (updated - sum)
    sum = updated
  }
  return sum
}

test('a sum of longs near 2^53 is exact whatever the order of its values', () => {
  let seed = 7
  let orderMattered = 0
  for (let round = 0; round < 500; round++) {
    const values = Array.from({ length: 30 }, () => LONGS[((seed = nextSeed(seed)) >>> 8) % LONGS.length])
    const exact = Number(values.reduce((n, v) => n + BigInt(v), 0n))
    for (const order of [values, [...values].sort((a, b) => a - b), [...values].sort((a, b) => b - a)]) {
      const s = new CompensatedSum()
      for (const v of order) s.add(v)
      expect(s.value).toBe(exact)
      if (kahan(order) !== exact) orderMattered++
    }
  }
  // Kahan alone misses the exact sum in some of these orders: the case this guards.
  expect(orderMattered).toBeGreaterThan(0)
})

test('fractions, huge values and infinities sum as Kahan does', () => {
  const s = new CompensatedSum()
  for (const v of [1088.5, 0.28]) s.add(v)
  expect(s.value).toBe(1088.78)
  const big = new CompensatedSum()
  for (const v of [2 ** 60, 1, -(2 ** 60)]) big.add(v)
  expect(big.value).toBe(kahan([2 ** 60, 1, -(2 ** 60)]))
  const inf = new CompensatedSum()
  for (const v of [1, Infinity, 2]) inf.add(v)
  expect(inf.value).toBe(Infinity)
})

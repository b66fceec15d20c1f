// HeapGrowth (src/heap.ts), which detector runs and the content sync use, on a heap counter the test
// moves: a collection once the heap grew by the limit, or by a quarter of what the last collection
// left when that is more (a large live heap).
import { expect, test } from 'bun:test'
import { HeapGrowth } from '../../src/heap'

const MiB = 1024 * 1024

function heap(start: number) {
  const h = { size: start, collections: 0, live: start }
  const growth = new HeapGrowth(
    16 * MiB,
    () => h.size,
    () => {
      h.collections++
      h.size = h.live
    },
  )
  return { h, growth }
}

test('a small heap is collected after 16 MiB of growth, and only then', () => {
  const { h, growth } = heap(40 * MiB)
  h.size += 15 * MiB
  expect(growth.check()).toBe(false)
  h.size += 2 * MiB
  expect(growth.check()).toBe(true)
  expect(h.collections).toBe(1)
  h.size += 10 * MiB
  expect(growth.check()).toBe(false)
})

test('a large live heap may grow by a quarter of itself first', () => {
  const { h, growth } = heap(200 * MiB)
  h.size += 40 * MiB
  expect(growth.check()).toBe(false)
  h.size += 11 * MiB
  expect(growth.check()).toBe(true)
  expect(h.collections).toBe(1)
})

// HeapGrowth (src/heap.ts), which detector runs and the content sync use, on a heap counter the test
// moves: a collection once the heap grew by the limit, or by a quarter of what the last collection
// left when that is more (a large live heap).
import { expect, test } from 'bun:test'
import { HeapGrowth } from '../../src/heap'

const MiB = 1024 * 1024

// [live heap, growth that must not collect, growth after which it collects]
const cases: Array<[string, number, number, number]> = [
  ['a small heap is collected after 16 MiB of growth, and only then', 40, 15, 17],
  ['a large live heap may grow by a quarter of itself first', 200, 40, 51],
]

for (const [name, live, below, above] of cases)
  test(name, () => {
    const h = { size: live * MiB, collections: 0 }
    const growth = new HeapGrowth(
      16 * MiB,
      () => h.size,
      () => {
        h.collections++
        h.size = live * MiB
      },
    )
    h.size = (live + below) * MiB
    expect(growth.check()).toBe(false)
    h.size = (live + above) * MiB
    expect(growth.check()).toBe(true)
    expect(h.collections).toBe(1)
    h.size = (live + below) * MiB
    expect(growth.check()).toBe(false)
  })

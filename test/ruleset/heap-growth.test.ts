// HeapGrowth (src/heap.ts), which detector runs and the content sync use, on a heap counter the test
// moves: a collection once the heap grew by the limit, or by a quarter of what the last collection
// left when that is more (a large live heap).
import { expect, test } from 'bun:test'
import { HeapGrowth, YoungCollections } from '../../src/heap'

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

/** A heap of 40 MiB live, grown to 60 MiB, whose reads and collections are counted. */
function counted() {
  const h = { size: 40 * MiB, reads: 0, collections: 0 }
  const growth = new HeapGrowth(
    16 * MiB,
    () => {
      h.reads++
      return h.size
    },
    () => {
      h.collections++
      h.size = 40 * MiB
    },
  )
  h.reads = 0
  h.size = 60 * MiB
  return { h, growth }
}

test('a caller that counts what it allocated has the heap read once per eighth of the limit', () => {
  const { h, growth } = counted()
  // 1.5 MiB said allocated: below an eighth of 16 MiB, the heap is not read (nor collected).
  expect(growth.check(MiB)).toBe(false)
  expect(growth.check(MiB / 2)).toBe(false)
  expect(h.reads).toBe(0)
  // 2 MiB reached: read, grown past the limit, collected.
  expect(growth.check(MiB / 2)).toBe(true)
  expect(h.collections).toBe(1)
  // The count starts over; a call without one reads the heap as before.
  expect(growth.check(MiB)).toBe(false)
  const reads = h.reads
  expect(growth.check()).toBe(false)
  expect(h.reads).toBe(reads + 1)
})

test('a caller that counts little still has the heap read every fourth call (what it does not count shows there)', () => {
  const { h, growth } = counted()
  for (let call = 1; call < 4; call++) expect(growth.check(0)).toBe(false)
  expect(h.reads).toBe(0)
  expect(growth.check(0)).toBe(true)
  expect(h.collections).toBe(1)
})

test('young collections run at most once per period, asked for as often as work ends', () => {
  const clock = { now: 0, collections: 0 }
  const young = new YoungCollections(
    100,
    () => clock.now,
    () => clock.collections++,
  )
  expect(young.due()).toBe(true)
  for (clock.now = 10; clock.now < 100; clock.now += 10) expect(young.due()).toBe(false)
  clock.now = 100
  expect(young.due()).toBe(true)
  clock.now = 150
  expect(young.due()).toBe(false)
  clock.now = 1000
  expect(young.due()).toBe(true)
  expect(clock.collections).toBe(3)
})

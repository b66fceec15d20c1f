// Lru (src/lru.ts), the one bounded map of the node's caches, and ExpiringLru on top of it.
import { expect, test } from 'bun:test'
import { Lru } from '../../src/lru'
import { ExpiringLru } from '../../src/security/lru'

test('past its size the least recently used entry goes, a read or a write making an entry the most recent', () => {
  const lru = new Lru<string, number>(3)
  for (const [k, v] of [
    ['a', 1],
    ['b', 2],
    ['c', 3],
  ] as const)
    lru.set(k, v)
  expect(lru.get('a')).toBe(1) // b is now the oldest
  lru.set('d', 4)
  expect([lru.has('a'), lru.has('b'), lru.has('c'), lru.has('d')]).toEqual([true, false, true, true])
  lru.set('c', 30) // a rewrite is a use: a is now the oldest
  lru.set('e', 5)
  expect([lru.has('a'), lru.get('c'), lru.size]).toEqual([false, 30, 3])
  expect(lru.delete('c')).toBe(true)
  expect(lru.get('c')).toBeUndefined()
  lru.clear()
  expect(lru.size).toBe(0)
})

test('a falsy value is kept and read back like any other', () => {
  const lru = new Lru<string, number | null>(2)
  lru.set('zero', 0)
  lru.set('none', null)
  expect([lru.get('zero'), lru.get('none'), lru.size]).toEqual([0, null, 2])
})

test('no entry is kept with no room', () => {
  const lru = new Lru<string, number>(0)
  lru.set('a', 1)
  expect([lru.size, lru.get('a')]).toEqual([0, undefined])
})

test('an expiring entry is found until its time, and the bound holds as for Lru', () => {
  const clock = { now: 0 }
  const cache = new ExpiringLru<string>(2, () => clock.now)
  cache.set('a', 'A', 100)
  cache.set('b', 'B', 1000)
  clock.now = 99
  expect(cache.get('a')).toBe('A')
  cache.set('c', 'C', 1000) // b is the least recently used
  expect([cache.get('b'), cache.get('c'), cache.size]).toEqual([undefined, 'C', 2])
  clock.now = 100
  expect(cache.get('a')).toBeUndefined()
  cache.set('d', 'D', 0) // no time to live: not kept
  expect(cache.get('d')).toBeUndefined()
})

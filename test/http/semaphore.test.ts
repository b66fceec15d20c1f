// The one bounded-work mechanism (bcrypt checks, logtest runs): slots, a bounded queue, refusal.
import { expect, test } from 'bun:test'
import { Semaphore } from '../../src/http/semaphore'

test('at most `slots` tasks run, at most `maxWaiting` wait, the rest are refused at once; waiting ones run in order', async () => {
  const sem = new Semaphore(2, 3, () => new Error('busy'))
  const gates: Array<() => void> = []
  const order: number[] = []
  let peak = 0
  const task = (n: number) =>
    sem.run(async () => {
      peak = Math.max(peak, sem.active)
      order.push(n)
      await new Promise<void>((resolve) => gates.push(resolve))
      return n
    })
  const accepted = [1, 2, 3, 4, 5].map(task)
  await expect(task(6)).rejects.toThrow('busy')
  expect(sem.active).toBe(2)
  expect(sem.queued).toBe(3)
  while (gates.length > 0 || order.length < 5) {
    await Bun.sleep(1)
    gates.shift()?.()
  }
  expect(await Promise.all(accepted)).toEqual([1, 2, 3, 4, 5])
  expect(order).toEqual([1, 2, 3, 4, 5])
  expect(peak).toBe(2)
  expect(sem.active).toBe(0)
  expect(sem.queued).toBe(0)
})

test('a failing task frees its slot', async () => {
  const sem = new Semaphore(1, 1, () => new Error('busy'))
  await expect(sem.run(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom')
  expect(await sem.run(async () => 'next')).toBe('next')
  expect(sem.active).toBe(0)
})

// The bounded logtest pool (reference 7.10): `size` runs at once, `queue` waiting, 429 beyond.
import { describe, expect, test } from 'bun:test'
import { ApiError } from '../../../src/http/errors'
import { BUSY_MESSAGE, LogtestPool } from '../../../src/content/logtest/pool'

/** A run that finishes when told to, recording when it started. */
function gate(started: number[], id: number) {
  let open!: () => void
  const opened = new Promise<void>((r) => (open = r))
  return { open, work: async () => (started.push(id), await opened, id) }
}

describe('LogtestPool', () => {
  test('runs at most `size` at once, queues up to `queue`, refuses the rest with 429', async () => {
    const pool = new LogtestPool({ size: 2, queue: 3 })
    const started: number[] = []
    const gates = Array.from({ length: 5 }, (_, i) => gate(started, i))
    const runs = gates.map((g) => pool.run(g.work))
    await Bun.sleep(0)
    expect(started).toEqual([0, 1])
    expect(pool.pending).toEqual({ running: 2, queued: 3 })

    const refused = await pool.run(async () => 'never').catch((e) => e)
    expect(refused).toBeInstanceOf(ApiError)
    expect({ status: refused.status, message: refused.message }).toEqual({ status: 429, message: BUSY_MESSAGE })

    // Finishing one run starts the oldest waiting one, in arrival order.
    gates[1].open()
    expect(await runs[1]).toBe(1)
    await Bun.sleep(0)
    expect(started).toEqual([0, 1, 2])
    expect(pool.pending).toEqual({ running: 2, queued: 2 })

    for (const g of gates) g.open()
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4])
    expect(started).toEqual([0, 1, 2, 3, 4])
    expect(pool.pending).toEqual({ running: 0, queued: 0 })
  })

  test('a failing run frees its slot and its error reaches the caller', async () => {
    const pool = new LogtestPool({ size: 1, queue: 0 })
    await expect(
      pool.run(async () => {
        throw new Error('boom')
      }),
    ).rejects.toThrow('boom')
    expect(pool.pending).toEqual({ running: 0, queued: 0 })
    expect(await pool.run(async () => 'next')).toBe('next')
  })

  test('defaults: half the processors (at least one), queue of 100', () => {
    const pool = new LogtestPool()
    expect(pool.size).toBe(Math.max(1, Math.floor(navigator.hardwareConcurrency / 2)))
    expect(pool.queueLimit).toBe(100)
  })
})

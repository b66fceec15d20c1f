// The two lock facades over the embedded store: `capped` gives the caller's own error when the wait
// runs out and when the lock may be someone else's by the write; `claimTurn` gives one runner at a
// time its lease, takes over a stale one, and releases it whatever the work does.
import { afterEach, beforeEach, expect, test } from 'bun:test'
import { capped } from '../../src/locks/capped'
import { KeyedLeases } from '../../src/locks/lease'
import { claimTurn } from '../../src/locks/single-runner'
import { resourceLockWait } from '../../src/locks/wait'
import { SettingsSnapshot } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { ensureIndex } from '../../src/setup/ensure'
import { RESOURCE_LOCKS } from '../../src/setup/indices'
import { EmbeddedStore } from '../../src/store/embedded/store'

let store: EmbeddedStore
beforeEach(async () => {
  store = new EmbeddedStore(':memory:')
  await ensureIndex(store, RESOURCE_LOCKS)
})
afterEach(() => store.close())

const index = RESOURCE_LOCKS.name
const node = (now: () => number = Date.now) => new KeyedLeases({ store, now, ensureIndex: () => ensureIndex(store, RESOURCE_LOCKS) })
const found = async (id: string) => (await store.get({ index, id })).found

test("the resource-lock wait is the spec's three settings", () => {
  const values = buildNodeConfig(
    {
      'plugins.content_manager.resource_lock.max_retries': 7,
      'plugins.content_manager.resource_lock.retry_backoff_millis': 30,
      'plugins.content_manager.resource_lock.stale_threshold_millis': 9000,
    },
    'test',
    '.',
  ).values
  expect(resourceLockWait(new SettingsSnapshot(values))).toEqual({ attempts: 7, waitMillis: 210, backoffMillis: 30, staleMillis: 9000 })
})

test('capped: a caller that never gets the lock gets its busy error after its attempts, and runs nothing', async () => {
  await store.index({ index, id: 'cap', body: { acquired_at: Date.now() }, op_type: 'create', refresh: true })
  let ran = false
  let attemptsSeen = -1
  const lock = {
    index,
    id: 'cap',
    wait: { attempts: 3, waitMillis: 1000, backoffMillis: 5, staleMillis: 60_000 },
    renew: false,
    busy: (attempts: number) => {
      attemptsSeen = attempts
      return new Error('busy')
    },
    lost: () => new Error('lost'),
  }
  const error = await capped(node(), lock, async () => {
    ran = true
  }).catch((e) => e)
  expect((error as Error).message).toBe('busy')
  expect(attemptsSeen).toBe(3)
  expect(ran).toBe(false)
})

test('capped: assertMine throws the lost error once a never-renewed lock has reached its stale age', async () => {
  let clock = 1_000_000
  const lock = {
    index,
    id: 'stale',
    wait: { attempts: 1, waitMillis: 100, backoffMillis: 5, staleMillis: 10_000 },
    renew: false,
    busy: () => new Error('busy'),
    lost: () => new Error('lost'),
  }
  const outcome = await capped(
    node(() => clock),
    lock,
    async (assertMine) => {
      await assertMine()
      clock += 10_000
      return assertMine().then(
        () => 'kept',
        (e: Error) => e.message,
      )
    },
  )
  expect(outcome).toBe('lost')
})

test('claimTurn: one runner at a time; the lease is released even when the work fails, and a stale one is taken over', async () => {
  const spec = { index, id: 'runner', staleMillis: 60_000 }
  const deps = { store, now: Date.now }
  const first = await claimTurn(deps, spec)
  expect(first?.stolen).toBe(false)
  const failed = first!.run(async () => {
    expect(await claimTurn(deps, spec)).toBeUndefined()
    throw new Error('boom')
  })
  await expect(failed).rejects.toThrow('boom')
  expect(await found('runner')).toBe(false)

  // A runner that died without releasing: its lease is taken over once stale, and says so.
  await store.index({ index, id: 'runner', body: { acquired_at: Date.now() - 120_000 }, refresh: true })
  const second = await claimTurn(deps, spec)
  expect(second?.stolen).toBe(true)
  expect(await second!.run(async (lease) => lease.stillMine())).toBe(true)
  expect(await found('runner')).toBe(false)
})

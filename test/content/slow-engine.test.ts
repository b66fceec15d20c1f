// Issue 13: a slow Engine must not let creators overrun a resource limit. The Engine call runs
// before the creation lock (which the spec says is never renewed), bounded below the lock's stale
// age, so the lock is never held while the Engine thinks.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { CONTENT_ALIASES, RESOURCE_LOCKS_INDEX } from '../../src/setup/indices'
import { integrationBody, PREFIX, startHarness, type Harness } from './harness'

let h: Harness
beforeAll(async () => {
  h = await startHarness({ engine: 'server' })
  await h.set({
    'plugins.content_manager.max_integrations': 2,
    'plugins.content_manager.resource_lock.stale_threshold_millis': 5000,
  })
})
afterAll(() => h.stop())

const lockDocs = async () => (await h.store.count({ index: RESOURCE_LOCKS_INDEX, expand_wildcards: 'all' })).count
const validations = () => h.engine!.requestsTo('/content/validate/resource').length

test('six creators against a limit of 2 with a stalling Engine: exactly 2 stored, no lock held during the Engine call', async () => {
  h.engine!.stall(2000)
  const before = validations()
  const results = Promise.all(
    Array.from({ length: 6 }, (_, i) => h.request('POST', `${PREFIX}/integrations`, { body: integrationBody(`slow-${i}`) })),
  )
  while (validations() < before + 6) await Bun.sleep(20)
  // Every creator is inside its Engine call now, and none of them holds the lock.
  expect(await lockDocs()).toBe(0)
  const statuses = (await results).map((r) => r.status)
  h.engine!.heal()
  expect(statuses.filter((s) => s === 201)).toHaveLength(2)
  expect(statuses.filter((s) => s !== 201).every((s) => s === 400 || s === 503)).toBe(true)
  expect(await h.content.repo.count(CONTENT_ALIASES.integrations, 'draft')).toBe(2)
  expect(await lockDocs()).toBe(0)
})

test('an Engine slower than half the stale age is given up on (400), never holding the lock', async () => {
  await h.set({ 'plugins.content_manager.max_integrations': 10 })
  h.engine!.stall(4000)
  const started = Date.now()
  const r = await h.request('POST', `${PREFIX}/integrations`, { body: integrationBody('too-slow') })
  h.engine!.heal()
  expect(r.status).toBe(400)
  expect(Date.now() - started).toBeLessThan(3500) // the call was cut at stale/2 = 2.5 s, not the 30 s default
  expect(await h.content.repo.count(CONTENT_ALIASES.integrations, 'draft')).toBe(2)
  expect(await lockDocs()).toBe(0)
})

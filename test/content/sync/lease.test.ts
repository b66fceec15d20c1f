// Issue 19 item 4, the sync lock: a pass checks it still holds the lock before each consumer, so
// a pass whose renewals were starved long enough for another node to take the lock over stops
// there (lease_lost) instead of writing beside the new holder; the new holder's pass completes.
import { afterEach, expect, test } from 'bun:test'
import { type PassReport, SYNC_LOCK_ID } from '../../../src/content/sync/service'
import { RESOURCE_LOCKS_INDEX } from '../../../src/content/indices'
import { RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness } from './harness'
import { heldLock } from '../../helpers/locks'

let h: SyncHarness
afterEach(async () => {
  await h?.stop()
})

test('a pass that lost the sync lock to another node stops before its next consumer; the other pass runs', async () => {
  h = await startSyncHarness({ node: RULESET_FEED })
  seedRuleset(h.cti).publishSnapshot()
  h.cti.slow(300) // the first consumer takes a while
  const first = h.sync.run('test')
  await Bun.sleep(100) // inside the ruleset consumer now
  // The first node's timer is starved past the stale age (the harness clock jumps): another node takes over.
  h.advance(31_000)
  const other = h.newSync()
  const second = await other.run('test')
  h.cti.slow(0)
  const lost = (await first) as PassReport
  expect(typeof second).not.toBe('string')
  expect(lost.outcome).toBe('lease_lost')
  // It stopped after the consumer in flight: the IoC and vulnerability consumers never ran under it.
  expect(Object.keys(lost.consumers)).toEqual(['ruleset'])
  expect((second as PassReport).outcome).toBe('done')
  expect(h.lines.some((l) => l.includes('another node holds the sync lock now'))).toBe(true)
  await other.stop()
})

test("start-up clears a killed process's sync lock, never the lock of this node's own pass", async () => {
  h = await startSyncHarness({ node: RULESET_FEED })
  seedRuleset(h.cti).publishSnapshot()
  // A lock left by a killed process (the embedded store has no other live process): released.
  await heldLock(h.store, SYNC_LOCK_ID)
  expect(await h.sync.releaseDeadLock()).toBe('released')
  expect(await h.sync.releaseDeadLock()).toBe('none')
  // A pass triggered before the start-up work ran holds it: kept, and the pass completes.
  h.cti.slow(200)
  const pass = h.sync.run('demand')
  await Bun.sleep(50)
  expect(await h.sync.releaseDeadLock()).toBe('ours')
  expect((await h.store.get({ index: RESOURCE_LOCKS_INDEX, id: SYNC_LOCK_ID })).found).toBe(true)
  h.cti.slow(0)
  expect(((await pass) as PassReport).outcome).toBe('done')
})

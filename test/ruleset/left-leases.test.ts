// A node killed (kill -9) in the middle of a detector run leaves the run's lease behind. On the
// embedded store, which only this node's process writes, a lease from before the process started
// is a dead process's: the restarted node takes it over at once instead of after the lease's
// stale age (15 minutes). A lease written since is respected, and on a store other nodes share a
// left lease is left to age (its holder may be alive).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createRuleset, type Ruleset } from '../../src/ruleset'
import { DETECTOR_LOCKS_INDEX } from '../../src/ruleset/indices'
import { ctiRule, LINUX, linuxDetector, type RulesetServer, startRulesetServer } from './harness'

let s: RulesetServer
const nodes: Ruleset[] = []
beforeAll(async () => {
  s = await startRulesetServer({ linux: true })
  await s.ruleset.sync.upsertRule('standard', ctiRule('r-left', { sel: { 'event.action': 'left' }, condition: 'sel' }), LINUX.id, false)
  await linuxDetector(s, ['r-left'])
})
afterAll(async () => {
  for (const n of nodes) await n.stop()
  await s.stop()
})

/** The run lease as a holder `ageMillis` ago wrote it. */
const lease = (ageMillis: number) =>
  s.deps.store.index({ index: DETECTOR_LOCKS_INDEX, id: `run-${LINUX.id}`, body: { acquired_at: Date.now() - ageMillis }, refresh: true })

/** The ruleset of a node (re)started now over the same store. */
function node(nodeLocalStore: boolean): Ruleset {
  const ruleset = createRuleset({ ...s.deps, nodeLocalStore })
  nodes.push(ruleset)
  return ruleset
}

test('a run lease left by a killed process is taken over by the restarted node on its own store', async () => {
  await lease(60_000)
  await s.index([{ '@timestamp': new Date().toISOString(), event: { action: 'left' } }])
  // A run now would wait out the stale age.
  expect(await s.ruleset.scheduler.runLeased(LINUX.id)).toBeUndefined()
  expect(await node(true).scheduler.runLeased(LINUX.id)).toMatchObject({ status: 'ran', documents: 1, findings: 1 })
})

test('a lease written since the node started is respected', async () => {
  const restarted = node(true)
  await Bun.sleep(5)
  await lease(0)
  expect(await restarted.scheduler.runLeased(LINUX.id)).toBeUndefined()
})

test('on a store other nodes share, a left lease is left to age', async () => {
  await lease(60_000)
  expect(await node(false).scheduler.runLeased(LINUX.id)).toBeUndefined()
})

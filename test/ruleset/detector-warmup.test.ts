// A detector started (created enabled, or enabled) has its rules readied for its first run: they
// are compiled and indexed on the evaluator thread meanwhile, so the first run finds them there
// instead of sending and indexing them itself; the run's answer is unchanged.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ctiRule, LINUX, linuxDetector, type RulesetServer, startRulesetServer } from './harness'

let s: RulesetServer
beforeAll(async () => {
  s = await startRulesetServer()
})
afterAll(async () => {
  await s.stop()
})

test("a started detector's rules are on the evaluator thread before its first run, which finds them there", async () => {
  await s.ruleset.sync.upsertIntegration('standard', LINUX, false)
  for (const n of [1, 2, 3])
    await s.ruleset.sync.upsertRule(
      'standard',
      ctiRule(`r-warm-${n}`, { sel: { 'event.action': `warm-${n}` }, condition: 'sel' }),
      LINUX.id,
      false,
    )
  const { sets } = s.ruleset.evaluator
  const sent = sets.sent
  await linuxDetector(s, ['r-warm-1', 'r-warm-2', 'r-warm-3'])
  expect(sets.sent).toBe(sent + 1)
  const readied = { ...sets }
  await s.index([{ '@timestamp': new Date().toISOString(), event: { action: 'warm-2' } }, { '@timestamp': new Date().toISOString() }])
  const r = await s.ruleset.scheduler.runLeased(LINUX.id)
  expect(r).toMatchObject({ status: 'ran', documents: 2, findings: 1 })
  expect(sets).toEqual({ sent: readied.sent, reused: readied.reused + 1 })
})

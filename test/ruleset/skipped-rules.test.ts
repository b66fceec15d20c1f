// A rule a detector cannot use (here: a value its source index maps as a date refuses) is left
// out of each run and listed in the run's status; the node warns about it once, at the first run
// that leaves it out, not on every run (a detector runs every minute for years).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createLogger } from '../../src/http/log'
import { ctiRule, LINUX, linuxDetector, type RulesetServer, startRulesetServer } from './harness'

const lines: string[] = []
let s: RulesetServer
beforeAll(async () => {
  s = await startRulesetServer({ log: createLogger({ level: 'info', write: (l) => lines.push(l) }) })
})
afterAll(async () => {
  await s.stop()
})

const warnings = (rule: string) => lines.filter((l) => l.includes('rule skipped by detector') && l.includes(`"rule":"${rule}"`))

test('a skipped rule is in every run status and warned about once', async () => {
  await s.ruleset.sync.upsertIntegration('standard', LINUX, false)
  await s.ruleset.sync.upsertRule('standard', ctiRule('r-usable', { sel: { 'event.action': 'x' }, condition: 'sel' }), LINUX.id, false)
  await s.ruleset.sync.upsertRule(
    'standard',
    ctiRule('r-dated', { sel: { 'event.created': 'not-a-date' }, condition: 'sel' }),
    LINUX.id,
    false,
  )
  // The warm-up readies the rules quietly: the first run is the one that says.
  await linuxDetector(s, ['r-usable', 'r-dated'])
  expect(warnings('r-dated')).toHaveLength(0)
  for (const run of [1, 2, 3]) {
    await s.index([{ '@timestamp': new Date().toISOString(), event: { action: 'x' } }])
    const r = await s.ruleset.scheduler.runLeased(LINUX.id)
    expect(r).toMatchObject({ status: 'ran', documents: 1, findings: 1, skipped_rules: ['r-dated'] })
    expect(warnings('r-dated')).toHaveLength(1)
    expect(warnings('r-usable')).toHaveLength(0)
    if (run === 1) expect(warnings('r-dated')[0]).toContain(`"detector":"${LINUX.id}"`)
  }
})

// Embedded retention ages events by their `@timestamp`, so an event shipped late is past its
// stream's delete age when it arrives. A live detector that has not read it yet holds it; once
// the detector has, it goes. A detector that is off, or has stopped running, holds nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { applyRetention } from '../../src/setup/retention'
import { quietLog } from '../setup/harness'
import { ctiRule, EVENTS, LINUX, linuxDetector, type RulesetServer, startRulesetServer } from './harness'

const HOUR = 3_600_000
let s: RulesetServer
beforeAll(async () => {
  s = await startRulesetServer({ linux: true })
  await s.ruleset.sync.upsertRule('standard', ctiRule('r-late', { sel: { 'event.action': 'late' }, condition: 'sel' }), LINUX.id, false)
})
afterAll(async () => {
  await s.stop()
})

const detector = (enabled: boolean) => linuxDetector(s, ['r-late'], enabled)

/** One retention pass at `now`, with the ruleset's holds: what it did to the events stream. */
async function retention(now = Date.now()) {
  const out = await applyRetention({ store: s.deps.store, now: () => now, log: quietLog(), holds: (at) => s.ruleset.retentionHolds(at) })
  return out.find((o) => o.stream === EVENTS)
}

const late = (action: string) => ({ '@timestamp': new Date(Date.now() - 3 * HOUR).toISOString(), event: { action } })

describe('retention and detection', () => {
  test('late events wait for the detector that has not read them, and go once it has', async () => {
    await detector(true)
    await s.index([late('late'), late('other'), late('late')])
    expect(await retention()).toMatchObject({ deleted: 0, held: 3 })
    const run = await s.ruleset.scheduler.runLeased(LINUX.id)
    expect(run).toMatchObject({ status: 'ran', documents: 3, findings: 2 })
    expect(await retention()).toMatchObject({ deleted: 3, held: 0 })
    // The findings keep their copy of the event.
    const findings = await s.findings()
    expect(findings.map((f) => f._source.event.action)).toEqual(['late', 'late'])
  })

  test('only what the detector has not read is held', async () => {
    await s.index([late('late')])
    expect((await s.ruleset.scheduler.runLeased(LINUX.id))?.status).toBe('ran')
    await s.index([late('late'), late('late')])
    // The first is read and goes; the two after the checkpoint stay.
    expect(await retention()).toMatchObject({ deleted: 1, held: 2 })
    expect((await s.ruleset.scheduler.runLeased(LINUX.id))?.status).toBe('ran')
    expect(await retention()).toMatchObject({ deleted: 2, held: 0 })
  })

  test('a detector that has not run for two intervals and the grace holds nothing', async () => {
    await s.index([late('late')])
    // A day later, by the clock retention reads: the detector's last run is long past due.
    expect(await retention(Date.now() + 24 * HOUR)).toMatchObject({ deleted: 1, held: 0 })
  })

  test('a disabled detector holds nothing', async () => {
    await detector(false)
    await s.index([late('late')])
    expect(await s.ruleset.retentionHolds()).toEqual(new Map())
    expect(await retention()).toMatchObject({ deleted: 1, held: 0 })
  })
})

// `rules/evaluate` (logtest detection's service call) and the findings bounds of detection runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ApiError } from '../../src/http/errors'
import { ctiRule, EVENTS, LINUX, type RulesetServer, startLinuxServer, linuxDetector } from './harness'

const SA = 'plugins.security_analytics.'
let s: RulesetServer
beforeAll(async () => {
  s = await startLinuxServer()
})
afterAll(async () => {
  await s.stop()
})

const SSH = `title: SSH failed password
id: 85bba177-0000-4000-8000-000000000001
level: medium
tags: [attack.credential-access, attack.t1110.001]
logsource: {product: linux}
detection:
  auth:
    event.category: authentication
  failed:
    event.outcome: failure
  noise:
    user.name: healthcheck
  condition: auth and failed and not noise
`
const NO_ID = `title: Root anything
logsource: {product: linux}
detection:
  sel:
    user.name|startswith: ro
  condition: sel
`
const request = (event: unknown, rulesBodies = [SSH, NO_ID]) => ({
  normalizedEvent: JSON.stringify(event),
  rulesBodies,
  integrationId: LINUX.id,
  logType: 'linux',
  sourceIndices: [EVENTS],
})

describe('rules/evaluate', () => {
  test('matched rules with their matched conditions; a rule without id is rule_<position>', async () => {
    const r = await s.ruleset.evaluate(request({ event: { category: 'Authentication', outcome: 'failure' }, user: { name: 'root' } }))
    expect(r).toEqual({
      status: 'success',
      rules_evaluated: 2,
      rules_matched: 2,
      matches: [
        {
          rule: {
            id: '85bba177-0000-4000-8000-000000000001',
            title: 'SSH failed password',
            level: 'medium',
            tags: ['attack.credential-access', 'attack.t1110.001'],
          },
          matched_conditions: ["event.category matched 'authentication'", "event.outcome matched 'failure'"],
        },
        { rule: { id: 'rule_1', title: 'Root anything', tags: [] }, matched_conditions: ["user.name matched 'ro*'"] },
      ],
    })
  })

  test('a negated selection that holds stops the match; near misses do not match', async () => {
    const noisy = await s.ruleset.evaluate(
      request({ event: { category: 'authentication', outcome: 'failure' }, user: { name: 'healthcheck' } }),
    )
    expect(noisy.matches.map((m) => m.rule.id)).toEqual([])
    const near = await s.ruleset.evaluate(request({ event: { category: 'authentications', outcome: 'failures' }, user: { name: 'r' } }))
    expect(near).toMatchObject({ rules_evaluated: 2, rules_matched: 0, matches: [] })
  })

  test('rules that do not parse or compile are skipped and not counted', async () => {
    const r = await s.ruleset.evaluate(
      request({ user: { name: 'root' } }, ['title: [broken', NO_ID, NO_ID.replace('startswith', 'minute')]),
    )
    expect(r.rules_evaluated).toBe(1)
    expect(r.matches.map((m) => m.rule.id)).toEqual(['rule_1'])
  })

  test('validation', async () => {
    const fails = async (req: Record<string, unknown>, message: string) => {
      const e = await s.ruleset.evaluate(req).catch((x) => x)
      expect(e).toBeInstanceOf(ApiError)
      expect(e.status).toBe(400)
      expect(e.message).toBe(message)
    }
    await fails({ ...request({}), normalizedEvent: '' }, 'normalizedEvent must not be null or empty')
    await fails({ ...request({}), rulesBodies: [] }, 'rulesBodies must not be null or empty')
    await fails({ ...request({}), integrationId: undefined }, 'integrationId must not be null or empty')
    await fails({ ...request({}), logType: '' }, 'logType must not be null or empty')
    await fails({ ...request({}), sourceIndices: [] }, 'sourceIndices must not be null or empty')
    await fails(request([1, 2]), 'The normalized event must be a JSON object to be evaluated against rules.')
    await fails({ ...request({}), normalizedEvent: '{nope' }, 'The normalized event must be a JSON object to be evaluated against rules.')
  })
})

describe('findings bounds of a detection run', () => {
  const RULE = ctiRule('r-any', { sel: { 'event.action': 'hit' }, condition: 'sel' })
  const hits = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      '@timestamp': `2026-09-10T12:00:${String(i % 60).padStart(2, '0')}Z`,
      event: { action: 'hit' },
    }))

  beforeAll(async () => {
    await s.ruleset.sync.upsertRule('standard', RULE, LINUX.id, false)
    await linuxDetector(s, ['r-any'])
  })

  test('beyond correlation.max_pending_findings new findings are shed, counted, and the run moves on', async () => {
    await s.setSetting(`${SA}correlation.max_pending_findings`, 3)
    await s.setSetting(`${SA}enriched_findings_enrich_batch_size`, 10)
    await s.setSetting(`${SA}enriched_findings_bulk_size`, 10)
    try {
      const before = (await s.findings()).length
      await s.index(hits(25))
      const r = await s.ruleset.scheduler.runLeased(LINUX.id)
      // Batches of 10, 10 and 5 events, each flushed as it fills a bulk of 10 (the last at the
      // end of the page): 3 findings accepted from each, the rest shed.
      expect(r).toMatchObject({ status: 'ran', documents: 25, findings: 9, shed: 16 })
      expect((await s.findings()).length).toBe(before + 9)
      expect(s.ruleset.findings.inFlight).toBe(0)
    } finally {
      await s.setSetting(`${SA}correlation.max_pending_findings`, 10000)
      await s.setSetting(`${SA}enriched_findings_enrich_batch_size`, 100)
      await s.setSetting(`${SA}enriched_findings_bulk_size`, 100)
    }
  })

  test('enriched_findings_index_enabled=false writes nothing; the documents are still consumed', async () => {
    await s.setSetting(`${SA}enriched_findings_index_enabled`, false)
    try {
      const before = (await s.findings()).length
      await s.index(hits(4))
      expect(await s.ruleset.scheduler.runLeased(LINUX.id)).toMatchObject({ status: 'ran', documents: 4, findings: 0 })
      expect((await s.findings()).length).toBe(before)
    } finally {
      await s.setSetting(`${SA}enriched_findings_index_enabled`, true)
    }
    await s.index(hits(2))
    expect(await s.ruleset.scheduler.runLeased(LINUX.id)).toMatchObject({ status: 'ran', documents: 2, findings: 2 })
  })

  test('one node runs a detector at a time: a held lease means no run', async () => {
    const { tryAcquireLease, releaseLease } = await import('../../src/locks/lease')
    const { DETECTOR_LOCKS_INDEX } = await import('../../src/ruleset/indices')
    const held = await tryAcquireLease(s.deps, { index: DETECTOR_LOCKS_INDEX, id: `run-${LINUX.id}`, staleMillis: 60_000 })
    expect(held).toBeDefined()
    await s.index(hits(1))
    expect(await s.ruleset.scheduler.runLeased(LINUX.id)).toBeUndefined()
    await releaseLease(s.deps, held!)
    expect(await s.ruleset.scheduler.runLeased(LINUX.id)).toMatchObject({ status: 'ran', documents: 1, findings: 1 })
  })
})

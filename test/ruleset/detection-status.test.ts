// Findings always land, and a detector's status tells what its runs did: rule metadata in any
// shape is normalized to the findings mapping; a finding the findings stream still refuses is
// counted, reported in the detector's GET and search responses, and the run moves on (the next
// run does not repeat it); a run that outlasted its interval is not followed at once by an empty
// run; a stop request ends a run at a batch boundary with its checkpoint saved.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadCheckpoint, saveCheckpoint } from '../../src/ruleset/detection/checkpoint'
import { SCAN_BATCH } from '../../src/ruleset/detection/evaluator-protocol'
import { runDetector } from '../../src/ruleset/detection/run'
import { ctiRule, detectorBody, FINDINGS, LINUX, type RulesetServer, startRulesetServer, linuxDetector } from './harness'

const BASE = '/_plugins/_security_analytics'
const USER_INDEX = 'svc-events-v5-userlogs'

describe('findings always land; detector status', () => {
  let s: RulesetServer
  const id = LINUX.id

  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
    // The id-only MITRE form and a compliance map with a stray key: both made the run fail before.
    const rule = ctiRule(
      'r-mitre',
      { sel: { 'event.action': 'hit' }, condition: 'sel' },
      {
        mitre: { tactic: ['TA0001'], technique: 'T1078', subtechnique: [{ id: 'T1078.003', name: 'Local Accounts' }] },
        compliance: { pci_dss: '10.2.5', not_a_framework: ['x'] },
        references: ['https://attack.mitre.org/techniques/T1078/'],
      },
    )
    await s.ruleset.sync.upsertRule('standard', rule, LINUX.id, false)
    await linuxDetector(s, ['r-mitre'])
  })
  afterAll(async () => {
    await s.stop()
  })

  const hit = (extra: Record<string, unknown> = {}) => ({ '@timestamp': new Date().toISOString(), event: { action: 'hit' }, ...extra })

  test('rule metadata in the id-only and other shapes is normalized and the findings land', async () => {
    await s.index([hit(), hit()])
    const r = await s.ruleset.scheduler.runLeased(id)
    expect(r).toMatchObject({ status: 'ran', documents: 2, findings: 2, failed_findings: 0 })
    const [f] = await s.findings()
    expect(f._source.svc.rule.mitre).toEqual({
      tactic: { id: ['TA0001'] },
      technique: { id: ['T1078'] },
      subtechnique: { id: ['T1078.003'], name: ['Local Accounts'] },
    })
    expect(f._source.svc.rule.compliance).toEqual({ pci_dss: ['10.2.5'] })
    expect(f._source.svc.rule.reference).toEqual(['https://attack.mitre.org/techniques/T1078/'])
  })

  test('a finding the stream refuses is counted and reported, and the run moves on', async () => {
    // A user's own events index (dynamic mapping) and a user detector over it; the findings
    // stream types a field that index took as text: that event's finding cannot be written.
    await s.deps.store.createIndex({
      index: USER_INDEX,
      body: { mappings: { properties: { event: { properties: { action: { type: 'keyword' } } } } } },
    })
    await s.ruleset.sync.upsertRule('custom', ctiRule('cus-hit', { sel: { 'event.action': 'hit' }, condition: 'sel' }), LINUX.id, false)
    const created = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-hit'], indices: [USER_INDEX] }) })
    expect(created.status).toBe(201)
    const userDetector = created.body._id
    const [backing] = await s.deps.store.resolve(FINDINGS)
    await s.deps.store.putMapping({ index: backing, body: { properties: { stuck: { type: 'long' } } } })
    const before = (await s.findings()).length
    await s.deps.store.bulk({
      body: [hit(), hit({ stuck: 'not a number' }), hit()].flatMap((e) => [{ index: { _index: USER_INDEX } }, e]),
      refresh: true,
    })
    const r = await s.ruleset.scheduler.runLeased(userDetector)
    expect(r).toMatchObject({ status: 'ran', documents: 3, findings: 2, failed_findings: 1 })
    expect((await s.findings()).length).toBe(before + 2)

    // Never the same failure again: the next run has nothing to do.
    expect(await s.ruleset.scheduler.runLeased(userDetector)).toMatchObject({ status: 'ran', documents: 0, failed_findings: 0 })

    const got = await s.request('GET', `${BASE}/detectors/${userDetector}`)
    expect(got.status).toBe(200)
    expect(got.body.detector.last_run).toMatchObject({ events_scanned: 0, findings_written: 0, findings_failed: 0 })
    expect(got.body.detector.last_error.message).toContain('1 findings could not be written')
    expect(got.body.detector.last_error.message).toMatch(/stuck|long|pars/i)

    const found = await s.request('POST', `${BASE}/detectors/_search`, { body: { query: { match_all: {} } } })
    expect(found.status).toBe(200)
    const det = found.body.hits.hits.find((h: { _id: string }) => h._id === userDetector)._source.detector
    expect(det.last_run.start_time).toMatch(/^\d{4}-/)
    expect(det.last_error.message).toBe(got.body.detector.last_error.message)
  })

  test('the status of a run shows its figures and its lag', async () => {
    await s.index([hit(), hit(), hit()])
    await s.ruleset.scheduler.runLeased(id)
    const got = await s.request('GET', `${BASE}/detectors/${id}`)
    const last = got.body.detector.last_run
    expect(last).toMatchObject({ events_scanned: 3, findings_written: 3, findings_failed: 0 })
    expect(Date.parse(last.end_time)).toBeGreaterThanOrEqual(Date.parse(last.start_time))
    expect(last.lag_ms).toBeGreaterThanOrEqual(0)
    expect(last.lag_ms).toBeLessThan(60_000)
  })

  test('a run that outlasted its interval is not followed at once by an empty run', async () => {
    const cp = (await loadCheckpoint(s.deps.store, id))!
    const interval = 2 * 60_000 // the CTI default interval of the standard detector
    const now = Date.now()
    // The last run started 3 minutes ago and ended just now: it overran its 2-minute interval.
    const last = { ...cp.checkpoint.last_run!, started_at: now - 3 * 60_000, finished_at: now - 1000, documents: 123 }
    await saveCheckpoint(s.deps.store, { ...cp.checkpoint, last_run_at: last.started_at, last_run: last }, cp)
    await s.ruleset.scheduler.tick()
    const after = (await loadCheckpoint(s.deps.store, id))!.checkpoint
    expect(after.last_run?.documents).toBe(123)
    // One interval after it ended, it is due again.
    const cp2 = (await loadCheckpoint(s.deps.store, id))!
    const shifted = { ...last, started_at: last.started_at - interval, finished_at: last.finished_at - interval }
    await saveCheckpoint(s.deps.store, { ...cp2.checkpoint, last_run_at: shifted.started_at, last_run: shifted }, cp2)
    await s.ruleset.scheduler.tick()
    expect((await loadCheckpoint(s.deps.store, id))!.checkpoint.last_run?.documents).toBe(0)
  })

  test('every full batch is committed: the findings of a scan that ends on a batch boundary are all written', async () => {
    // Exactly two full batches, one match in a hundred: the read after the last batch finds nothing.
    const events = Array.from({ length: 2 * SCAN_BATCH }, (_, i) => hit({ event: { action: i % 100 === 7 ? 'hit' : 'miss' } }))
    await s.index(events)
    const before = (await s.findings()).length
    const r = await s.ruleset.scheduler.runLeased(id)
    expect(r).toMatchObject({ status: 'ran', documents: 2 * SCAN_BATCH, findings: (2 * SCAN_BATCH) / 100, failed_findings: 0 })
    expect((await s.findings()).length - before).toBe((2 * SCAN_BATCH) / 100)
    // Nothing is left for the next run, and nothing was skipped.
    expect(await s.ruleset.scheduler.runLeased(id)).toMatchObject({ status: 'ran', documents: 0, findings: 0 })
  })

  test('a stop request ends the run at the next batch boundary with its checkpoint saved', async () => {
    const events = Array.from({ length: SCAN_BATCH + 5 }, () => hit({ event: { action: 'miss' } }))
    await s.index(events)
    let batches = 0
    const deps = { ...s.deps, rules: s.ruleset.rules, findings: s.ruleset.findings, evaluator: s.ruleset.evaluator }
    // Asked to stop once the first batch is done (the check runs before each batch).
    const r = await runDetector(deps, id, await s.ruleset.detectors.stored(id), { stopping: () => batches++ >= 1 })
    expect(r).toMatchObject({ status: 'stopped', documents: SCAN_BATCH })
    // The rest is the next run's, from the saved checkpoint.
    expect(await s.ruleset.scheduler.runLeased(id)).toMatchObject({ status: 'ran', documents: 5 })
  })
})

// Alerting monitor compatibility over real HTTP: a detector carries `detector.monitor_id[]` in
// `.platform-sap-detectors-config`, and `POST /_plugins/_alerting/monitors/<id>/_execute` runs it
// at once, answering in the execute API's shape; the finding references the matching event and a
// non-matching event yields none (the reference's end-to-end flow).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { DETECTORS_INDEX } from '../../src/ruleset/indices'
import { ctiRule, detectorBody, LINUX, type RulesetServer, startRulesetServer } from './harness'

const BASE = '/_plugins/_security_analytics'
const execute = (id: string) => `/_plugins/_alerting/monitors/${id}/_execute`

describe('monitor _execute', () => {
  let s: RulesetServer
  let detectorId: string
  let monitorId: string

  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
    await s.ruleset.sync.upsertRule('custom', ctiRule('cus-exec', { sel: { 'event.action': 'evil' }, condition: 'sel' }), LINUX.id, false)
    const r = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-exec'], interval: 60 }) })
    expect(r.status).toBe(201)
    detectorId = r.body._id
    monitorId = r.body.detector.monitor_id[0]
  })
  afterAll(async () => {
    await s.stop()
  })

  test('the detector config document holds its monitor id', async () => {
    expect(monitorId).toMatch(/^[\w-]{20}$/)
    const stored = await s.deps.store.get({ index: DETECTORS_INDEX, id: detectorId })
    expect(stored.found && (stored._source as any).detector.monitor_id).toEqual([monitorId])
    expect((await s.request('GET', `${BASE}/detectors/${detectorId}`)).body.detector.monitor_id).toEqual([monitorId])
  })

  test('executing the monitor runs the detector now: the finding references the event, a non-match yields none', async () => {
    const [hit, miss] = await s.index([
      { '@timestamp': new Date().toISOString(), event: { action: 'EVIL' } },
      { '@timestamp': new Date().toISOString(), event: { action: 'benign' } },
    ])
    const r = await s.request('POST', execute(monitorId))
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ monitor_name: 'linux-custom', error: null, trigger_results: {} })
    expect(r.body.period_end).toBeGreaterThanOrEqual(r.body.period_start)
    expect(r.body.input_results).toEqual({ results: [{ 'cus-exec': [`${hit._id}|${hit._index}`] }], error: null })
    const findings = await s.findings()
    expect(findings.map((f) => f._source.event.doc_id)).toEqual([hit._id])
    expect(findings[0]._source.svc.detector.id).toBe(detectorId)
    expect(findings.some((f) => f._source.event.doc_id === miss._id)).toBe(false)

    // Nothing new: a second execution finds nothing and writes nothing.
    const again = await s.request('POST', execute(monitorId))
    expect(again.body.input_results.results).toEqual([{}])
    expect((await s.findings()).length).toBe(1)
  })

  test('an unknown monitor is a 404 in the plugin envelope', async () => {
    const r = await s.request('POST', execute('no-such-monitor'))
    expect(r.status).toBe(404)
    expect(r.body).toEqual({ message: "Can't find monitor with id: no-such-monitor", status: 404 })
  })

  test('it needs the detector write permission', async () => {
    const r = await s.request('POST', execute(monitorId), { user: 'nobody' })
    expect(r.status).toBe(403)
  })
})

describe('monitor ids of detectors stored before them', () => {
  test('a detector without a monitor id gets one on its next write', async () => {
    const s = await startRulesetServer()
    try {
      await s.ruleset.sync.upsertIntegration('standard', LINUX, false)
      await s.ruleset.sync.upsertRule('custom', ctiRule('cus-old', { sel: { 'event.action': 'x' }, condition: 'sel' }), LINUX.id, false)
      const r = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['cus-old'] }) })
      const got = await s.deps.store.get({ index: DETECTORS_INDEX, id: r.body._id })
      const { monitor_id: _, ...old } = (got as any)._source.detector
      await s.deps.store.index({ index: DETECTORS_INDEX, id: r.body._id, body: { detector: old }, refresh: true })
      expect((await s.request('GET', `${BASE}/detectors/${r.body._id}`)).body.detector.monitor_id).toBeUndefined()
      await s.ruleset.sync.setDetectorEnabled(r.body._id, false, 'admin')
      const after = (await s.request('GET', `${BASE}/detectors/${r.body._id}`)).body.detector.monitor_id
      expect(after).toHaveLength(1)
      expect((await s.request('POST', execute(after[0]))).status).toBe(200)
    } finally {
      await s.stop()
    }
  })
})

/**
 * Detection end to end in platform mode, on an embedded svc-ext as platform and on the real
 * OpenSearch: Sigma rules (base rules and the spec's correlation chain) through the rules API,
 * detectors, events through the index API (forwarded to the platform), runs through the monitor
 * execute API, findings searched and their cases updated, and the metrics route reporting the runs.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startEngineServer, type EngineServer } from '../fixtures/engine/server'
import { customRulesDetector, draftRules } from '../e2e/detection-client'
import { EVENTS, SA } from '../helpers/calls'
import type { Reply, TestServer } from '../helpers/server'
import { specLogins, specRules } from '../ruleset/correlation/spec-example'
import { parsePrometheus } from '../helpers/prometheus'
import { forEachPlatform, startNode, type PlatformUnderTest } from './cluster-helpers'

const T0 = Date.UTC(2026, 8, 10, 12, 0, 0)

/** alice fails three times then logs in (the chain); bob fails twice (below the threshold). */
const EVENTS_SENT = specLogins(T0)

let engine: EngineServer
beforeAll(() => {
  engine = startEngineServer()
})
afterAll(() => engine?.stop())

forEachPlatform({}, (current) => {
  let platform: PlatformUnderTest
  let node: TestServer
  const call = (method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply> =>
    node.request(method, path, { body, user: platform.admin, headers })
  const ids = { failed: '', chain: '', plain: '', correlated: '', plainMonitor: '', correlatedMonitor: '' }
  const findingsOf = async (detector: string) => {
    const r = await call('GET', `${SA}/findings/_search?detector_id=${detector}&size=100`)
    expect(r.status).toBe(200)
    return r.body.findings as any[]
  }
  const execute = async (monitor: string) => {
    const r = await call('POST', `/_plugins/_alerting/monitors/${monitor}/_execute`)
    expect(r.status).toBe(200)
    expect(r.body.error).toBeNull()
    return r.body
  }

  beforeAll(async () => {
    platform = current()
    node = await startNode(platform, { settings: { 'plugins.content_manager.engine.socket_path': engine.socketPath } })
  }, 300_000)
  afterAll(() => node?.stop(), 60_000)

  test('rules and detectors are created on the platform', async () => {
    const yaml = (method: string, path: string, body?: unknown, isYaml?: boolean) =>
      call(method, path, body, isYaml ? { 'content-type': 'application/yaml' } : undefined)
    const created = await draftRules(yaml, 'platlogs', specRules('platlogs'))
    ids.failed = created[0]
    ids.chain = created[3]
    const plain = await call('POST', `${SA}/detectors`, customRulesDetector('plat-plain', 'platlogs', EVENTS, [ids.failed]))
    const correlated = await call('POST', `${SA}/detectors`, customRulesDetector('plat-chain', 'platlogs', EVENTS, [ids.chain]))
    expect([plain.status, correlated.status]).toEqual([201, 201])
    ids.plain = plain.body._id
    ids.correlated = correlated.body._id
    ids.plainMonitor = plain.body.detector.monitor_id[0]
    ids.correlatedMonitor = correlated.body.detector.monitor_id[0]
    // Stored on the platform, not in the node.
    const stored = await call('GET', `${SA}/detectors/${ids.plain}`)
    expect(stored.status).toBe(200)
    expect(stored.body.detector.name).toBe('plat-plain')
  }, 120_000)

  test('a run reads the stored events and writes one finding per match; a second run writes none again', async () => {
    const lines = EVENTS_SENT.flatMap((e) => [JSON.stringify({ create: {} }), JSON.stringify(e)]).join('\n') + '\n'
    const bulk = await call('POST', `/${EVENTS}/_bulk?refresh=true`, lines, { 'content-type': 'application/x-ndjson' })
    expect(bulk.status).toBe(200)
    expect(bulk.body.errors).toBe(false)
    const run = await execute(ids.plainMonitor)
    expect(Object.values(run.input_results.results[0]).flat()).toHaveLength(5)
    expect(await findingsOf(ids.plain)).toHaveLength(5)
    await execute(ids.plainMonitor)
    const findings = await findingsOf(ids.plain)
    expect(findings).toHaveLength(5)
    expect(new Set(findings.map((f) => f.document_list[0].id)).size).toBe(5)
    expect(findings.every((f) => f.queries[0].id === ids.failed)).toBe(true)
  }, 120_000)

  test('the correlation chain writes one correlation finding (alice, not bob)', async () => {
    await execute(ids.correlatedMonitor)
    const findings = await findingsOf(ids.correlated)
    expect(findings.map((f) => f.queries[0].id)).toEqual([ids.chain])
    const doc = JSON.parse(findings[0].document_list[0].document)
    expect(doc.svc.correlation.group).toEqual({ 'user.name': 'alice' })
    expect(doc.svc.correlation.rule.type).toBe('temporal_ordered')
    expect(doc.svc.correlation.window.end).toBe(EVENTS_SENT[3]['@timestamp'])
  }, 120_000)

  test('a case update on a finding is written on the platform and found by the findings search', async () => {
    const [finding] = await findingsOf(ids.correlated)
    const r = await call('PUT', `${SA}/findings/_update`, {
      findings: [{ _id: finding.id, _index: finding._index, case: { status: 'Acknowledged', tags: ['platform'] } }],
    })
    expect(r.status).toBe(200)
    expect(r.body.items[0]).toMatchObject({ _id: finding.id, status: 200, result: 'updated' })
    const stored = await platform.request('GET', `/${finding._index}/_doc/${finding.id}`)
    expect(stored.body._source.svc.case).toMatchObject({ status: 'acknowledged', tags: ['platform'] })
    const refound = (await findingsOf(ids.correlated)).find((f) => f.id === finding.id)
    expect(refound).toBeDefined()
  })

  test('the metrics route reports the runs made on the platform', async () => {
    const r = await call('GET', '/_prometheus/metrics')
    expect(r.status).toBe(200)
    const m = parsePrometheus(r.text)
    expect(m.get(`svc_detector_last_run_findings{detector_id="${ids.plain}"}`)).toBe(0)
    expect(m.get(`svc_detector_last_run_findings{detector_id="${ids.correlated}"}`)).toBe(1)
    expect(m.get(`svc_detector_last_run_errors{detector_id="${ids.plain}"}`)).toBe(0)
    expect(
      m.get(
        'svc_http_request_duration_seconds_count{method="POST",route="/_plugins/_alerting/monitors/:monitor_id/_execute",status="200"}',
      ),
    ).toBe(3)
  })
})

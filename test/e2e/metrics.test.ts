// Metrics (issue 17 item 1) against the compiled binary: prom-client's text format under Bun's
// compile, the exporter plugin's permission, and the families an operator scrapes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { basicAuth, send, writeSecurityConfig } from '../helpers/app'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { parsePrometheus } from '../helpers/prometheus'

const users = {
  admin: { name: 'admin', password: 'Admin-pass-1', backend_roles: ['admin'] },
  prom: { name: 'prom', password: 'Prom-pass-1', roles: ['prometheus_scraper'] },
  monitor: { name: 'monitor', password: 'Monitor-pass-1', roles: ['monitoring'] },
  plain: { name: 'plain', password: 'Plain-pass-1' },
}
let node: SpawnedServer

const parse = parsePrometheus
const scrape = async (user: { name: string; password: string } = users.admin) => {
  const r = await send(node.url, 'GET', '/_prometheus/metrics', { authorization: basicAuth(user) })
  expect(r.status).toBe(200)
  return parse(r.text)
}

beforeAll(async () => {
  requireBinary()
  const configDir = mkdtempSync(join(tmpdir(), 'svc-metrics-'))
  await writeSecurityConfig(configDir, {
    users: Object.values(users),
    roles: {
      prometheus_scraper: { cluster_permissions: ['cluster:monitor/prometheus/metrics'] },
      monitoring: { cluster_permissions: ['cluster_monitor'] },
    },
  })
  const config = join(configDir, 'svc-ext.yml')
  writeFileSync(config, 'security.auth_failures.max_attempts: 3\nsecurity.auth_failures.block_seconds: 1\n')
  node = await spawnBinary({ args: ['serve', '--config', config] })
})
afterAll(() => node?.stop())

describe('GET /_prometheus/metrics', () => {
  test('needs cluster:monitor/prometheus/metrics: all_access, the raw action and cluster_monitor hold it', async () => {
    const anon = await send(node.url, 'GET', '/_prometheus/metrics')
    expect(anon.status).toBe(401)
    const denied = await send(node.url, 'GET', '/_prometheus/metrics', { authorization: basicAuth(users.plain) })
    expect(denied.status).toBe(403)
    expect(denied.body.error.type).toBe('security_exception')
    expect(denied.text).toContain('cluster:monitor/prometheus/metrics')
    for (const u of [users.admin, users.prom, users.monitor]) {
      const r = await send(node.url, 'GET', '/_prometheus/metrics', { authorization: basicAuth(u) })
      expect(r.status).toBe(200)
      expect(r.headers.get('content-type')).toContain('text/plain; version=0.0.4')
    }
  })

  test('HTTP requests by route pattern and status, with latency histograms', async () => {
    const auth = basicAuth(users.admin)
    for (const id of ['1', '2', '3']) {
      expect(
        (await send(node.url, 'PUT', `/metrics-idx/_doc/${id}?refresh=true`, { authorization: auth, body: { n: Number(id) } })).status,
      ).toBe(201)
    }
    expect((await send(node.url, 'GET', '/metrics-idx/_doc/nope', { authorization: auth })).status).toBe(404)
    const m = await scrape()
    const put = 'svc_http_request_duration_seconds_count{method="PUT",route="/:index/_doc/:id",status="201"}'
    expect(m.get(put)).toBe(3)
    expect(m.get('svc_http_request_duration_seconds_count{method="GET",route="/:index/_doc/:id",status="404"}')).toBe(1)
    expect(m.get('svc_http_request_duration_seconds_bucket{le="+Inf",method="PUT",route="/:index/_doc/:id",status="201"}')).toBe(3)
    expect(m.get('svc_http_request_duration_seconds_sum{method="PUT",route="/:index/_doc/:id",status="201"}')).toBeGreaterThan(0)
    // Raw paths never become labels.
    expect([...m.keys()].some((k) => k.includes('metrics-idx/_doc'))).toBe(false)
    // Documents and bytes per index.
    expect(m.get('svc_index_docs{index="metrics-idx"}')).toBe(3)
    expect(m.get('svc_index_store_size_bytes{index="metrics-idx"}')).toBeGreaterThan(0)
    for (const source of ['indices', 'detectors', 'consumers', 'engine', 'locks'])
      expect(m.get(`svc_metrics_source_up{source="${source}"}`)).toBe(1)
  })

  test('authentication failures and throttled addresses', async () => {
    const before = await scrape()
    const wrong = basicAuth({ name: 'plain', password: 'wrong-password' })
    const codes: number[] = []
    for (let i = 0; i < 5; i++) codes.push((await send(node.url, 'GET', '/', { authorization: wrong })).status)
    const count = (code: number) => codes.filter((c) => c === code).length
    expect(count(429)).toBeGreaterThan(0) // max_attempts 3 of 5
    await Bun.sleep(1100) // block_seconds 1: the scraper shares the address
    const after = await scrape()
    const delta = (k: string) => (after.get(k) ?? 0) - (before.get(k) ?? 0)
    expect(delta('svc_auth_failures_total{reason="invalid_credentials"}')).toBe(count(401))
    expect(delta('svc_auth_throttled_requests_total')).toBe(count(429))
    expect(after.get('svc_auth_throttled_addresses')).toBe(1)
    expect((after.get('svc_auth_failures_total{reason="missing_credentials"}') ?? 0) >= 1).toBe(true) // the anonymous scrape above
  })

  test('detector runs and consumers, read from their state documents at scrape time', async () => {
    const auth = basicAuth(users.admin)
    const startedAt = Date.now() - 60_000
    const state = {
      detector_id: 'det-1',
      epoch: null,
      indices: {},
      last_run_at: startedAt,
      last_run: {
        started_at: startedAt,
        finished_at: startedAt + 1500,
        took_ms: 1500,
        documents: 420,
        findings: 7,
        duplicates: 0,
        shed: 0,
        failed_findings: 0,
        lag_ms: 90_000,
        skipped_rules: [],
      },
      // An older failure stays visible but does not mark the latest run as failed.
      last_error: { at: startedAt - 600_000, message: 'earlier failure' },
    }
    const put = await send(node.url, 'PUT', '/.platform-sap-detectors-state/_doc/det-1?refresh=true', { authorization: auth, body: state })
    expect(put.status).toBeLessThan(300)
    const consumer = {
      name: 'ruleset',
      context: 'ctx',
      type: 'cti:catalog:consumer:ruleset',
      resource: 'r',
      is_public: true,
      status: 'ready',
      local_offset: 1200,
      remote_offset: 1250,
      pending_sync_phases: [],
      last_pass: {
        outcome: 'ready',
        started_at: '2026-01-01T00:00:00Z',
        finished_at: '2026-01-01T00:00:03Z',
        duration_millis: 3000,
        updated: true,
      },
    }
    const id = encodeURIComponent('cti:catalog:consumer:ruleset')
    expect(
      (await send(node.url, 'PUT', `/.svc-cti-consumers/_doc/${id}?refresh=true`, { authorization: auth, body: consumer })).status,
    ).toBeLessThan(300)
    const m = await scrape()
    const d = '{detector_id="det-1"}'
    expect(m.get(`svc_detector_last_run_duration_seconds${d}`)).toBe(1.5)
    expect(m.get(`svc_detector_last_run_events_scanned${d}`)).toBe(420)
    expect(m.get(`svc_detector_last_run_findings${d}`)).toBe(7)
    expect(m.get(`svc_detector_last_run_errors${d}`)).toBe(0)
    expect(m.get(`svc_detector_last_run_timestamp_seconds${d}`)).toBe(startedAt / 1000)
    expect(m.get(`svc_detector_lag_seconds${d}`)).toBe(90)
    expect(m.get(`svc_detector_last_error_timestamp_seconds${d}`)).toBe((startedAt - 600_000) / 1000)
    const c = '{consumer="ruleset"}'
    expect(m.get(`svc_consumer_local_offset${c}`)).toBe(1200)
    expect(m.get(`svc_consumer_remote_offset${c}`)).toBe(1250)
    expect(m.get('svc_consumer_status{consumer="ruleset",status="ready"}')).toBe(1)
    expect(m.get(`svc_consumer_last_pass_duration_seconds${c}`)).toBe(3)
    expect(m.get(`svc_consumer_last_pass_success${c}`)).toBe(1)
  })

  test('process RSS and event-loop delay', async () => {
    const m = await scrape(users.prom)
    expect(m.get('process_resident_memory_bytes')).toBeGreaterThan(10 * 1024 * 1024)
    expect(m.has('nodejs_eventloop_lag_p99_seconds')).toBe(true)
  })
})

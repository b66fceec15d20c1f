// Threat intel, access and administration over real HTTP: the findings and alerts lists under the
// caller's document-level security (a finding names events: a caller sees it, and those of its
// events, only where it may read them); trigger actions naming a channel that does not exist;
// `_refresh` of sources; the IoC findings history's rollover and retention.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../../helpers/server'
import { EVENTS, indexEvents, networkTiDetector, until } from './http-harness'

const SA = '/_plugins/_security_analytics'
const TI = `${SA}/threat_intel`
/** May read bob's events only (DLS), and use every Security Analytics action. */
const DANA = { name: 'dana', password: 'Dana-pass-1' }
let s: TestServer
let monitorId: string
let detectorId: string
let sourceId: string

const execute = () => s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
const ioc = (id: string, value: string) => ({ id, type: 'ipv4-addr', value, name: value, severity: 'high', spec_version: '2.1' })
const upload = (name: string, iocs: unknown[]) => ({
  name,
  format: 'STIX2',
  type: 'IOC_UPLOAD',
  enabled: false,
  ioc_types: ['ipv4-addr'],
  source: { ioc_upload: { file_name: `${name}.json`, iocs } },
})

beforeAll(async () => {
  s = await startTestServer({
    // The IoC findings rollover job checks every second (its bounds are set by the test).
    settings: { 'plugins.security_analytics.ioc_finding_history_rollover_period': '1s' },
    users: [{ ...DANA, roles: ['bob_events_only'] }],
    roles: {
      bob_events_only: {
        cluster_permissions: ['cluster:admin/platform/securityanalytics/*'],
        index_permissions: [
          { index_patterns: ['svc-events-v5-*', '.ds-svc-events-v5-*'], allowed_actions: ['read'], dls: '{"term": {"user.name": "bob"}}' },
        ],
      },
    },
  })
  const source = await s.request('POST', `${TI}/sources`, { body: upload('dls-feed', [ioc('a', '203.0.113.7'), ioc('b', '203.0.113.8')]) })
  expect(source.status).toBe(201)
  sourceId = source.body._id
  const created = await s.request('POST', `${SA}/detectors`, {
    body: networkTiDetector('dls-ti', [{ id: 'ti', name: 'ioc', severity: '1', detection_types: ['threat_intel'], actions: [] }]),
  })
  expect(created.status).toBe(201)
  monitorId = created.body.detector.monitor_id[0]
  detectorId = created.body._id
  await indexEvents(s, [{ source: { ip: '10.0.0.1' } }])
  await execute()
  // .7 is in bob's and alice's events (one finding naming both), .8 in alice's only.
  await indexEvents(s, [
    { user: { name: 'bob' }, source: { ip: '203.0.113.7' } },
    { user: { name: 'alice' }, source: { ip: '203.0.113.7' } },
    { user: { name: 'alice' }, destination: { ip: '203.0.113.8' } },
  ])
  expect((await execute()).status).toBe(200)
}, 60_000)
afterAll(async () => {
  await s?.stop()
})

describe('threat-intel findings and alerts under document-level security', () => {
  test('the findings list shows a DLS caller the findings, and the events, it may read', async () => {
    const all = (await s.request('GET', `${TI}/findings/_search?sortString=ioc_value`)).body
    expect(all.total_findings).toBe(2)
    expect(all.ioc_findings.map((f: any) => [f.ioc_value, f.related_doc_ids.length])).toEqual([
      ['203.0.113.7', 2],
      ['203.0.113.8', 1],
    ])
    const mine = (await s.request('GET', `${TI}/findings/_search`, { user: DANA })).body
    expect(mine.total_findings).toBe(1)
    expect(mine.ioc_findings).toHaveLength(1)
    const [f] = mine.ioc_findings
    expect(f.ioc_value).toBe('203.0.113.7')
    expect(f.related_doc_ids).toHaveLength(1)
    const [id, index] = [f.related_doc_ids[0].slice(0, f.related_doc_ids[0].lastIndexOf(':')), f.related_doc_ids[0].split(':').pop()]
    const event = await s.request('GET', `/${index}/_doc/${id}`)
    expect(event.body._source.user.name).toBe('bob')
    // Paging counts only what the caller sees.
    expect((await s.request('GET', `${TI}/findings/_search?startIndex=1`, { user: DANA })).body).toEqual({
      total_findings: 1,
      ioc_findings: [],
    })
  })

  test('the alerts list and the status update leave out alerts on events the caller may not read', async () => {
    const all = (await s.request('GET', `${TI}/alerts?sortString=ioc_value`)).body
    expect(all.alerts.map((a: any) => a.ioc_value)).toEqual(['203.0.113.7', '203.0.113.8'])
    const mine = (await s.request('GET', `${TI}/alerts`, { user: DANA })).body
    expect(mine.total_alerts).toBe(1)
    expect(mine.alerts.map((a: any) => a.ioc_value)).toEqual(['203.0.113.7'])
    const hidden = all.alerts[1].id
    const refused = await s.request('PUT', `${TI}/alerts/status?state=ACKNOWLEDGED&alert_ids=${hidden}`, { user: DANA })
    expect(refused.status).toBe(400)
    const acked = await s.request('PUT', `${TI}/alerts/status?state=ACKNOWLEDGED&alert_ids=${mine.alerts[0].id}`, { user: DANA })
    expect(acked.status).toBe(200)
    expect(acked.body.updated_alerts.map((a: any) => a.state)).toEqual(['ACKNOWLEDGED'])
  })
})

describe('trigger actions name existing notification channels', () => {
  const action = (destination_id: string) => ({ name: 'notify', destination_id, message_template: { source: 'IoC {{ctx.trigger.name}}' } })
  const monitor = (actions: unknown[]) => ({
    name: 'ti monitor',
    schedule: { period: { interval: 5, unit: 'MINUTES' } },
    enabled: false,
    indices: [EVENTS],
    per_ioc_type_scan_input_list: [{ ioc_type: 'ipv4-addr', index_to_fields_map: { [EVENTS]: ['source.ip'] } }],
    triggers: [{ name: 'ti trigger', severity: '1', actions }],
  })
  const unknownChannel = { status: 400, message: 'Trigger [ti trigger] action [notify]: notification channel [no-such-channel] not found' }

  test('a threat-intel monitor naming an unknown channel is a 400, at creation and update; an existing one is taken', async () => {
    const bad = await s.request('POST', `${TI}/monitors`, { body: monitor([action('no-such-channel')]) })
    expect({ status: bad.status, message: bad.body.message }).toEqual(unknownChannel)
    const malformed = await s.request('POST', `${TI}/monitors`, { body: monitor([{ name: 'notify', destination_id: 'x' }]) })
    expect({ status: malformed.status, message: malformed.body.message }).toMatchObject({
      status: 400,
      message: expect.stringContaining('action of trigger [ti trigger]'),
    })
    const channel = await s.request('POST', '/_plugins/_notifications/configs', {
      body: { config_id: 'ti-hook', config: { name: 'hook', config_type: 'webhook', webhook: { url: 'http://127.0.0.1:9/hook' } } },
    })
    expect(channel.status).toBe(200)
    const created = await s.request('POST', `${TI}/monitors`, { body: monitor([action('ti-hook')]) })
    expect(created.status).toBe(201)
    const updated = await s.request('PUT', `${TI}/monitors/${created.body.id}`, { body: monitor([action('no-such-channel')]) })
    expect({ status: updated.status, message: updated.body.message }).toEqual(unknownChannel)
    expect((await s.request('GET', `${TI}/monitors/${created.body.id}`)).body.monitor.triggers[0].actions[0].destination_id).toBe('ti-hook')
    expect((await s.request('DELETE', `${TI}/monitors/${created.body.id}`)).status).toBe(200)
  })

  test('a detector update whose trigger names an unknown channel is a 400, as its creation is', async () => {
    const body = networkTiDetector('dls-ti', [
      { id: 'ti', name: 'ioc', severity: '1', detection_types: ['threat_intel'], actions: [action('no-such-channel')] },
    ])
    const r = await s.request('PUT', `${SA}/detectors/${detectorId}`, { body })
    expect({ status: r.status, message: r.body.message }).toEqual({
      status: 400,
      message: 'Trigger [ioc] action [notify]: notification channel [no-such-channel] not found',
    })
  })
})

describe('_refresh of a source', () => {
  test("an uploaded source has nothing to fetch: a 400 with the peer's message", async () => {
    const r = await s.request('POST', `${TI}/sources/${sourceId}/_refresh`)
    expect({ status: r.status, message: r.body.message }).toEqual({
      status: 400,
      message: `Unable to refresh source config [${sourceId}] with a source type of [IOC_UPLOAD]`,
    })
  })

  test("refreshing the built-in source starts a content sync pass: it needs the Content Manager's update action too", async () => {
    const r = await s.request('POST', `${TI}/sources/svc-cti-iocs/_refresh`, { user: DANA })
    expect({ status: r.status, message: r.body.message }).toMatchObject({
      status: 403,
      message: expect.stringContaining('cluster:admin/content_manager/update/trigger'),
    })
  })
})

describe('IoC findings history', () => {
  const HISTORY = '.opensearch-sap-ioc-findings-history-'
  const indices = async () =>
    ((await s.request('GET', `/_cat/indices/${HISTORY}*?format=json&h=index&expand_wildcards=all`)).body as Array<{ index: string }>)
      .map((i) => i.index)
      .sort()
  const settings = (persistent: Record<string, unknown>) => s.request('PUT', '/_cluster/settings', { body: { persistent } })
  const total = async () => (await s.request('GET', `${TI}/findings/_search`)).body.total_findings

  test('past ioc_finding_history_max_docs the write index rolls over; reads span every history index; retention deletes the old', async () => {
    const [first, ...none] = await indices()
    expect(none).toEqual([])
    expect(first).toMatch(/^\.opensearch-sap-ioc-findings-history-\d{4}\.\d{2}\.\d{2}-1$/)
    expect(await total()).toBe(2)
    expect((await settings({ 'plugins.security_analytics.ioc_finding_history_max_docs': 1 })).status).toBe(200)
    await until(async () => (await indices()).length === 2, 'the IoC findings rollover', 15_000)
    const second = (await indices()).find((i) => i !== first)!
    expect(second).toMatch(/-2$/)
    // New findings go to the new write index; the list reads both.
    await indexEvents(s, [{ user: { name: 'bob' }, source: { ip: '203.0.113.8' } }])
    expect((await execute()).status).toBe(200)
    expect((await s.request('GET', `/${second}/_count`)).body.count).toBe(1)
    expect(await total()).toBe(3)
    // Past the retention period the old history index goes (never the write index).
    await settings({
      'plugins.security_analytics.ioc_finding_history_retention_period': '1s',
      'plugins.security_analytics.ioc_finding_history_max_docs': 1000,
    })
    await until(async () => !(await indices()).includes(first), 'the retention sweep', 15_000)
    expect(await indices()).toEqual([second])
    expect(await total()).toBe(1)
    await settings({
      'plugins.security_analytics.ioc_finding_history_retention_period': null,
      'plugins.security_analytics.ioc_finding_history_max_docs': null,
    })
  }, 40_000)
})

// Rule preview over real HTTP (`POST /_plugins/_security_analytics/rules/_preview`): a stored
// Sigma rule, the same rule inline, a correlation rule and a threat-intel match run over stored
// events in a time range, answering the matches, counts per hour and the time taken, writing
// nothing; bounded by terminate_after and timeout; bad input is a 400.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { actionRule, eventCountRule } from '../helpers/sigma-rules'
import { type AlertingServer, linuxRules, postRule, SA, startAlertingServer } from '../notifications/harness'
import { EVENTS } from './harness'

const PREVIEW = `${SA}/rules/_preview`
const FAILED = actionRule({ title: 'Failed login', name: 'failed_login_preview', action: 'login_failed' })
const BURST = eventCountRule({ title: 'Login failure burst', name: 'login_burst_preview', rules: ['failed_login_preview'], threshold: 3 })
const HOUR = 3_600_000
let s: AlertingServer
let ruleId: string
let burstId: string
// Whole hours, so the per-hour counts are known.
const base = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR
const at = (offset: number) => new Date(base + offset).toISOString()
const login = (user: string, offset: number, ip = '10.0.0.1') => ({
  '@timestamp': at(offset),
  event: { action: 'login_failed' },
  user: { name: user },
  source: { ip },
})

beforeAll(async () => {
  s = await startAlertingServer()
  await linuxRules(s, [])
  ruleId = await postRule(s, FAILED)
  burstId = await postRule(s, BURST)
  const events = [
    // Hour 0: three of alice's within 10 minutes (a burst), one of bob's.
    login('alice', 60_000),
    login('alice', 120_000),
    login('alice', 180_000),
    login('bob', 240_000, '203.0.113.50'),
    // Hour 1: one more.
    login('alice', HOUR + 60_000),
    // Hour 2: not a failure, from a listed address.
    { '@timestamp': at(2 * HOUR + 60_000), event: { action: 'login' }, user: { name: 'carol' }, source: { ip: '203.0.113.50' } },
    // Ten days back: outside the range previewed.
    login('alice', -10 * 24 * HOUR),
  ]
  const r = await s.deps.store.bulk({ body: events.flatMap((e) => [{ create: { _index: EVENTS } }, e]), refresh: true })
  expect(r.errors).toBe(false)
  const source = await s.request('POST', `${SA}/threat_intel/sources`, {
    body: {
      name: 'preview-feed',
      type: 'IOC_UPLOAD',
      source: { ioc_upload: { file_name: 'f', iocs: [{ type: 'ipv4-addr', value: '203.0.113.50' }] } },
    },
  })
  expect(source.status).toBe(201)
}, 60_000)
afterAll(async () => {
  await s?.stop()
})

const run = (body: Record<string, unknown>, user?: string) => s.request('POST', PREVIEW, { body, ...(user ? { user } : {}) })
const range = { indices: [EVENTS], start_time: 'now-1d' }
const hours = (r: any) => r.body.per_hour.map((h: any) => [h.key - base, h.doc_count])

describe('rule preview', () => {
  test('a stored Sigma rule: its matches in the range, counts per hour, the time taken; nothing written', async () => {
    const r = await run({ ...range, rule_id: ruleId, size: 2 })
    expect(r.status).toBe(200)
    expect(r.body).toMatchObject({ timed_out: false, terminated_early: false, events_scanned: 6, total_matches: 5 })
    expect(typeof r.body.took).toBe('number')
    expect(r.body.matches.length).toBe(2)
    expect(r.body.matches[0]).toMatchObject({
      _index: expect.any(String),
      _id: expect.any(String),
      '@timestamp': at(60_000),
      rule: { id: ruleId, title: 'Failed login' },
    })
    expect(hours(r)).toEqual([
      [0, 4],
      [HOUR, 1],
    ])
    expect(r.body.per_hour[0].key_as_string).toBe(at(0))
    // Ten days back it is found too, when the range says so.
    expect((await run({ ...range, start_time: 'now-30d', rule_id: ruleId })).body.total_matches).toBe(6)
    // An explicit end: only hour 0.
    expect((await run({ ...range, start_time: base, end_time: at(HOUR - 1), rule_id: ruleId })).body.total_matches).toBe(4)
    const findings = await s.request('GET', `${SA}/findings/_search?detectorType=linux`)
    expect(findings.body.total_findings ?? 0).toBe(0)
  })

  test('the same rule inline (with its log type) answers the same', async () => {
    const r = await run({ ...range, rule: FAILED, log_type: 'linux' })
    expect(r.status).toBe(200)
    expect(r.body.total_matches).toBe(5)
    expect(r.body.matches[0].rule.title).toBe('Failed login')
  })

  test('a correlation rule: each firing is a match; windows are not kept', async () => {
    const r = await run({ ...range, rule_id: burstId })
    expect(r.status).toBe(200)
    expect(r.body.total_matches).toBe(1)
    expect(r.body.matches[0]).toMatchObject({ rule: { id: burstId, title: 'Login failure burst' } })
    // Run again: the same answer (nothing from the first run was kept).
    expect((await run({ ...range, rule_id: burstId })).body.total_matches).toBe(1)
    expect((await run({ ...range, rule: BURST })).body.total_matches).toBe(1)
  })

  test('a threat-intel match against the node’s IoCs', async () => {
    const r = await run({ ...range, threat_intel: { ioc_fields: [{ ioc: 'ip', fields: ['source.ip'] }] } })
    expect(r.status).toBe(200)
    expect(r.body.total_matches).toBe(2)
    expect(r.body.matches[0].ioc).toMatchObject({ type: 'ipv4-addr', value: '203.0.113.50', field: 'source.ip' })
    expect(hours(r)).toEqual([
      [0, 1],
      [2 * HOUR, 1],
    ])
    const findings = await s.request('GET', `${SA}/threat_intel/findings/_search`)
    expect(findings.body.total_findings).toBe(0)
  })

  test('bounded: terminate_after stops the scan early; the settings cap size', async () => {
    const r = await run({ ...range, rule_id: ruleId, terminate_after: 2 })
    expect(r.body).toMatchObject({ terminated_early: true, events_scanned: 2, total_matches: 2 })
    const capped = await run({ ...range, rule_id: ruleId, size: 5000 })
    expect(capped.status).toBe(400)
    expect(capped.body.message).toContain('plugins.security_analytics.preview.max_size')
  })

  test('a caller under document-level security previews only the events it may read', async () => {
    const r = await s.request('POST', PREVIEW, { body: { ...range, rule_id: ruleId }, user: 'dana' })
    expect({ status: r.status, total: r.body.total_matches }).toEqual({ status: 200, total: 1 })
    const doc = await s.deps.store.get({ index: r.body.matches[0]._index, id: r.body.matches[0]._id })
    expect((doc as any)._source.user.name).toBe('bob')
  })

  test('bad input is a 400; an unknown rule a 404; a caller without the action a 403', async () => {
    const bad = [
      { ...range },
      { ...range, rule_id: ruleId, rule: FAILED },
      { ...range, rule: FAILED },
      { ...range, rule: 'title: [unclosed', log_type: 'linux' },
      { ...range, rule: 'title: x\ndetection:\n  condition: nope\n', log_type: 'linux' },
      { ...range, rule_id: ruleId, start_time: 'yesterday-ish' },
      { ...range, rule_id: ruleId, end_time: 'now-2d' },
      { ...range, rule_id: ruleId, start_time: 'now-100y' },
      { ...range, rule_id: ruleId, timeout: 'soon' },
      { ...range, rule_id: ruleId, indices: [] },
      { ...range, rule_id: ruleId, extra: 1 },
      { ...range, threat_intel: {} },
    ]
    for (const body of bad) {
      const r = await run(body)
      expect({ body, status: r.status }).toEqual({ body, status: 400 })
    }
    expect((await s.request('POST', PREVIEW, { body: 'nope' })).status).toBe(400)
    expect((await run({ ...range, rule_id: 'no-such-rule' })).status).toBe(404)
    expect((await run({ ...range, rule_id: ruleId }, 'nobody')).status).toBe(403)
  })
})

import { describe, expect, test } from 'bun:test'
import { buildFinding, interpolate, type FindingInput } from '../../../src/ruleset/findings/writer'

const event = {
  _id: 'ev-1',
  _index: '.ds-svc-events-v5-security-000001',
  _source: {
    '@timestamp': '2026-09-10T13:54:15.906Z',
    agent: { id: '001', name: 'web-prod-01' },
    event: { action: 'login_failed', kind: 'event' },
    source: { ip: '10.0.0.1' },
    user: { name: 'root' },
    svc: { integration: { name: 'linux', category: 'security' } },
  },
}

const input: FindingInput = {
  event,
  rule: {
    id: '85bba177',
    sigma_id: '85bba177-s',
    title: 'SSH failed password for {{ user.name }} from {{source.ip}}',
    tags: ['attack.credential-access', 'host.{{ agent.name }}'],
    level: 'medium',
    status: 'stable',
    mitre: { tactic: { id: ['TA0006'], name: ['Credential Access'] } },
  },
  detector: { id: 'det-1', type: 'linux' },
}

describe('buildFinding (reference 4.6)', () => {
  test("copies the event, stamps event.doc_id/index, keeps the event's @timestamp", () => {
    const doc = buildFinding(input, () => 0) as any
    expect(doc['@timestamp']).toBe('2026-09-10T13:54:15.906Z')
    expect(doc.agent).toEqual(event._source.agent)
    expect(doc.source).toEqual({ ip: '10.0.0.1' })
    expect(doc.event).toEqual({ action: 'login_failed', kind: 'event', doc_id: 'ev-1', index: '.ds-svc-events-v5-security-000001' })
    expect(doc.svc.integration).toEqual({ name: 'linux', category: 'security' })
    expect(doc.svc.case).toBeUndefined()
  })

  test('svc.rule carries the metadata, the tags lead with level and log type, placeholders resolve', () => {
    const doc = buildFinding(input) as any
    expect(doc.svc.rule).toEqual({
      id: '85bba177',
      sigma_id: '85bba177-s',
      title: 'SSH failed password for root from 10.0.0.1',
      tags: ['medium', 'linux', 'attack.credential-access', 'host.web-prod-01'],
      level: 'medium',
      status: 'stable',
      mitre: { tactic: { id: ['TA0006'], name: ['Credential Access'] } },
    })
    expect(doc.svc.detector).toEqual({ id: 'det-1', type: 'linux' })
  })

  test('the event object given is not modified', () => {
    const before = structuredClone(event)
    buildFinding(input)
    expect(event).toEqual(before)
  })

  test('an event without @timestamp gets the detection time; a case on the event is not copied', () => {
    const doc = buildFinding({ ...input, event: { ...event, _source: { svc: { case: { status: 'active' } }, message: 'x' } } }, () =>
      Date.UTC(2026, 0, 2),
    ) as any
    expect(doc['@timestamp']).toBe('2026-01-02T00:00:00.000Z')
    expect(doc.svc.case).toBeUndefined()
    expect(doc.event).toEqual({ doc_id: 'ev-1', index: event._index })
  })
})

describe('interpolate', () => {
  test('dotted paths and flat dotted keys resolve; missing or object fields stay as written', () => {
    const ev = { 'host.name': 'flat', a: { b: 2 }, obj: { x: 1 } }
    expect(interpolate('{{host.name}}-{{ a.b }}', ev)).toBe('flat-2')
    expect(interpolate('{{ nope.x }} {{obj}}', ev)).toBe('{{ nope.x }} {{obj}}')
  })
})

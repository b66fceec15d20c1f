// The event schema (reference `schema/*.tsv`): the event streams type every schema field through
// dynamic templates under `strict_allow_templates`; a rule on a schema field no event has carried
// yet is evaluated with the schema's type and matches the first event that carries it; a user's
// own index without a mapping for a rule's field is refused at detector creation, and a
// `text`-mapped field is queried as OpenSearch queries it (tokens).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ctiRule, detectorBody, EVENTS, LINUX, type RulesetServer, startRulesetServer, linuxDetector } from './harness'

const BASE = '/_plugins/_security_analytics'

describe('event schema', () => {
  let s: RulesetServer
  const mappingOf = async (stream: string) => {
    const [backing] = await s.deps.store.resolve(stream)
    return (await s.deps.store.getMapping({ index: backing }))[backing].mappings as any
  }

  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
  })
  afterAll(async () => {
    await s.stop()
  })

  test('the event streams carry the schema as dynamic templates under strict_allow_templates', async () => {
    const m = await mappingOf(EVENTS)
    expect(m.dynamic).toBe('strict_allow_templates')
    expect(m.dynamic_templates.length).toBeGreaterThan(2288)
    expect(m.properties.message).toEqual({ type: 'keyword', ignore_above: 1024 })
    // Not carried yet: no mapping for it.
    expect(m.properties.process).toBeUndefined()
    const r = await s.deps.store.bulk({
      body: [
        { create: { _index: EVENTS } },
        { '@timestamp': '2026-09-10T12:00:00Z', process: { thread: { name: 'Worker-1' }, pid: 7 }, container: { cpu: { usage: 0.5 } } },
        { create: { _index: EVENTS } },
        { '@timestamp': '2026-09-10T12:00:00Z', NotInTheSchema: 'x' },
      ],
      refresh: true,
    })
    expect(r.items[0].create!.status).toBe(201)
    expect(r.items[1].create!.status).toBe(400)
    expect(r.items[1].create!.error!.type).toBe('strict_dynamic_mapping_exception')
    const after = await mappingOf(EVENTS)
    expect(after.properties.process.properties.thread.properties.name).toEqual({ type: 'keyword', ignore_above: 1024 })
    expect(after.properties.process.properties.pid.type).toBe('long')
    expect(after.properties.container.properties.cpu.properties.usage).toEqual({ type: 'scaled_float', scaling_factor: 1000 })
  })

  test("the schema's types hold values as OpenSearch's do (byte, short, float, geo_point, flat_object)", async () => {
    const r = await s.deps.store.bulk({
      body: [
        { create: { _index: EVENTS } },
        {
          '@timestamp': '2026-09-10T12:00:00Z',
          svc: { protocol: { queue: 12 } },
          threat: { indicator: { confidence: 30000 } },
          event: { risk_score: 7.5 },
          client: { geo: { location: { lat: 41.1, lon: 2.2 } } },
          log: { syslog: { structured_data: { origin: { ip: '10.0.0.1' }, meta: { sequenceId: '7' } } } },
        },
        { create: { _index: EVENTS } },
        { '@timestamp': '2026-09-10T12:00:00Z', svc: { protocol: { queue: 300 } } },
      ],
      refresh: true,
    })
    expect(r.items[0].create!.status).toBe(201)
    expect(r.items[1].create!.status).toBe(400)
    expect((r.items[1].create!.error!.caused_by as { reason: string }).reason).toContain('out of range for a byte')
    const m = await mappingOf(EVENTS)
    expect(m.properties.client.properties.geo.properties.location.type).toBe('geo_point')
    expect(m.properties.log.properties.syslog.properties.structured_data.type).toBe('flat_object')
    expect(m.properties.threat.properties.indicator.properties.confidence.type).toBe('short')
    expect(m.properties.event.properties.risk_score.type).toBe('float')
  })

  test('findings, unclassified and raw streams carry their tables with their types', async () => {
    const f = await mappingOf('svc-findings-v5-security')
    expect(f.properties.svc.properties.rule.properties.mitre.properties.tactic.properties.id.type).toBe('keyword')
    expect(f.properties.client.properties.geo.properties.location.type).toBe('geo_point')
    expect(f.properties.process.properties.thread.properties.name.type).toBe('keyword')
    const u = await mappingOf('svc-events-v5-unclassified')
    expect(u.properties.event.properties.original).toEqual({ type: 'keyword', doc_values: false, index: false })
    const raw = await mappingOf('svc-events-raw-v5')
    expect(raw.properties['@timestamp'].type).toBe('date')
  })

  test('a rule on a schema field no event has carried yet matches the first event that carries it', async () => {
    const m = await mappingOf(EVENTS)
    expect(m.properties.process?.properties?.thread?.properties?.capabilities).toBeUndefined()
    const rule = ctiRule('r-cap', { sel: { 'process.thread.capabilities.effective|endswith': '_ADMIN' }, condition: 'sel' })
    await s.ruleset.sync.upsertRule('standard', rule, LINUX.id, false)
    // logtest / rules/evaluate, with the stream as source: typed by its template, so `endswith` works.
    const ev = await s.ruleset.evaluate({
      normalizedEvent: JSON.stringify({ process: { thread: { capabilities: { effective: 'cap_sys_admin' } } } }),
      rulesBodies: [JSON.stringify(rule)],
      integrationId: LINUX.id,
      logType: 'linux',
      sourceIndices: [EVENTS],
    })
    expect(ev.rules_matched).toBe(1)
    // A detector run over the first events that carry it.
    await linuxDetector(s, ['r-cap'])
    const [hit] = await s.index([
      { '@timestamp': new Date().toISOString(), process: { thread: { capabilities: { effective: ['CAP_SYS_ADMIN', 'CAP_KILL'] } } } },
      { '@timestamp': new Date().toISOString(), process: { thread: { capabilities: { effective: 'CAP_ADMIN_LIKE' } } } },
    ])
    expect(await s.ruleset.scheduler.runLeased(LINUX.id)).toMatchObject({ status: 'ran', documents: 2, findings: 1 })
    expect((await s.findings()).map((f) => f._source.event.doc_id)).toEqual([hit._id])
  })

  test("a user index without a mapping (or a template) for a rule's field is refused at detector creation", async () => {
    await s.ruleset.sync.upsertRule(
      'custom',
      ctiRule('cus-thread', { sel: { 'process.thread.name|endswith': 'worker' }, condition: 'sel' }),
      LINUX.id,
      false,
    )
    await s.deps.store.createIndex({ index: 'svc-events-v5-bare', body: { mappings: { properties: { message: { type: 'keyword' } } } } })
    const refused = await s.request('POST', `${BASE}/detectors`, {
      body: detectorBody({ custom: ['cus-thread'], indices: ['svc-events-v5-bare'] }),
    })
    expect(refused.status).toBe(400)
    expect(refused.body.message).toContain('Index [svc-events-v5-bare] has no mapping for the fields [process.thread.name]')

    await s.deps.store.createIndex({
      index: 'svc-events-v5-templated',
      body: { mappings: { dynamic_templates: [{ strings: { match_mapping_type: 'string', mapping: { type: 'keyword' } } }] } },
    })
    const ok = await s.request('POST', `${BASE}/detectors`, {
      body: detectorBody({ custom: ['cus-thread'], indices: ['svc-events-v5-templated'] }),
    })
    expect(ok.status).toBe(201)
  })

  test('a text-mapped field of a user index is queried as OpenSearch queries it: by its tokens', async () => {
    await s.deps.store.createIndex({
      index: 'svc-events-v5-texty',
      body: { mappings: { properties: { process: { properties: { thread: { properties: { name: { type: 'text' } } } } } } } },
    })
    const ok = await s.request('POST', `${BASE}/detectors`, {
      body: detectorBody({ custom: ['cus-thread'], indices: ['svc-events-v5-texty'] }),
    })
    expect(ok.status).toBe(201)
    const ev = (name: string) =>
      s.ruleset.evaluate({
        normalizedEvent: JSON.stringify({ process: { thread: { name } } }),
        rulesBodies: ['title: t\ndetection:\n  sel:\n    process.thread.name|endswith: worker\n  condition: sel\n'],
        integrationId: LINUX.id,
        logType: 'linux',
        sourceIndices: ['svc-events-v5-texty'],
      })
    // `*worker` against the tokens of "pool worker": the token `worker` matches; "poolworker.x" is one token that does not end so.
    expect((await ev('pool worker')).rules_matched).toBe(1)
    expect((await ev('poolworker.x')).rules_matched).toBe(0)
  })
})

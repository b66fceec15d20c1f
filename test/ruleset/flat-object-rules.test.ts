// Sigma rules on paths below a flat_object field of the event schema (`process.pe.imports` is a
// flat_object): a detector is accepted over the events stream before any event carried the field,
// events sent through the index API over HTTP are matched by the leaf at that exact path (not by
// the same value under another path), the monitor's `_execute` writes the finding, and
// `rules/evaluate` (logtest) agrees.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ctiRule, detectorBody, EVENTS, LINUX, type RulesetServer, startRulesetServer } from './harness'

const BASE = '/_plugins/_security_analytics'
const RULE = ctiRule('r-imports', { sel: { 'process.pe.imports.name': 'CreateRemoteThread' }, condition: 'sel' })

describe('Sigma rules on flat_object paths', () => {
  let s: RulesetServer
  let monitorId: string

  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
    await s.ruleset.sync.upsertRule('custom', RULE, LINUX.id, false)
  })
  afterAll(async () => {
    await s.stop()
  })

  test('a detector on a path below a flat_object is accepted before any event carried it', async () => {
    const r = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: ['r-imports'], interval: 60 }) })
    expect(r.status).toBe(201)
    monitorId = r.body.detector.monitor_id[0]
  })

  test('events indexed over HTTP match by the leaf at that path; _execute writes the finding', async () => {
    const send = async (event: Record<string, unknown>) => {
      const r = await s.request('POST', `/${EVENTS}/_doc?refresh=true`, { body: { '@timestamp': new Date().toISOString(), ...event } })
      expect(r.status).toBe(201)
      return r.body as { _id: string; _index: string }
    }
    const hit = await send({ process: { pe: { imports: [{ name: 'CreateRemoteThread', library: 'kernel32.dll' }] } } })
    // The same value under another path of the flat_object, and another value at the path.
    await send({ process: { pe: { imports: { library: 'CreateRemoteThread' } } } })
    await send({ process: { pe: { imports: { name: 'VirtualAlloc' } } } })

    // The mapping holds the root only.
    const [backing] = await s.deps.store.resolve(EVENTS)
    const m = (await s.deps.store.getMapping({ index: backing }))[backing].mappings as any
    expect(m.properties.process.properties.pe.properties.imports).toEqual({ type: 'flat_object' })
    // The index API answers the same question.
    const found = await s.request('POST', `/${EVENTS}/_search`, {
      body: { query: { term: { 'process.pe.imports.name': 'CreateRemoteThread' } } },
    })
    expect(found.body.hits.hits.map((h: any) => h._id)).toEqual([hit._id])

    const r = await s.request('POST', `/_plugins/_alerting/monitors/${monitorId}/_execute`)
    expect(r.status).toBe(200)
    expect(r.body.input_results).toEqual({ results: [{ 'r-imports': [`${hit._id}|${hit._index}`] }], error: null })
    expect((await s.findings()).map((f) => f._source.event.doc_id)).toEqual([hit._id])
  })

  test('rules/evaluate over the events stream matches the same events', async () => {
    const evaluate = (event: Record<string, unknown>) =>
      s.ruleset.evaluate({
        normalizedEvent: JSON.stringify(event),
        rulesBodies: [JSON.stringify(RULE)],
        integrationId: LINUX.id,
        logType: 'linux',
        sourceIndices: [EVENTS],
      })
    expect((await evaluate({ process: { pe: { imports: { name: 'createremotethread' } } } })).rules_matched).toBe(1)
    expect((await evaluate({ process: { pe: { imports: [{ name: 'X' }, { name: 'CreateRemoteThread' }] } } })).rules_matched).toBe(1)
    expect((await evaluate({ process: { pe: { imports: { library: 'CreateRemoteThread' } } } })).rules_matched).toBe(0)
  })
})

import { afterEach, describe, expect, test } from 'bun:test'
import { payloads } from '../../fixtures/cti/server'
import { ALIAS, RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness } from './harness'

let h: SyncHarness
afterEach(async () => {
  await h?.stop()
})

describe('snapshot initialisation', () => {
  test('a fresh ruleset consumer loads the remote snapshot, then the changes after it', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    const snapshotOffset = c.lastOffset
    c.update('rule-1', [{ op: 'replace', path: '/document/level', value: 'high' }])
    const report = await h.sync.run('test')
    if (typeof report === 'string') throw new Error(report)
    expect(report.consumers.ruleset).toMatchObject({ status: 'ready', updated: true, loadedFrom: 'remote' })
    const state = await h.state('ruleset')
    expect(state).toMatchObject({
      status: 'ready',
      local_offset: c.lastOffset,
      remote_offset: c.lastOffset,
      name: 'public-ruleset-5',
      context: 't1-ruleset-5',
    })
    expect(state!.resource).toBe(c.url)
    const rules = await h.docs(ALIAS.rules)
    expect([...rules.keys()].sort()).toEqual(['rule-1', 'rule-2', 'rule-3'])
    expect(rules.get('rule-1').document.level).toBe('high')
    expect(rules.get('rule-1').offset).toBe(snapshotOffset + 1)
    expect(rules.get('rule-2').space.name).toBe('standard')
    expect(rules.get('rule-2').hash.sha256).toMatch(/^[0-9a-f]{64}$/)
    // Root-level metadata moved into `metadata`, as reference 2.5 processes synced documents.
    expect(rules.get('rule-2').document.metadata.title).toBe('Rule rule-2')
    expect(rules.get('rule-2').document.title).toBeUndefined()
    const decoders = await h.docs(ALIAS.decoders)
    expect(decoders.get('decoder-1').yaml).toContain('name: decoder/decoder-1/0')
    // The snapshot was fetched once and the changes after it once: from the snapshot offset.
    const changeCalls = h.cti.requestsTo(/\/changes$/)
    expect(changeCalls.map((r) => r.query.from_offset)).toEqual([String(snapshotOffset)])
  })
})

describe('a generated feed (the fixture streams it, nothing held per document)', () => {
  test('20,000 IoCs streamed as a snapshot plus 1,500 generated changes load completely', async () => {
    h = await startSyncHarness({
      node: (cti) => ({ 'plugins.content_manager.catalog.iocs': cti.consumer('t1-iocs-5', 'public-iocs-5').url }),
    })
    const c = h.cti.consumer('t1-iocs-5', 'public-iocs-5')
    const N = 20_000
    c.generate({
      snapshot: N,
      linesPerEntry: 7_000,
      document: (i) => ({ resource: String(i), payload: payloads.ioc(String(i), { confidence: i % 100 }) }),
      changes: 1_500,
      change: (o) =>
        o % 3 === 0
          ? { type: 'delete', resource: String(o - N) }
          : { type: 'update', resource: String(o - N), operations: [{ op: 'replace', path: '/document/confidence', value: 1 }] },
    })
    const r = await h.sync.run('test')
    if (typeof r === 'string') throw new Error(r)
    expect(r.consumers.iocs).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    const count = await h.store.count({
      index: ALIAS.enrichments,
      body: { query: { bool: { must_not: { ids: { values: ['__ioc_type_hashes__'] } } } } },
    })
    expect(count.count).toBe(N - 500)
    const offsets = Array.from({ length: 1_500 }, (_, k) => N + 1 + k)
    const updated = String(offsets.find((o) => o % 3 !== 0)! - N)
    const deleted = String(offsets.find((o) => o % 3 === 0)! - N)
    const doc = (await h.store.get({ index: ALIAS.enrichments, id: updated })) as { _source?: any }
    expect(doc._source.document.confidence).toBe(1)
    expect((await h.store.get({ index: ALIAS.enrichments, id: deleted })).found).toBe(false)
    expect(await h.state('iocs')).toMatchObject({ status: 'ready', local_offset: N + 1_500 })
  }, 60_000)
})

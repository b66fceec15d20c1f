import { afterEach, describe, expect, test } from 'bun:test'
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

// Incremental sync: create/update/delete changes, checkpoints per window, resuming after a 429
// that outlived its retries and after a crash, and the 429 waiting policy.
import { afterEach, describe, expect, test } from 'bun:test'
import { StoreError } from '../../../src/store/errors'
import { payloads } from '../../fixtures/cti/server'
import { faultyStore, type FaultyStore } from '../../fixtures/faulty-store'
import { ALIAS, RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness, runPass } from './harness'

let h: SyncHarness
afterEach(async () => {
  await h?.stop()
})

const WINDOW = { 'plugins.content_manager.max_items_per_bulk': 10 }

const pass = (sync = h.sync) => runPass(sync)

/** 32 changes after the snapshot: appends to rule-1's tags (not idempotent if replayed), new rules, updates, deletes. */
function feedChanges(c: ReturnType<typeof seedRuleset>) {
  c.update('rule-1', [{ op: 'add', path: '/document/tags', value: [] }])
  for (let i = 0; i < 30; i++) {
    if (i % 3 === 0) c.update('rule-1', [{ op: 'add', path: '/document/tags/-', value: `t${i}` }])
    else if (i % 3 === 1) c.create(`rule-x${i}`, payloads.rule(`rule-x${i}`, { level: 'medium' }))
    else c.update(`rule-x${i - 1}`, [{ op: 'replace', path: '/document/level', value: `level-${i}` }])
  }
  c.delete('rule-x1')
}

function expectMatchesFeed(rules: Map<string, any>, c: ReturnType<typeof seedRuleset>) {
  const expected = [...c.state.entries()].filter(([, v]) => v.payload.type === 'rule')
  expect([...rules.keys()].sort()).toEqual(expected.map(([k]) => k).sort())
  for (const [id, { payload, offset }] of expected) {
    const doc = payload.document as any
    expect(rules.get(id).document.level).toBe(doc.level)
    expect(rules.get(id).document.tags ?? null).toEqual(doc.tags ?? null)
    expect(rules.get(id).offset).toBe(offset)
  }
}

describe('change feed', () => {
  test('create, update (JSON patch on the envelope) and delete are applied; hash and YAML follow the document', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    const c = seedRuleset(h.cti)
    c.update('rule-1', [{ op: 'add', path: '/document/tags', value: ['a'] }])
    c.publishSnapshot()
    await pass()
    const before = await h.docs(ALIAS.rules)
    const decoderBefore = (await h.docs(ALIAS.decoders)).get('decoder-1')

    c.create('rule-4', payloads.rule('rule-4', { sigma_id: 'x', related: [{ sigma_id: 'abc', type: 'derived' }] }))
    c.update('rule-1', [{ op: 'add', path: '/document/tags/-', value: 'b' }])
    c.update('decoder-1', [{ op: 'replace', path: '/document/name', value: 'decoder/renamed/0' }])
    c.delete('rule-3')
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready', updated: true })
    const rules = await h.docs(ALIAS.rules)
    expect([...rules.keys()].sort()).toEqual(['rule-1', 'rule-2', 'rule-4'])
    expect(rules.get('rule-1').document.tags).toEqual(['a', 'b'])
    expect(rules.get('rule-1').hash.sha256).not.toBe(before.get('rule-1').hash.sha256)
    expect(rules.get('rule-2').hash.sha256).toBe(before.get('rule-2').hash.sha256)
    expect(rules.get('rule-4').document.related).toEqual([{ id: 'abc', type: 'derived' }])
    const decoder = (await h.docs(ALIAS.decoders)).get('decoder-1')
    expect(decoder.yaml).toContain('decoder/renamed/0')
    expect(decoder.hash.sha256).not.toBe(decoderBefore.hash.sha256)
    expect(decoder.offset).toBe(c.lastOffset - 1)
    expect(await h.state('ruleset')).toMatchObject({ status: 'ready', local_offset: c.lastOffset, remote_offset: c.lastOffset })
  })

  test('a pass with nothing new makes no change request and changes nothing', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    await pass()
    h.cti.clear()
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ updated: false, status: 'ready' })
    expect(h.cti.requestsTo(/\/changes$/)).toHaveLength(0)
    expect(h.cti.requestsTo(/\.zip$/)).toHaveLength(0)
  })

  test('windows of max_items_per_bulk offsets, a checkpoint after each; a 429 that outlives its retries defers the pass and the next one resumes there', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), ...WINDOW }) })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    const base = c.lastOffset
    await pass()
    feedChanges(c)
    // The third window is refused 4 times (first try + 3 retries), Retry-After 0 each time.
    h.cti.inject({ path: /\/changes$/, status: 429, retryAfter: '0', after: 2, times: 4 })
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'failed', deferred: true })
    expect(r.retried).toBe(false)
    expect(h.waits).toEqual([0, 0, 0])
    expect(await h.state('ruleset')).toMatchObject({ status: 'failed', local_offset: base + 20 })

    h.cti.clear()
    const again = await pass()
    expect(again.consumers.ruleset).toMatchObject({ status: 'ready', updated: true })
    const windows = h.cti.requestsTo(/\/changes$/).map((q) => [Number(q.query.from_offset), Number(q.query.to_offset)])
    expect(windows).toEqual([
      [base + 20, base + 30],
      [base + 30, c.lastOffset],
    ])
    expectMatchesFeed(await h.docs(ALIAS.rules), c)
    expect(await h.state('ruleset')).toMatchObject({ status: 'ready', local_offset: c.lastOffset })
  })

  test('after a crash mid-window the restarted process resumes from the last checkpoint without loss or duplication', async () => {
    let faulty!: FaultyStore
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), ...WINDOW }), wrapStore: (s) => (faulty = faultyStore(s)) })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    const base = c.lastOffset
    await pass()
    feedChanges(c)
    // The process "dies" at the 15th write after this point: that write and every later one fail,
    // checkpoints and status updates included.
    faulty.arm({
      failAt: Array.from({ length: 500 }, (_, i) => i + 15),
      error: () => new StoreError('node_closed_exception', 500, 'process killed'),
    })
    await pass()
    faulty.disarm()
    const crashed = await h.state('ruleset')
    expect(crashed!.status).toBe('running') // never recorded `failed`: the process was gone
    expect(crashed!.local_offset).toBe(base + 10)

    await h.sync.stop()
    h.sync = h.newSync()
    // The dead process's sync lock is still there: the new one waits until it is stale.
    expect(await h.sync.run('test')).toBe('locked')
    h.advance(31_000)
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready' })
    expectMatchesFeed(await h.docs(ALIAS.rules), c)
    expect((await h.docs(ALIAS.rules)).get('rule-1').document.tags).toEqual([
      't0',
      't3',
      't6',
      't9',
      't12',
      't15',
      't18',
      't21',
      't24',
      't27',
    ])
  })
})

describe('rate limiting (spec background 5)', () => {
  test('without Retry-After the client waits base * 2^n seconds; a usable Retry-After wins', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), 'plugins.content_manager.client.max_retries': 4 }) })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    h.cti.inject({ path: /consumers\/public-ruleset-5$/, status: 429, times: 2 })
    h.cti.inject({ path: /consumers\/public-ruleset-5$/, status: 429, retryAfter: '7' })
    h.cti.inject({ path: /consumers\/public-ruleset-5$/, status: 429, retryAfter: 'soon' })
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready', updated: true })
    // 30 s, 60 s (backoff), 7 s (header), then an unusable header falls back to 240 s.
    expect(h.waits).toEqual([30_000, 60_000, 7_000, 240_000])
    const calls = h.cti.requestsTo(/consumers\/public-ruleset-5$/)
    expect(calls.length).toBe(5)
  })

  test('max_retries 0 surfaces the first 429', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), 'plugins.content_manager.client.max_retries': 0 }) })
    seedRuleset(h.cti).publishSnapshot()
    h.cti.inject({ path: /consumers\/public-ruleset-5$/, status: 429, retryAfter: '1' })
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'failed', deferred: true })
    expect(h.waits).toEqual([])
  })
})

describe('CTI request headers (spec background 10)', () => {
  test('every catalog request carries the User-Agent and Accept-Encoding: gzip, and gzip answers are read', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    seedRuleset(h.cti).publishSnapshot()
    await pass()
    expect(h.cti.requests.length).toBeGreaterThan(1)
    for (const r of h.cti.requests) {
      expect(r.headers['user-agent']).toBe('svc Indexer 5.0.0')
      expect(r.headers['accept-encoding']).toContain('gzip')
    }
  })
})

describe('single-index consumers apply a window at once', () => {
  const IOC_FEED = (cti: import('../../fixtures/cti/server').CtiServer) => ({
    'plugins.content_manager.catalog.iocs': cti.consumer('t1-iocs-5', 'public-iocs-5').url,
    ...WINDOW,
  })
  function iocFeed() {
    const c = h.cti.consumer('t1-iocs-5', 'public-iocs-5')
    for (let n = 1; n <= 12; n++) c.create(String(n), payloads.ioc(String(n)))
    c.publishSnapshot()
    return c
  }
  /** Changes whose later ones depend on earlier ones of the same window. */
  function entangled(c: ReturnType<typeof iocFeed>) {
    c.create('new-1', payloads.ioc('new-1'))
    c.update('new-1', [{ op: 'replace', path: '/document/confidence', value: 1 }])
    c.update('3', [{ op: 'replace', path: '/document/confidence', value: 2 }])
    c.update('3', [{ op: 'replace', path: '/document/tags', value: ['x'] }])
    c.delete('5')
    c.create('5', payloads.ioc('5', { confidence: 55 }))
    c.delete('6')
    c.update('new-1', [{ op: 'replace', path: '/document/tags', value: ['y'] }])
    for (let n = 2; n <= 14; n++) c.create(`new-${n}`, payloads.ioc(`new-${n}`))
    c.delete('new-14')
  }
  function expectIocsMatchFeed(docs: Map<string, any>, c: ReturnType<typeof iocFeed>) {
    const expected = [...c.state.entries()]
    expect([...docs.keys()].filter((k) => k !== '__ioc_type_hashes__').sort()).toEqual(expected.map(([k]) => k).sort())
    for (const [id, { payload, offset }] of expected) {
      const doc = payload.document as any
      expect(docs.get(id).document.confidence).toBe(doc.confidence)
      expect(docs.get(id).document.tags).toEqual(doc.tags)
      expect(docs.get(id).offset).toBe(offset)
    }
  }

  test('creates, updates of documents created or changed earlier in the window, deletes and re-creates end as the feed says', async () => {
    h = await startSyncHarness({ node: IOC_FEED })
    const c = iocFeed()
    await pass()
    entangled(c)
    const r = await pass()
    expect(r.consumers.iocs).toMatchObject({ status: 'ready', updated: true })
    expectIocsMatchFeed(await h.docs(ALIAS.enrichments), c)
  })

  test('a crash in the middle of a window bulk: the restarted process replays the window to the same result', async () => {
    let faulty!: FaultyStore
    h = await startSyncHarness({ node: IOC_FEED, wrapStore: (s) => (faulty = faultyStore(s)) })
    const c = iocFeed()
    await pass()
    const base = c.lastOffset
    entangled(c)
    // The second window's bulk half applies, then the process "dies" (the lost answer, twice so the retry fails too).
    // Window 1 writes 6 documents (positions 1-6), window 2 ten (7-16), its replay in the retry 17-26.
    faulty.arm({
      failAt: [14, 24],
      match: (m) => m.index.startsWith(ALIAS.enrichments),
      bulk: 'lost-response',
      error: () => new StoreError('mapper_parsing_exception', 400, 'lost'),
    })
    const r = await pass()
    faulty.disarm()
    expect(r.consumers.iocs).toMatchObject({ status: 'failed' })
    expect((await h.state('iocs'))!.local_offset).toBe(base + 10)
    const restarted = h.newSync()
    expect((await pass(restarted)).consumers.iocs).toMatchObject({ status: 'ready' })
    expectIocsMatchFeed(await h.docs(ALIAS.enrichments), c)
  })
})

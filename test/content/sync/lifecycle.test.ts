// Snapshot sources and fallbacks, IoC and vulnerability consumers, Ruleset Management sync with
// pending_sync_phases, the Engine load after the standard hash changes, and the blue/green swap.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createEngineClient } from '../../../src/content/engine'
import { createContentManager } from '../../../src/content/manager'
import { securityFor, tempDirs } from '../../security/helpers'
import { CONTENT_ALIASES } from '../../../src/setup/indices'
import { StoreError } from '../../../src/store/errors'
import { silentLogger } from '../../../src/http/log'
import { startEngineServer, type EngineServer } from '../../fixtures/engine/server'
import { faultyStore, type FaultyStore } from '../../fixtures/faulty-store'
import { payloads } from '../../fixtures/cti/server'
import { ALIAS, RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness, runPass } from './harness'

let h: SyncHarness
let engine: EngineServer | undefined
afterEach(async () => {
  await h?.stop()
  await engine?.stop()
  engine = undefined
})

const pass = () => runPass(h.sync)

/** The Engine test server and a real client on its socket (closed by the file's afterEach). */
function startRealEngine() {
  engine = startEngineServer()
  return createEngineClient({
    socketPath: engine.socketPath,
    mock: false,
    reloadTimeoutMinutes: 1,
    notReadyGraceMinutes: 1,
    log: silentLogger,
  })
}

describe('snapshot sources', () => {
  test('remote load failure falls back to the last stable snapshot; a broken archive changes no offset', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    await pass()
    expect(existsSync(join(h.snapshotsDir, 'ruleset.stable.zip'))).toBe(true)
    // Someone wipes the consumer state: the next pass re-initialises; the remote archive is broken now.
    await h.store.delete({ index: '.svc-cti-consumers', id: 'cti:catalog:consumer:ruleset', refresh: true })
    c.snapshot!.zip = new TextEncoder().encode('this is not a zip archive')
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready', loadedFrom: 'stable' })
    expect([...(await h.docs(ALIAS.rules)).keys()].sort()).toEqual(['rule-1', 'rule-2', 'rule-3'])
  })

  test('without a feed the packaged snapshot and its manifest identity are used, then it becomes the stable one', async () => {
    h = await startSyncHarness()
    const c = seedRuleset(h.cti)
    c.publishSnapshot({
      extraEntries: { 'nested/ignored.json': '{"resource":"zzz","payload":{"type":"rule","document":{"id":"zzz"}}}\n', 'readme.txt': 'x' },
      rawLines: ['not json', '{"payload":{"type":"rule"}}', '{"resource":"odd","payload":{"type":"unknown-kind","document":{}}}'],
    })
    mkdirSync(h.snapshotsDir, { recursive: true })
    writeFileSync(join(h.snapshotsDir, 'ruleset.zip'), c.snapshot!.zip)
    const manifestResource = c.url.replace('public-ruleset-5', 'packaged-ruleset-5')
    writeFileSync(
      join(h.snapshotsDir, 'manifest.json'),
      JSON.stringify({
        'ruleset.zip': {
          name: 'packaged-ruleset-5',
          context: 't1-ruleset-5',
          resource: manifestResource,
          is_public: true,
          remote_offset: 99,
        },
      }),
    )
    const r = await pass()
    // The manifest's feed does not answer: the pass used the packaged archive and asked for its retry.
    expect(r.retried).toBe(true)
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready', reason: 'feed_unreachable' })
    const rules = await h.docs(ALIAS.rules)
    expect([...rules.keys()].sort()).toEqual(['rule-1', 'rule-2', 'rule-3'])
    expect(await h.state('ruleset')).toMatchObject({ name: 'packaged-ruleset-5', resource: manifestResource, local_offset: c.lastOffset })
    expect(existsSync(join(h.snapshotsDir, 'ruleset.zip'))).toBe(false)
    expect(existsSync(join(h.snapshotsDir, 'ruleset.stable.zip'))).toBe(true)
    expect(h.lines.some((l) => l.includes('snapshot lines skipped') && l.includes('unparseable'))).toBe(true)
  })

  test('IoC and vulnerability consumers: own indices, IoC summary and Engine export, CVE types from resource names', async () => {
    const engineClient = startRealEngine()
    const iocs = { context: 't1-iocs-5', name: 'public-iocs-5' }
    const vulns = { context: 't1-vd-5', name: 'public-vd-5' }
    h = await startSyncHarness({
      engine: engineClient,
      node: (cti) => ({
        'plugins.content_manager.catalog.iocs': cti.consumer(iocs.context, iocs.name).url,
        'plugins.content_manager.catalog.vulnerabilities': cti.consumer(vulns.context, vulns.name).url,
      }),
    })
    const i = h.cti.consumer(iocs.context, iocs.name)
    for (let n = 1; n <= 5; n++) i.create(String(n), payloads.ioc(String(n), n > 3 ? { type: 'url', name: `http://x/${n}` } : {}))
    i.publishSnapshot()
    i.update('2', [{ op: 'replace', path: '/document/confidence', value: 10 }])
    const v = h.cti.consumer(vulns.context, vulns.name)
    v.create('CVE-2024-0001', payloads.cve('CVE-2024-0001'))
    v.create('TID-77', payloads.cve('TID-77'))
    v.create('FEED-GLOBAL', payloads.cve('FEED-GLOBAL'))
    v.create('random-name', payloads.cve('random-name'))
    v.publishSnapshot()
    v.delete('CVE-2024-0001') // deletes are ignored for the vulnerability feed
    const r = await pass()
    expect(r.consumers.iocs).toMatchObject({ status: 'ready', updated: true })
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'ready', updated: true })
    const iocDocs = await h.docs(CONTENT_ALIASES.enrichments)
    expect(iocDocs.get('2').document.confidence).toBe(10)
    expect(iocDocs.get('1').document.first_seen).toBe('2025-09-17T16:40:05Z')
    const summary = iocDocs.get('__ioc_type_hashes__')
    expect(Object.keys(summary.type_hashes).sort()).toEqual(['ip:port', 'url'])
    expect(existsSync(h.iocExport)).toBe(true)
    expect(engine!.requestsTo('/content/ioc/update')).toHaveLength(1)
    const vulnDocs = await h.docs(CONTENT_ALIASES.vulnerabilities)
    expect([...vulnDocs.keys()].sort()).toEqual(['CVE-2024-0001', 'FEED-GLOBAL', 'TID-77'])
    expect(vulnDocs.get('TID-77').type).toBe('TID')
    expect(await h.state('vulnerabilities')).toMatchObject({ status: 'ready', local_offset: v.lastOffset })
  })
})

describe('Ruleset Management sync and the Engine', () => {
  test('standard integrations, rules and a detector reach Ruleset Management; a failed phase stays pending and is retried without new content', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    h.rulesetPort.failNext('upsertRule', 1)
    const r = await pass()
    // The failure asked for the one immediate retry, which synchronised everything.
    expect(r.retried).toBe(true)
    expect(await h.state('ruleset')).toMatchObject({ status: 'ready', pending_sync_phases: [] })
    const rules = await h.ruleset.rules.bySpaceIds('standard', ['rule-1', 'rule-2', 'rule-3'])
    expect(rules.missing).toEqual([])
    expect(await h.ruleset.detectors.stored('integ-1')).toBeTruthy()

    // New content arrives while every rule upsert fails: the rules phase is left pending...
    c.create('rule-4', payloads.rule('rule-4'))
    h.rulesetPort.failNext('upsertRule', 100)
    await pass()
    expect((await h.state('ruleset'))!.pending_sync_phases).toEqual(['rules'])
    // ...and the next pass runs it again although nothing changed in the feed.
    h.rulesetPort.failNext('upsertRule', 0)
    h.rulesetPort.calls.length = 0
    h.cti.clear()
    await pass()
    expect(h.cti.requestsTo(/\/changes$/)).toHaveLength(0)
    expect(h.rulesetPort.calls.filter((x) => x.startsWith('upsertRule'))).toHaveLength(4)
    expect(h.rulesetPort.calls.filter((x) => x.startsWith('upsertIntegration'))).toHaveLength(0)
    expect((await h.state('ruleset'))!.pending_sync_phases).toEqual([])
  })

  test('the standard space hash is recomputed after a sync and the Engine loads the standard policy when it moved', async () => {
    const engineClient = startRealEngine()
    h = await startSyncHarness({ node: RULESET_FEED, engine: engineClient })
    const c = seedRuleset(h.cti)
    c.publishSnapshot()
    await pass()
    await h.content.engineLoadsSettled()
    const first = await h.content.spaceHash('standard')
    expect(first).toMatch(/^[0-9a-f]{64}$/)
    const loads = () => engine!.requestsTo('/content/validate/policy').filter((q: any) => q.body?.space === 'standard').length
    expect(loads()).toBe(1)
    // A change outside the policy's references leaves the hash (and the Engine) alone.
    c.create('rule-orphan', payloads.rule('rule-orphan'))
    await pass()
    await h.content.engineLoadsSettled()
    expect(await h.content.spaceHash('standard')).toBe(first)
    expect(loads()).toBe(1)
    // A referenced rule changes: new hash, new load.
    c.update('rule-2', [{ op: 'replace', path: '/document/level', value: 'critical' }])
    await pass()
    await h.content.engineLoadsSettled()
    expect(await h.content.spaceHash('standard')).not.toBe(first)
    expect(loads()).toBe(2)
  })
})

describe("every node's Engine (issue 15 item 8)", () => {
  test('a node that did not run the sync loads the stored standard policy into its own Engine when it differs, once', async () => {
    const engineClient = startRealEngine()
    h = await startSyncHarness({ node: RULESET_FEED, engine: engineClient })
    // A second node over the same store, with its own Engine.
    const other = startEngineServer()
    try {
      const nodeB = createContentManager({
        store: h.store,
        settings: h.settings,
        security: (await securityFor(tempDirs())).security,
        log: silentLogger,
        now: Date.now,
        journal: h.journal,
        engine: createEngineClient({
          socketPath: other.socketPath,
          mock: false,
          reloadTimeoutMinutes: 1,
          notReadyGraceMinutes: 1,
          log: silentLogger,
        }),
      })
      const loadsOf = (e: EngineServer) => e.requestsTo('/content/validate/policy').filter((q: any) => q.body?.space === 'standard').length
      const c = seedRuleset(h.cti)
      c.publishSnapshot()
      await pass()
      await h.content.engineLoadsSettled()
      expect(loadsOf(engine!)).toBe(1)
      expect(loadsOf(other)).toBe(0)
      expect(await nodeB.ensureEngineLoaded('standard')).toBe('loaded')
      expect(await nodeB.ensureEngineLoaded('standard')).toBe('unchanged')
      expect(loadsOf(other)).toBe(1)
      // The syncing node's own check after its pass does not load twice.
      expect(await h.content.ensureEngineLoaded('standard')).toBe('unchanged')
      c.update('rule-2', [{ op: 'replace', path: '/document/level', value: 'critical' }])
      await pass()
      await h.content.engineLoadsSettled()
      expect(await nodeB.ensureEngineLoaded('standard')).toBe('loaded')
      expect(loadsOf(other)).toBe(2)
      expect(loadsOf(engine!)).toBe(2)
    } finally {
      await other.stop()
    }
  })
})

describe('blue/green swap (plan change)', () => {
  async function registeredWithPlan(swapTo: string) {
    h.cti.tokens.add('tok-1')
    await h.credentials.save('tok-1')
    h.cti.setPlanResource('ruleset', swapTo)
  }

  /**
   * The feed's snapshot loaded through a registration with a plan naming it. Every load goes
   * through staging: the live slot is whichever the first load swapped in; `next` is the other.
   */
  async function loadedFromPlan(feed: ReturnType<typeof seedRuleset>) {
    feed.publishSnapshot()
    await registeredWithPlan(feed.url)
    await pass()
    const [live] = await h.store.resolve(ALIAS.rules)
    const slot = live.slice(-2)
    return { live, slot, next: slot === '-a' ? '-b' : '-a' }
  }

  test('new content lands in the other slot, user spaces are copied, all aliases move at once, old indices are deleted', async () => {
    h = await startSyncHarness()
    const free = seedRuleset(h.cti, { context: 't1-ruleset-5', name: 'public-ruleset-5' })
    const { live, slot, next } = await loadedFromPlan(free)
    // A user rule in draft, which must survive the swap.
    await h.store.index({
      index: live,
      id: 'user-1',
      body: { document: { id: 'user-1', title: 'mine' }, hash: { sha256: 'x' }, space: { name: 'draft' } },
      refresh: true,
    })

    const pro = h.cti.consumer('t0-ruleset-5', 'private-ruleset-5', { isPublic: false })
    pro.create('pro-rule', payloads.rule('pro-rule'))
    pro.create('integ-pro', payloads.integration('integ-pro', { rules: ['pro-rule'] }))
    pro.publishSnapshot()
    pro.update('pro-rule', [{ op: 'replace', path: '/document/level', value: 'high' }])
    h.cti.setPlanResource('ruleset', pro.url)
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready', loadedFrom: 'swap' })
    for (const kind of ['rules', 'decoders', 'integrations', 'kvdbs', 'filters', 'policies'] as const) {
      expect(await h.store.resolve(CONTENT_ALIASES[kind], { expand_wildcards: 'all' })).toEqual([`${CONTENT_ALIASES[kind]}${next}`])
      expect(await h.store.existsIndex({ index: `${CONTENT_ALIASES[kind]}${slot}`, expand_wildcards: 'all' })).toBe(false)
    }
    const rules = await h.docs(ALIAS.rules)
    expect(rules.get('pro-rule').document.level).toBe('high')
    expect(rules.get('user-1').space.name).toBe('draft')
    expect(rules.has('rule-1')).toBe(false)
    // Draft/test/custom policies came along.
    const policies = [...(await h.docs(ALIAS.policies)).values()].map((p: any) => p.space?.name).sort()
    expect(policies).toEqual(['custom', 'draft', 'test'])
    expect(await h.state('ruleset')).toMatchObject({ resource: pro.url, is_public: false, local_offset: pro.lastOffset, status: 'ready' })
    // Standard content that left the plan left Ruleset Management too.
    expect((await h.ruleset.rules.bySpaceIds('standard', ['rule-1'])).missing).toEqual(['rule-1'])
    expect((await h.ruleset.rules.bySpaceIds('standard', ['pro-rule'])).missing).toEqual([])
  })

  test('a failure while building the staging indices discards them; users keep the old content; the next pass retries', async () => {
    let faulty!: FaultyStore
    h = await startSyncHarness({ wrapStore: (s) => (faulty = faultyStore(s)) })
    const free = seedRuleset(h.cti)
    const { live, slot, next } = await loadedFromPlan(free)
    const pro = h.cti.consumer('t0-ruleset-5', 'private-ruleset-5', { isPublic: false })
    pro.create('pro-rule', payloads.rule('pro-rule'))
    pro.publishSnapshot()
    h.cti.setPlanResource('ruleset', pro.url)
    // Every write into a staging index fails for good (not retryable).
    faulty.arm({
      failAt: Array.from({ length: 1000 }, (_, i) => i + 1),
      match: (m) => m.index.endsWith(next),
      error: () => new StoreError('mapper_parsing_exception', 400, 'broken'),
    })
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'failed' })
    faulty.disarm()
    expect(await h.store.resolve(ALIAS.rules)).toEqual([live])
    expect(await h.store.existsIndex({ index: `${ALIAS.rules}${next}`, expand_wildcards: 'all' })).toBe(false)
    expect([...(await h.docs(ALIAS.rules)).keys()].sort()).toEqual(['rule-1', 'rule-2', 'rule-3'])
    expect((await h.state('ruleset'))!.resource).toBe(free.url)

    const again = await pass()
    expect(again.consumers.ruleset).toMatchObject({ status: 'ready', loadedFrom: 'swap' })
    expect(await h.store.resolve(ALIAS.rules)).toEqual([`${ALIAS.rules}${next}`])
    expect([...(await h.docs(ALIAS.rules)).keys()]).toContain('pro-rule')
  })
})

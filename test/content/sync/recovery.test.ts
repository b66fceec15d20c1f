// The right state after every crash and fault (issue 19): a loaded consumer is never mistaken for
// an empty one, post-sync work interrupted by a crash is redone before `ready`, a partial snapshot
// is never visible or `ready`, re-initialisation keeps the old content readable until the new set
// is complete, and no temporary download outlives its pass or its process.
import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CONTENT_ALIASES } from '../../../src/setup/indices'
import { StoreError } from '../../../src/store/errors'
import type { Store } from '../../../src/store/port'
import { payloads, type CtiServer } from '../../fixtures/cti/server'
import { faultyStore, type FaultyStore } from '../../fixtures/faulty-store'
import { beforeEachBulk, startSyncHarness, type SyncHarness, runPass } from './harness'

let h: SyncHarness
afterEach(async () => {
  await h?.stop()
})

const pass = (sync = h.sync) => runPass(sync)

const VULNS = { context: 't1-vd-5', name: 'public-vd-5' }
const IOCS = { context: 't1-iocs-5', name: 'public-iocs-5' }
const feeds = (cti: CtiServer) => ({
  'plugins.content_manager.catalog.vulnerabilities': cti.consumer(VULNS.context, VULNS.name).url,
  'plugins.content_manager.catalog.iocs': cti.consumer(IOCS.context, IOCS.name).url,
})
const snapshotDownloads = () => h.cti.requestsTo(/^\/store\//).length
const downloadsLeft = () => (existsSync(h.snapshotsDir) ? readdirSync(h.snapshotsDir).filter((n) => n.includes('.download-')) : [])

function seedCves(n: number) {
  const v = h.cti.consumer(VULNS.context, VULNS.name)
  for (let i = 1; i <= n; i++) v.create(`CVE-2024-${String(i).padStart(4, '0')}`, payloads.cve(`CVE-2024-${i}`))
  return v
}

describe('emptiness is counted by document, not by how a field is mapped', () => {
  test('a loaded vulnerabilities consumer applies new changes without downloading its snapshot again', async () => {
    h = await startSyncHarness({ node: feeds })
    const v = seedCves(20)
    v.publishSnapshot()
    await pass()
    expect(snapshotDownloads()).toBe(1)
    v.create('CVE-2024-0100', payloads.cve('CVE-2024-0100'))
    v.update('CVE-2024-0001', [{ op: 'replace', path: '/severity', value: 'low' }])
    const r = await pass()
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'ready', updated: true, loadedFrom: undefined })
    expect(snapshotDownloads()).toBe(1)
    expect(h.lines.some((l) => l.includes('re-initialising'))).toBe(false)
    const docs = await h.docs(CONTENT_ALIASES.vulnerabilities)
    expect(docs.size).toBe(21)
    expect(docs.get('CVE-2024-0001').document.severity).toBe('low')
    expect(await h.state('vulnerabilities')).toMatchObject({ status: 'ready', local_offset: v.lastOffset })
  })

  test('an IoC index holding only its summary document is empty: the consumer re-initialises', async () => {
    h = await startSyncHarness({ node: feeds })
    const i = h.cti.consumer(IOCS.context, IOCS.name)
    for (let n = 1; n <= 3; n++) i.create(String(n), payloads.ioc(String(n)))
    i.publishSnapshot()
    await pass()
    for (const id of ['1', '2', '3']) await h.store.delete({ index: CONTENT_ALIASES.enrichments, id, refresh: true })
    i.create('4', payloads.ioc('4'))
    const r = await pass()
    expect(r.consumers.iocs).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    expect([...(await h.docs(CONTENT_ALIASES.enrichments)).keys()].sort()).toEqual(['1', '2', '3', '4', '__ioc_type_hashes__'])
  })
})

describe('ready only when the content and its post-sync match the recorded offset', () => {
  test('a crash during the IoC post-sync: the restarted node redoes it (summary and export) before ready', async () => {
    let faulty!: FaultyStore
    h = await startSyncHarness({ node: feeds, wrapStore: (s) => (faulty = faultyStore(s)) })
    const i = h.cti.consumer(IOCS.context, IOCS.name)
    for (let n = 1; n <= 4; n++) i.create(String(n), payloads.ioc(String(n), n > 2 ? { type: 'url', name: `http://x/${n}` } : {}))
    i.publishSnapshot()
    // The summary write fails in the pass and in its retry (as a kill there would leave it): content
    // and offset are in, the post-sync is not.
    faulty.arm({ failAt: [1, 2], match: (m) => m.id === '__ioc_type_hashes__' })
    const first = await pass()
    faulty.disarm()
    expect(first.consumers.iocs).toMatchObject({ status: 'failed' })
    expect(await h.state('iocs')).toMatchObject({ local_offset: i.lastOffset, post_sync_pending: true })
    expect((await h.docs(CONTENT_ALIASES.enrichments)).has('__ioc_type_hashes__')).toBe(false)
    rmSync(h.iocExport, { force: true })

    const before = h.lines.length
    const restarted = h.newSync()
    const r = await pass(restarted)
    expect(r.consumers.iocs).toMatchObject({ status: 'ready', updated: false })
    const summary = (await h.docs(CONTENT_ALIASES.enrichments)).get('__ioc_type_hashes__')
    expect(Object.keys(summary.type_hashes).sort()).toEqual(['ip:port', 'url'])
    expect(readFileSync(h.iocExport, 'utf8').trim().split('\n')).toHaveLength(4)
    const state = await h.state('iocs')
    expect(state).toMatchObject({ status: 'ready', local_offset: i.lastOffset })
    expect(state!.post_sync_pending).toBeUndefined()
    expect(state!.last_pass).toMatchObject({ outcome: 'ready', updated: false })
    // Done once, not on every later pass.
    await pass(restarted)
    expect(h.lines.slice(before).filter((l) => l.includes('post-sync of an earlier pass did not finish'))).toHaveLength(1)
  })

  test('IoC type hashes do not depend on load order or bulk sizes, and change with any IoC', async () => {
    const hashes: string[] = []
    for (const [order, bulk] of [
      ['forward', 10],
      ['reverse', 25],
    ] as const) {
      h = await startSyncHarness({
        node: (cti) => ({
          ...feeds(cti),
          'plugins.content_manager.max_items_per_bulk': bulk,
          'plugins.content_manager.search_page_size': 100,
        }),
      })
      const i = h.cti.consumer(IOCS.context, IOCS.name)
      const ids = Array.from({ length: 150 }, (_, n) => String(n + 1))
      for (const id of order === 'forward' ? ids : ids.reverse()) i.create(id, payloads.ioc(id))
      i.publishSnapshot()
      await pass()
      hashes.push((await h.docs(CONTENT_ALIASES.enrichments)).get('__ioc_type_hashes__').type_hashes['ip:port'].hash.sha256)
      if (order === 'reverse') {
        i.update('17', [{ op: 'replace', path: '/document/confidence', value: 5 }])
        await pass()
        hashes.push((await h.docs(CONTENT_ALIASES.enrichments)).get('__ioc_type_hashes__').type_hashes['ip:port'].hash.sha256)
      } else await h.stop()
    }
    expect(hashes[1]).toBe(hashes[0])
    expect(hashes[2]).not.toBe(hashes[0])
  })

  test('a truncated first snapshot is never ready and never visible; the next pass loads it whole', async () => {
    h = await startSyncHarness({ node: feeds })
    const v = seedCves(40)
    v.publishSnapshot({ linesPerEntry: 10 })
    const whole = v.snapshot!.zip
    v.snapshot!.zip = whole.slice(0, Math.floor(whole.length * 0.6))
    const r = await pass()
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'failed' })
    const state = await h.state('vulnerabilities')
    expect(state).toMatchObject({ status: 'failed', local_offset: 0 })
    expect(state!.last_pass).toMatchObject({ outcome: 'failed' })
    expect(state!.last_pass!.error).toContain('truncated')
    expect((await h.docs(CONTENT_ALIASES.vulnerabilities)).size).toBe(0)
    // The staging index is gone and so is the download.
    const physical = await h.store.resolve(`${CONTENT_ALIASES.vulnerabilities}-*`, { expand_wildcards: 'all', allow_no_indices: true })
    expect(physical).toHaveLength(1)
    expect(downloadsLeft()).toEqual([])

    v.snapshot!.zip = whole
    const again = await pass()
    expect(again.consumers.vulnerabilities).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    expect((await h.docs(CONTENT_ALIASES.vulnerabilities)).size).toBe(40)
  })
})

describe('an interrupted snapshot load goes on from its last checkpoint', () => {
  test('stopped after 25 of 30 bulks: the next start reuses the downloaded archive and the staging index, and sends only what came after the checkpoint', async () => {
    let harness!: SyncHarness
    let bulkItems = 0
    let stopAt: number | undefined
    h = harness = await startSyncHarness({
      node: (cti) => ({ ...feeds(cti), 'plugins.content_manager.max_items_per_bulk': 100 }),
      wrapStore: (s) =>
        new Proxy(s, {
          get(target, prop, receiver) {
            if (prop !== 'bulk') return Reflect.get(target, prop, receiver)
            return async (params: Parameters<Store['bulk']>[0]) => {
              const items = params.body.filter((l: any) => l.index?._index?.startsWith(CONTENT_ALIASES.vulnerabilities)).length
              bulkItems += items
              if (items > 0 && stopAt !== undefined && bulkItems >= stopAt) {
                stopAt = undefined
                void harness.sync.stop() // a shutdown in the middle of the load
              }
              return target.bulk(params)
            }
          },
        }),
    })
    const v = seedCves(3000)
    v.publishSnapshot({ linesPerEntry: 1000 })
    stopAt = 2500
    const first = await pass()
    expect(first.outcome).toBe('aborted')
    const interrupted = await h.state('vulnerabilities')
    // Checkpoints every offset_flush_interval (10) bulks of 100: the last one at 2,000 records.
    expect(interrupted!.staging).toMatchObject({ source: 'remote', position: 2000 })
    expect(interrupted!.status).not.toBe('ready')
    expect((await h.docs(CONTENT_ALIASES.vulnerabilities)).size).toBe(0)

    bulkItems = 0
    const restarted = h.newSync()
    const r = await pass(restarted)
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    expect(snapshotDownloads()).toBe(1)
    expect(bulkItems).toBe(1000)
    expect(h.lines.some((l) => l.includes('going on with an interrupted snapshot load'))).toBe(true)
    expect((await h.docs(CONTENT_ALIASES.vulnerabilities)).size).toBe(3000)
    const state = await h.state('vulnerabilities')
    expect(state!.staging).toBeUndefined()
    expect(state).toMatchObject({ status: 'ready', local_offset: v.lastOffset })
    expect(existsSync(join(h.snapshotsDir, 'vulnerabilities.loading.zip'))).toBe(false)
    expect(existsSync(join(h.snapshotsDir, 'vulnerabilities.stable.zip'))).toBe(true)
  })
})

describe('the packaged sample content', () => {
  test('loaded when nothing else is; replaced through staging (not patched) once a real feed appears', async () => {
    h = await startSyncHarness()
    const sync = h.newSync({ samples: true })
    const first = await pass(sync)
    expect(first.consumers.ruleset).toMatchObject({ status: 'ready', loadedFrom: 'packaged' })
    expect((await h.docs(CONTENT_ALIASES.rules)).size).toBe(3)
    expect((await h.docs(CONTENT_ALIASES.enrichments)).size).toBe(6)
    // The node registers; its plan names a feed. The sample's offsets mean nothing there.
    const feed = h.cti.consumer('t0-ruleset-5', 'private-ruleset-5', { isPublic: false })
    feed.create('pro-rule', payloads.rule('pro-rule'))
    feed.publishSnapshot()
    h.cti.tokens.add('tok-1')
    await h.credentials.save('tok-1')
    h.cti.setPlanResource('ruleset', feed.url)
    const second = await pass(sync)
    expect(second.consumers.ruleset).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    const rules = await h.docs(CONTENT_ALIASES.rules)
    expect([...rules.keys()].filter((id) => rules.get(id).space?.name === 'standard')).toEqual(['pro-rule'])
    expect(await h.state('ruleset')).toMatchObject({ resource: feed.url, local_offset: feed.lastOffset })
  })
})

describe('content never vanishes', () => {
  test('a re-initialisation loads into staging: readers see the old content until the new set is complete', async () => {
    const seen: number[] = []
    let inner!: Store
    let watching = false
    h = await startSyncHarness({
      node: (cti) => ({ ...feeds(cti), 'plugins.content_manager.max_items_per_bulk': 10 }),
      wrapStore: (s) => {
        inner = s
        // At every bulk of the reload, what would a reader of the alias see?
        return beforeEachBulk(s, async () => {
          if (!watching) return
          await inner.refresh({ index: CONTENT_ALIASES.vulnerabilities, expand_wildcards: 'all' })
          seen.push((await inner.count({ index: CONTENT_ALIASES.vulnerabilities, expand_wildcards: 'all' })).count)
        })
      },
    })
    const v = seedCves(30)
    v.publishSnapshot()
    await pass()
    // The feed was reset behind our back: local offset ahead of the remote one forces a reload.
    for (let i = 31; i <= 50; i++) v.create(`CVE-2025-${i}`, payloads.cve(`CVE-2025-${i}`))
    v.publishSnapshot()
    await h.store.index({
      index: '.svc-cti-consumers',
      id: 'cti:catalog:consumer:vulnerabilities',
      body: { ...(await h.state('vulnerabilities')), local_offset: 10_000 },
      refresh: true,
    })
    watching = true
    const r = await pass()
    watching = false
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    expect(seen.length).toBeGreaterThanOrEqual(5)
    expect(new Set(seen)).toEqual(new Set([30]))
    expect((await h.docs(CONTENT_ALIASES.vulnerabilities)).size).toBe(50)
  })

  test('a failed re-initialisation leaves the loaded content in place and readable', async () => {
    let faulty!: FaultyStore
    h = await startSyncHarness({ node: feeds, wrapStore: (s) => (faulty = faultyStore(s)) })
    const v = seedCves(12)
    v.publishSnapshot()
    await pass()
    await h.store.delete({ index: '.svc-cti-consumers', id: 'cti:catalog:consumer:vulnerabilities', refresh: true })
    faulty.arm({
      failAt: Array.from({ length: 100 }, (_, i) => i + 1),
      match: (m) => m.index.startsWith(CONTENT_ALIASES.vulnerabilities),
      error: () => new StoreError('mapper_parsing_exception', 400, 'broken'),
    })
    const r = await pass()
    faulty.disarm()
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'failed' })
    expect((await h.docs(CONTENT_ALIASES.vulnerabilities)).size).toBe(12)
  })
})

describe('temporary download files', () => {
  test('removed after a failed download and after a failed load; left-overs of a killed process removed at start-up', async () => {
    h = await startSyncHarness({ node: feeds })
    const v = seedCves(5)
    v.publishSnapshot()
    h.cti.inject({ path: /^\/store\//, status: 503, times: 2 })
    const r = await pass()
    expect(r.consumers.vulnerabilities).toMatchObject({ status: 'failed' })
    expect(downloadsLeft()).toEqual([])

    v.snapshot!.zip = new TextEncoder().encode('not a zip')
    await pass()
    expect(downloadsLeft()).toEqual([])

    mkdirSync(h.snapshotsDir, { recursive: true })
    writeFileSync(join(h.snapshotsDir, '.vulnerabilities.download-4242-1700000000000.zip'), 'partial')
    mkdirSync(join(h.iocExport, '..'), { recursive: true })
    writeFileSync(`${h.iocExport}.tmp-4242`, 'partial')
    writeFileSync(join(h.snapshotsDir, 'keep-me.zip'), 'not ours to remove')
    h.newSync()
    expect(downloadsLeft()).toEqual([])
    expect(existsSync(`${h.iocExport}.tmp-4242`)).toBe(false)
    expect(existsSync(join(h.snapshotsDir, 'keep-me.zip'))).toBe(true)
  })
})

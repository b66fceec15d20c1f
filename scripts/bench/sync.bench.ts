// Snapshot load throughput: 50,000 IoC documents served as a ZIP snapshot by the CTI test server
// and loaded by a real ContentSync pass (download, streamed unzip, routing and envelopes, bulk
// writes with the default limits, post-sync scan and export) into an embedded store on disk.
// Baseline, same run: the same 50,000 stored envelopes bulk-indexed straight into a fresh store
// in bulks of 1,000 with the same concurrency, which is the floor any loader pays.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { createContentManager } from '../../src/content/manager'
import { CtiCredentials } from '../../src/content/cti/credentials'
import { iocEnvelope } from '../../src/content/sync/documents'
import { ContentSync } from '../../src/content/sync/service'
import { createLogger } from '../../src/http/log'
import { Journal } from '../../src/journal/journal'
import { createRuleset } from '../../src/ruleset'
import { createSecurity } from '../../src/security'
import { runBootstrap } from '../../src/setup/bootstrap'
import { CONTENT_ALIASES } from '../../src/setup/indices'
import { EmbeddedStore } from '../../src/store/embedded/store'
import type { BulkLine } from '../../src/store/port'
import { payloads, startCtiServer } from '../../test/fixtures/cti/server'

const DOCS = Number(process.env.BENCH_SYNC_DOCS ?? 50_000)
const log = createLogger({ level: 'error' })

async function freshNode(root: string, extra: Record<string, unknown>) {
  const node = buildNodeConfig(
    { 'plugins.content_manager.engine.mock': true, 'plugins.content_manager.setup_wait.max_retries': 0, ...extra },
    'bench',
    root,
  )
  const settings = new ClusterSettings(node, memoryPersistence())
  const store = new EmbeddedStore(join(root, 'store.db'), { synchronous: 'NORMAL' })
  const boot = await runBootstrap({ store, settings, log, now: Date.now })
  if (boot.status !== 'ready') throw new Error('bootstrap failed')
  return { node, settings, store }
}

async function main() {
  const cti = startCtiServer()
  const feed = cti.consumer('t1-iocs-5', 'public-iocs-5')
  for (let i = 1; i <= DOCS; i++)
    feed.create(String(i), payloads.ioc(String(i), i % 3 === 0 ? { type: 'url', name: `http://h${i}.example/x` } : {}))
  feed.publishSnapshot({ linesPerEntry: 10_000 })
  console.log(`snapshot: ${DOCS} IoCs, ${(feed.snapshot!.zip.byteLength / 1024 / 1024).toFixed(1)} MiB zipped`)

  // Baseline: the same envelopes straight into a fresh store.
  const baseRoot = mkdtempSync(join(tmpdir(), 'svc-sync-bench-base-'))
  const base = await freshNode(baseRoot, {})
  const index = `${CONTENT_ALIASES.enrichments}-a`
  const envelopes = [...feed.state.entries()].map(([id, { offset, payload }]) => ({
    id,
    body: iocEnvelope(payload.document as Record<string, unknown>, offset),
  }))
  let t = performance.now()
  const inFlight = new Set<Promise<unknown>>()
  for (let i = 0; i < envelopes.length; i += 1000) {
    const body: BulkLine[] = []
    for (const e of envelopes.slice(i, i + 1000)) body.push({ index: { _index: index, _id: e.id } }, e.body as BulkLine)
    const p: Promise<unknown> = base.store.bulk({ body }).finally(() => inFlight.delete(p))
    inFlight.add(p)
    if (inFlight.size >= 5) await Promise.race(inFlight)
  }
  await Promise.all(inFlight)
  const baseSeconds = (performance.now() - t) / 1000
  const baseCount = (await base.store.count({ index })).count
  await base.store.close()
  rmSync(baseRoot, { recursive: true, force: true })

  // The sync pass.
  const root = mkdtempSync(join(tmpdir(), 'svc-sync-bench-'))
  const { node, settings, store } = await freshNode(root, {
    'plugins.content_manager.cti.api': cti.base,
    'plugins.content_manager.catalog.iocs': feed.url,
  })
  const { security } = await createSecurity({ node, dataDir: join(root, 'data'), log, env: {} })
  const journal = new Journal(join(root, 'journal.db'))
  const ruleset = createRuleset({ store, settings, log, now: Date.now, security })
  const content = createContentManager({ store, settings, security, log, now: Date.now, journal, rulesetSync: ruleset.sync })
  await content.start()
  const sync = new ContentSync({
    store,
    settings,
    log,
    now: Date.now,
    journal,
    credentials: new CtiCredentials(store, log),
    engine: content.engine,
    ruleset: ruleset.sync,
    recomputeSpaces: (s) => content.recomputeSpaces(s),
    clusterUuid: 'bench',
    snapshotsDir: join(root, 'snapshots'),
    iocExportPath: join(root, 'engine', 'data', 'iocs.ndjson'),
  })
  t = performance.now()
  const report = await sync.run('test')
  const syncSeconds = (performance.now() - t) / 1000
  if (typeof report === 'string' || report.consumers.iocs?.status !== 'ready') throw new Error(`sync failed: ${JSON.stringify(report)}`)
  const syncCount = (await store.count({ index: CONTENT_ALIASES.enrichments, body: { query: { exists: { field: 'document.id' } } } })).count
  await sync.stop()
  await store.close()
  journal.close()
  await cti.stop()
  rmSync(root, { recursive: true, force: true })

  const baseRate = baseCount / baseSeconds
  const syncRate = syncCount / syncSeconds
  console.log(`baseline bulk index : ${baseCount} docs in ${baseSeconds.toFixed(2)} s = ${Math.round(baseRate)} docs/s`)
  console.log(
    `snapshot sync pass  : ${syncCount} docs in ${syncSeconds.toFixed(2)} s = ${Math.round(syncRate)} docs/s (download, unzip, envelopes, bulks, post-sync scan and export)`,
  )
  console.log(`ratio sync/baseline : ${(syncRate / baseRate).toFixed(2)}`)
}

await main()

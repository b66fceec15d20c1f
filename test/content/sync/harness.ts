// Service-level harness for the catalog sync: the embedded store (in memory) provisioned by the
// real Setup bootstrap, real settings, the real Content Manager and Ruleset Management, the CTI
// test server as the catalog, and a ContentSync built the way production builds it. `sleep`
// records every wait instead of spending it, so rate-limit and backoff policies are asserted
// exactly and quickly.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../../src/config/cluster-settings'
import { buildNodeConfig } from '../../../src/config/node-config'
import { createContentManager, type ContentManager } from '../../../src/content/manager'
import { CtiCredentials } from '../../../src/content/cti/credentials'
import type { Sleep } from '../../../src/content/cti/sleep'
import type { EngineClient } from '../../../src/content/engine'
import { CONSUMERS, type ConsumerKind } from '../../../src/content/sync/consumers'
import type { SyncRuleset } from '../../../src/content/sync/ruleset-post-sync'
import { upsertOneByOne } from '../../../src/ports/ruleset-sync'
import { ContentSync, type PassReport } from '../../../src/content/sync/service'
import { ConsumerStates, type ConsumerState } from '../../../src/content/sync/state'
import { createLogger, type Logger } from '../../../src/http/log'
import { Journal } from '../../../src/journal/journal'
import { createRuleset, type Ruleset } from '../../../src/ruleset'
import { runBootstrap } from '../../../src/setup/bootstrap'
import { CONTENT_ALIASES } from '../../../src/setup/indices'
import { openEmbeddedStore } from '../../../src/store/embedded'
import type { Store } from '../../../src/store/port'
import { payloads, startCtiServer, type CtiServer } from '../../fixtures/cti/server'
import { securityFor, tempDirs } from '../../security/helpers'

export interface SyncHarness {
  cti: CtiServer
  store: Store
  settings: ClusterSettings
  log: Logger
  lines: string[]
  content: ContentManager
  ruleset: Ruleset
  /** What the sync calls in Ruleset Management (the real service, optionally made to fail). */
  rulesetPort: SyncRuleset & { failNext(op: string, times: number): void; calls: string[] }
  credentials: CtiCredentials
  journal: Journal
  snapshotsDir: string
  iocExport: string
  waits: number[]
  /** A fresh ContentSync over the same store and directories: a restarted process. */
  newSync(opts?: { samples?: boolean }): ContentSync
  sync: ContentSync
  state(kind: ConsumerKind): Promise<ConsumerState | undefined>
  /** `_source`s of one content alias, by `_id`. */
  docs(alias: string): Promise<Map<string, any>>
  set(values: Record<string, unknown>): Promise<void>
  /** Moves this harness's clock forward (stale locks, schedules). */
  advance(ms: number): void
  stop(): Promise<void>
}

export const ALIAS = CONTENT_ALIASES

/** Wraps the real Ruleset Management port so a test can make chosen operations fail. */
function flaky(real: SyncRuleset): SyncHarness['rulesetPort'] {
  const failures = new Map<string, number>()
  const calls: string[] = []
  const guard = async <T>(op: string, id: string, fn: () => Promise<T>): Promise<T> => {
    calls.push(`${op}:${id}`)
    const left = failures.get(op) ?? 0
    if (left > 0) {
      failures.set(op, left - 1)
      throw new Error(`injected ${op} failure`)
    }
    return fn()
  }
  const upsertRule: SyncRuleset['upsertRule'] = (space, rule, integ, existed) =>
    guard('upsertRule', String(rule.id), () => real.upsertRule(space, rule, integ, existed))
  return {
    calls,
    failNext: (op, times) => void failures.set(op, times),
    upsertRule,
    upsertRules: (space, rules) => upsertOneByOne({ upsertRule }, space, rules),
    deleteRule: (space, id) => guard('deleteRule', id, () => real.deleteRule(space, id)),
    upsertIntegration: (space, i, existed) => guard('upsertIntegration', String(i.id), () => real.upsertIntegration(space, i, existed)),
    deleteIntegration: (space, id) => guard('deleteIntegration', id, () => real.deleteIntegration(space, id)),
    upsertDetector: (d) => guard('upsertDetector', d.integrationId, () => real.upsertDetector!(d)),
    deleteSpace: (space) => guard('deleteSpace', space, () => real.deleteSpace!(space)),
  }
}

export async function startSyncHarness(
  opts: {
    node?: Record<string, unknown> | ((cti: CtiServer) => Record<string, unknown>)
    engine?: EngineClient
    wrapStore?: (s: Store) => Store
  } = {},
): Promise<SyncHarness> {
  const cti = startCtiServer()
  const dirs = tempDirs()
  const work = mkdtempSync(join(tmpdir(), 'svc-sync-'))
  const lines: string[] = []
  const log = createLogger({ level: 'debug', write: (l) => lines.push(l) })
  const node = buildNodeConfig(
    {
      'plugins.content_manager.cti.api': cti.base,
      'plugins.content_manager.engine.mock': true,
      'plugins.content_manager.setup_wait.max_retries': 0,
      ...(typeof opts.node === 'function' ? opts.node(cti) : opts.node),
    },
    'test',
    dirs.configDir,
  )
  const settings = new ClusterSettings(node, memoryPersistence(), Date.now, 0)
  const embedded = openEmbeddedStore(':memory:')
  const store = opts.wrapStore ? opts.wrapStore(embedded) : embedded
  let skew = 0
  const now = () => Date.now() + skew
  const boot = await runBootstrap({ store: embedded, settings, log, now })
  if (boot.status !== 'ready') throw new Error(`bootstrap failed: ${boot.failedTask}`)
  const { security } = await securityFor(dirs)
  const journal = new Journal(join(work, 'journal.db'))
  const ruleset = createRuleset({ store, settings, log, now, security })
  const rulesetPort = flaky(ruleset.sync)
  const content = createContentManager({ store, settings, security, log, now, journal, rulesetSync: rulesetPort, engine: opts.engine })
  await content.start()
  const credentials = new CtiCredentials(store, log, now, 0)
  const waits: number[] = []
  const sleep: Sleep = async (ms, signal) => {
    waits.push(ms)
    signal?.throwIfAborted()
  }
  const snapshotsDir = join(work, 'snapshots')
  const iocExport = join(work, 'engine', 'data', 'iocs.ndjson')
  const newSync = (o: { samples?: boolean } = {}) =>
    new ContentSync({
      samples: o.samples,
      store,
      settings,
      log,
      now,
      journal,
      credentials,
      engine: content.engine,
      ruleset: rulesetPort,
      recomputeSpaces: (spaces) => content.recomputeSpaces(spaces),
      clusterUuid: async () => 'test-cluster-uuid',
      snapshotsDir,
      iocExportPath: iocExport,
      sleep,
    })
  const states = new ConsumerStates(store)
  const h: SyncHarness = {
    cti,
    store,
    settings,
    log,
    lines,
    content,
    ruleset,
    rulesetPort,
    credentials,
    journal,
    snapshotsDir,
    iocExport,
    waits,
    newSync,
    sync: newSync(),
    state: (kind) => states.read(CONSUMERS[kind]),
    async docs(alias) {
      await store.refresh({ index: alias, expand_wildcards: 'all' })
      const r = await store.search({ index: alias, expand_wildcards: 'all', body: { query: { match_all: {} }, size: 10000 } })
      return new Map(r.hits.hits.map((hit) => [hit._id, hit._source]))
    },
    set: async (values) => void (await settings.update({ persistent: values })),
    advance: (ms) => void (skew += ms),
    async stop() {
      await h.sync.stop()
      await content.engineLoadsSettled()
      await ruleset.stop()
      await cti.stop()
      await store.close()
      journal.close()
      rmSync(work, { recursive: true, force: true })
      rmSync(join(dirs.configDir, '..'), { recursive: true, force: true })
    },
  }
  return h
}

/** Node settings that point the ruleset consumer at the fixture's public ruleset feed. */
export const RULESET_FEED = (cti: CtiServer) => ({
  'plugins.content_manager.catalog.ruleset': cti.consumer('t1-ruleset-5', 'public-ruleset-5').url,
})

/** A ruleset feed with one integration, its rules and a decoder, plus the standard policy. */
export function seedRuleset(cti: CtiServer, opts: { rules?: number; context?: string; name?: string } = {}) {
  const c = cti.consumer(opts.context ?? 't1-ruleset-5', opts.name ?? 'public-ruleset-5')
  const n = opts.rules ?? 3
  const ruleIds = Array.from({ length: n }, (_, i) => `rule-${i + 1}`)
  for (const id of ruleIds) c.create(id, payloads.rule(id))
  c.create('decoder-1', payloads.decoder('decoder-1'))
  c.create('integ-1', payloads.integration('integ-1', { rules: ruleIds, decoders: ['decoder-1'] }))
  c.create('policy-std', payloads.policy('policy-std', { integrations: ['integ-1'] }))
  return c
}

/**
 * The IoC and vulnerabilities consumers a binary test publishes on the CTI test server: `suffix`
 * keeps each test file's contexts apart; `type` and `alias` are what the node stores them under.
 */
export const feedConsumers = (suffix: string) => ({
  IOCS: { context: `t1-iocs-${suffix}`, name: `public-iocs-${suffix}`, type: CONSUMERS.iocs.type, alias: CONTENT_ALIASES.enrichments },
  VULNS: {
    context: `t1-vd-${suffix}`,
    name: `public-vd-${suffix}`,
    type: CONSUMERS.vulnerabilities.type,
    alias: CONTENT_ALIASES.vulnerabilities,
  },
})

/** The store with `before` run ahead of every bulk (to look at what readers see while a pass writes). */
export function beforeEachBulk(store: Store, before: (params: Parameters<Store['bulk']>[0]) => Promise<void> | void): Store {
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop !== 'bulk') return Reflect.get(target, prop, receiver)
      return async (params: Parameters<Store['bulk']>[0]) => {
        await before(params)
        return target.bulk(params)
      }
    },
  })
}

/** A binary node's environment to sync `iocs` and `vulns` from the CTI test server once at start (Engine mocked). */
export const feedEnv = (cti: CtiServer, iocs: { url: string }, vulns: { url: string }, staleMillis: number): Record<string, string> => ({
  SVC_SETTING_plugins__content_manager__cti__api: cti.base,
  SVC_SETTING_plugins__content_manager__catalog__iocs: iocs.url,
  SVC_SETTING_plugins__content_manager__catalog__vulnerabilities: vulns.url,
  SVC_SETTING_plugins__content_manager__catalog__update_on_start: 'true',
  SVC_SETTING_plugins__content_manager__catalog__update_on_schedule: 'false',
  SVC_SETTING_plugins__content_manager__engine__mock: 'true',
  SVC_SETTING_plugins__content_manager__max_items_per_bulk: '100',
  SVC_SETTING_plugins__content_manager__resource_lock__stale_threshold_millis: String(staleMillis),
})

/** One sync pass run to its end; fails the test when it could not start. */
export async function runPass(sync: SyncHarness['sync']): Promise<PassReport> {
  const r = await sync.run('test')
  if (typeof r === 'string') throw new Error(`pass not started: ${r}`)
  return r
}

// The periodic jobs (spec background 3, 4, 9, 12): job documents reconciled with the settings,
// scheduled runs refused while update_on_schedule is false, the telemetry ping, registration
// retries, and a node configured offline making no CTI request at all.
import { afterEach, describe, expect, test } from 'bun:test'
import { CtiClient } from '../../../src/content/cti/client'
import { CATALOG_SYNC_JOB_ID, readJob, TELEMETRY_JOB_ID } from '../../../src/jobs/documents'
import { ContentJobs } from '../../../src/jobs/content-jobs'
import { registerWithRetry } from '../../../src/jobs/registration'
import { CONTENT_MANAGER_JOBS_INDEX } from '../../../src/setup/indices'
import { silentLogger } from '../../../src/http/log'
import { startCtiServer, type CtiServer } from '../../fixtures/cti/server'
import { startTestServer } from '../../helpers/server'
import { RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness } from './harness'

let h: SyncHarness | undefined
let jobs: ContentJobs | undefined
afterEach(async () => {
  jobs?.stop()
  jobs = undefined
  await h?.stop()
  h = undefined
})

function jobsFor(harness: SyncHarness, runs: string[]) {
  return new ContentJobs({
    store: harness.store,
    settings: harness.settings,
    log: harness.log,
    now: Date.now,
    journal: harness.journal,
    pollMillis: 60_000,
    sleep: async (ms) => void harness.waits.push(ms),
    runSync: async () => {
      runs.push('sync')
      await harness.sync.run('schedule')
    },
    ping: async () => {
      const cti = new CtiClient(await harness.settings.snapshot(), {
        credentials: harness.credentials,
        log: harness.log,
        clusterUuid: 'uuid-1',
      })
      await cti.ping()
    },
  })
}

describe('job documents', () => {
  test('created at start, rewritten (old and new values logged) when the settings change, left alone when equal', async () => {
    h = await startSyncHarness({ node: { 'plugins.content_manager.telemetry.enabled': false } })
    jobs = jobsFor(h, [])
    await jobs.start()
    const created = await readJob(h.store, CATALOG_SYNC_JOB_ID)
    expect(created).toMatchObject({
      name: 'Catalog Sync Periodic Task',
      job_type: 'consumer-sync-task',
      enabled: true,
      schedule: { interval: { period: 60, unit: 'Minutes' } },
    })
    const firstMs = jobs.nextSyncRun()!.getTime() - Date.now()
    expect(firstMs).toBeGreaterThan(59 * 60_000)

    await h.set({ 'plugins.content_manager.catalog.sync_interval': 15, 'plugins.content_manager.catalog.update_on_schedule': false })
    await jobs.evaluate()
    const rewritten = await readJob(h.store, CATALOG_SYNC_JOB_ID)
    expect(rewritten).toMatchObject({
      enabled: false,
      schedule: { interval: { period: 15, start_time: created!.schedule.interval.start_time } },
    })
    const line = h.lines.find((l) => l.includes('job document changed'))!
    expect(JSON.parse(line)).toMatchObject({
      job: CATALOG_SYNC_JOB_ID,
      old: { period: 60, enabled: true },
      new: { period: 15, enabled: false },
    })
    expect(jobs.nextSyncRun()!.getTime() - Date.now()).toBeLessThan(16 * 60_000)

    const before = await h.store.get({ index: CONTENT_MANAGER_JOBS_INDEX, id: CATALOG_SYNC_JOB_ID })
    jobs.stop()
    jobs = jobsFor(h, []) // a node restart with equal settings
    await jobs.start()
    const after = await h.store.get({ index: CONTENT_MANAGER_JOBS_INDEX, id: CATALOG_SYNC_JOB_ID })
    expect((after as any)._seq_no).toBe((before as any)._seq_no)
  })

  test('a scheduled run is refused with no CTI request while update_on_schedule is false, and runs when it is true', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), 'plugins.content_manager.telemetry.enabled': false }) })
    seedRuleset(h.cti).publishSnapshot()
    const runs: string[] = []
    jobs = jobsFor(h, runs)
    await jobs.start()
    await h.set({ 'plugins.content_manager.catalog.update_on_schedule': false })
    await jobs.scheduledSync()
    expect(runs).toEqual([])
    expect(h.cti.requests).toHaveLength(0)
    expect(h.journal.entries('job.refused')).toHaveLength(1)
    await h.set({ 'plugins.content_manager.catalog.update_on_schedule': true })
    await jobs.scheduledSync()
    expect(runs).toEqual(['sync'])
    expect(h.cti.requests.length).toBeGreaterThan(0)
    expect((await h.state('ruleset'))!.status).toBe('ready')
  })

  test('telemetry: job registered and the first ping sent at once with identification headers only; disabling removes the job', async () => {
    h = await startSyncHarness()
    jobs = jobsFor(h, [])
    await jobs.start()
    expect(await readJob(h.store, TELEMETRY_JOB_ID)).toMatchObject({
      name: 'Telemetry Ping Periodic Task',
      job_type: 'telemetry-ping-task',
      schedule: { interval: { period: 1, unit: 'Days' } },
    })
    const deadline = Date.now() + 5000
    while (h.cti.requestsTo('/ping').length === 0 && Date.now() < deadline) await Bun.sleep(20)
    const ping = h.cti.requestsTo('/ping')[0]
    expect(ping.method).toBe('GET')
    expect(ping.headers).toMatchObject({ 'svc-uid': 'uuid-1', 'svc-tag': 'v5.0.0', 'user-agent': 'svc Indexer 5.0.0' })
    expect(ping.headers['accept-encoding']).toContain('gzip')
    expect(ping.body).toBe('')
    expect(Object.keys(ping.query)).toEqual([])

    await h.set({ 'plugins.content_manager.telemetry.enabled': false })
    await jobs.evaluate()
    expect(await readJob(h.store, TELEMETRY_JOB_ID)).toBeUndefined()
  })
})

describe('job registration retries (spec background 12)', () => {
  test('linear backoff base * n, then give up after max_retries', async () => {
    const waits: number[] = []
    let calls = 0
    const ok = await registerWithRetry('x', async () => (++calls < 3 ? Promise.reject(new Error('index not ready')) : 'done'), {
      maxRetries: 3,
      backoffSeconds: 15,
      log: silentLogger,
      sleep: async (ms) => void waits.push(ms),
    })
    expect(ok).toBe('done')
    expect(waits).toEqual([15_000, 30_000])
    waits.length = 0
    const never = await registerWithRetry('y', async () => Promise.reject(new Error('no')), {
      maxRetries: 3,
      backoffSeconds: 15,
      log: silentLogger,
      sleep: async (ms) => void waits.push(ms),
    })
    expect(never).toBeUndefined()
    expect(waits).toEqual([15_000, 30_000, 45_000])
  })
})

describe('offline node', () => {
  let cti: CtiServer
  test('update_on_start, update_on_schedule and telemetry off: a node start makes no CTI request at all', async () => {
    cti = startCtiServer()
    const feed = seedRuleset(cti)
    feed.publishSnapshot()
    const settings = { 'plugins.content_manager.cti.api': cti.base, 'plugins.content_manager.catalog.ruleset': feed.url }
    const offline = await startTestServer({
      settings: {
        ...settings,
        'plugins.content_manager.catalog.update_on_start': false,
        'plugins.content_manager.catalog.update_on_schedule': false,
        'plugins.content_manager.telemetry.enabled': false,
      },
    })
    await Bun.sleep(300)
    await offline.stop()
    expect(cti.requests).toHaveLength(0)
    // The same node with update_on_start does reach the feed (so the silence above is the settings' doing).
    const online = await startTestServer({ settings: { ...settings, 'plugins.content_manager.catalog.update_on_start': true } })
    const deadline = Date.now() + 5000
    while (cti.requests.length === 0 && Date.now() < deadline) await Bun.sleep(20)
    await online.stop()
    await cti.stop()
    expect(cti.requests.length).toBeGreaterThan(0)
  })
})

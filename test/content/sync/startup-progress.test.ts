// Start-up (issue 15 item 6): the first pass starts once Setup is ready, and a CTI API that cannot
// be reached is tried again after short, jittered, bounded waits. Progress (item 7): percent,
// documents per second and time left, at most every 5 s, in the log and the consumer document,
// and the last pass's outcome and duration.
import { afterEach, describe, expect, test } from 'bun:test'
import { START_RETRY, startRetryDelay } from '../../../src/content/sync/module'
import { Progress } from '../../../src/content/sync/progress'
import type { PassProgress } from '../../../src/content/sync/state'
import type { Store } from '../../../src/store/port'
import { payloads, startCtiServer } from '../../fixtures/cti/server'
import { startTestServer } from '../../helpers/server'
import { beforeEachBulk, RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness } from './harness'

let h: SyncHarness | undefined
afterEach(async () => {
  await h?.stop()
  h = undefined
})

describe('start-up', () => {
  test('retry waits are random below a bound that doubles from 5 s and stops at 60 s', () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => startRetryDelay(n, () => 1))).toEqual([5000, 10_000, 20_000, 40_000, 60_000, 60_000])
    expect(startRetryDelay(3, () => 0.5)).toBe(20_000)
    // Never a tight loop, however the dice fall.
    expect(startRetryDelay(0, () => 0)).toBe(1000)
    const waits = Array.from({ length: 200 }, () => startRetryDelay(2))
    expect(Math.max(...waits)).toBeLessThanOrEqual(20_000)
    expect(new Set(waits).size).toBeGreaterThan(100)
    expect(START_RETRY).toEqual({ firstMillis: 5000, maxMillis: 60_000 })
  })

  test('CTI unreachable when the node starts: the sync tries again within seconds, not at the next scheduled run', async () => {
    const cti = startCtiServer()
    const feed = seedRuleset(cti)
    feed.publishSnapshot()
    // The pass and its immediate retry meet a CTI API that does not answer properly.
    cti.inject({ path: /consumers\/public-ruleset-5$/, status: 503, times: 2 })
    const node = await startTestServer({
      settings: {
        'plugins.content_manager.cti.api': cti.base,
        'plugins.content_manager.catalog.ruleset': feed.url,
        'plugins.content_manager.catalog.update_on_start': true,
      },
    })
    try {
      const deadline = Date.now() + 15_000
      while (cti.requestsTo('/store/').length === 0 && Date.now() < deadline) await Bun.sleep(50)
      const info = cti.requestsTo(/consumers\/public-ruleset-5$/)
      expect(info.length).toBeGreaterThanOrEqual(3)
      const gap = info[2].at - info[1].at
      expect(gap).toBeGreaterThanOrEqual(900)
      expect(gap).toBeLessThanOrEqual(START_RETRY.firstMillis + 2000)
      expect(cti.requestsTo('/store/')).toHaveLength(1)
    } finally {
      await node.stop()
      await cti.stop()
    }
  }, 30_000)
})

describe('progress', () => {
  test('at most every 5 s: percent, documents per second, time left', () => {
    let t = 0
    const logged: any[] = []
    const reports: PassProgress[] = []
    const p = new Progress(
      { info: (msg: string, f: any) => logged.push({ msg, ...f }), warn: () => {} } as any,
      'snapshot load',
      { consumer: 'iocs' },
      () => t,
      5000,
      async (r) => void reports.push(r),
    )
    t = 2000
    p.tick(100, 0.1)
    expect(logged).toHaveLength(0)
    t = 5000
    p.tick(400, 0.25)
    t = 6000
    p.tick(100, 0.3)
    expect(logged).toEqual([
      { msg: 'snapshot load in progress', consumer: 'iocs', documents: 500, percent: 25, docs_per_second: 100, eta_seconds: 15 },
    ])
    expect(reports).toEqual([
      {
        phase: 'snapshot load',
        documents: 500,
        percent: 25,
        docs_per_second: 100,
        eta_seconds: 15,
        updated_at: new Date(5000).toISOString(),
      },
    ])
  })

  test('the consumer document shows progress during a pass, and afterwards the outcome and duration of the last pass', async () => {
    const seen: any[] = []
    let inner!: Store
    let harness!: SyncHarness
    h = harness = await startSyncHarness({
      node: (cti) => ({
        'plugins.content_manager.catalog.iocs': cti.consumer('t1-iocs-5', 'public-iocs-5').url,
        'plugins.content_manager.max_items_per_bulk': 10,
      }),
      wrapStore: (s) => {
        inner = s
        // Each bulk "takes" 6 s of the pass's clock, and a reader looks at the consumer document.
        return beforeEachBulk(s, async () => {
          harness.advance(6000)
          const doc = await inner.get({ index: '.svc-cti-consumers', id: 'cti:catalog:consumer:iocs' }).catch(() => undefined)
          if (doc?.found && (doc._source as any).progress) seen.push((doc._source as any).progress)
        })
      },
    })
    const c = harness.cti.consumer('t1-iocs-5', 'public-iocs-5')
    for (let n = 1; n <= 60; n++) c.create(String(n), payloads.ioc(String(n)))
    c.publishSnapshot({ linesPerEntry: 10 })
    const r = await harness.sync.run('test')
    expect(typeof r).toBe('object')
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.at(-1)).toMatchObject({ phase: 'snapshot load', percent: expect.any(Number), docs_per_second: expect.any(Number) })
    const state = await harness.state('iocs')
    expect(state!.progress).toBeUndefined()
    expect(state!.last_pass!.duration_millis).toBeGreaterThanOrEqual(6000)
    expect(state!.last_pass).toMatchObject({ outcome: 'ready', updated: true })
    expect(harness.lines.some((l) => l.includes('"snapshot load in progress"') && l.includes('eta_seconds'))).toBe(true)
  })
})

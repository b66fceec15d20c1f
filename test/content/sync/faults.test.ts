// Faults of the CTI feed (issue 15 item 5), one test each: the consumer ends as the spec says
// (`failed`, or the pass deferred), content already loaded stays intact and readable, and the next
// run resumes from the last checkpoint.
import { afterEach, describe, expect, test } from 'bun:test'
import { payloads, type FakeConsumer } from '../../fixtures/cti/server'
import { ALIAS, RULESET_FEED, seedRuleset, startSyncHarness, type SyncHarness, runPass } from './harness'

let h: SyncHarness
afterEach(async () => {
  await h?.stop()
})

const WINDOW = { 'plugins.content_manager.max_items_per_bulk': 10 }

const pass = () => runPass(h.sync)
/** The first log line with this message, parsed. */
const logged = (msg: string) => h.lines.map((l) => JSON.parse(l)).find((l) => l.msg === msg)

/** A loaded ruleset consumer (snapshot of 5 rules) with 40 new rules in the feed after it. */
async function loadedWithChanges(): Promise<{ c: FakeConsumer; base: number }> {
  const c = seedRuleset(h.cti, { rules: 5 })
  c.publishSnapshot()
  await pass()
  const base = c.lastOffset
  for (let i = 0; i < 40; i++) c.create(`new-${i}`, payloads.rule(`new-${i}`))
  return { c, base }
}

const windows = () => h.cti.requestsTo(/\/changes$/).map((q) => Number(q.query.from_offset))
const ruleIds = async () => [...(await h.docs(ALIAS.rules)).keys()]

describe('CTI faults', () => {
  test('429 storm with Retry-After, then without it: the pass is deferred at its checkpoint, loaded content stays, the next run resumes there', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), ...WINDOW }) })
    const { c, base } = await loadedWithChanges()
    // Window 2 meets a storm that outlasts the retries (1 + 3 answers), half with Retry-After.
    h.cti.inject({ path: /\/changes$/, status: 429, retryAfter: '2', after: 1, times: 2 })
    h.cti.inject({ path: /\/changes$/, status: 429, after: 1, times: 2 })
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'failed', deferred: true })
    expect(h.waits).toEqual([2000, 2000, 120_000])
    const state = await h.state('ruleset')
    expect(state).toMatchObject({ status: 'failed', local_offset: base + 10 })
    expect(state!.last_pass).toMatchObject({ outcome: 'deferred' })
    expect((await ruleIds()).length).toBe(5 + 10)
    h.cti.clear()
    expect((await pass()).consumers.ruleset).toMatchObject({ status: 'ready' })
    expect(windows()[0]).toBe(base + 10)
    expect((await ruleIds()).length).toBe(45)
    expect(await h.state('ruleset')).toMatchObject({ status: 'ready', local_offset: c.lastOffset })
  })

  test('5xx mid-feed: failed after its one retry, checkpoint kept, content readable; the next run resumes from the checkpoint', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), ...WINDOW }) })
    const { c, base } = await loadedWithChanges()
    h.cti.inject({ path: /\/changes$/, status: 502, after: 2 })
    const r = await pass()
    expect(r.retried).toBe(true)
    // The retry went on from the checkpoint the failure left and finished the feed.
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready' })
    expect(windows()).toEqual([base, base + 10, base + 20, base + 20, base + 30])
    expect(await h.state('ruleset')).toMatchObject({ status: 'ready', local_offset: c.lastOffset })

    c.create('late', payloads.rule('late'))
    h.cti.clear()
    h.cti.inject({ path: /\/changes$/, status: 503, times: 2 })
    expect((await pass()).consumers.ruleset).toMatchObject({ status: 'failed' })
    expect(await h.state('ruleset')).toMatchObject({ status: 'failed', local_offset: c.lastOffset - 1 })
    expect((await ruleIds()).length).toBe(45)
  })

  test('time-out of the CTI API (client.timeout): the window is retried from its checkpoint', async () => {
    h = await startSyncHarness({ node: (cti) => ({ ...RULESET_FEED(cti), ...WINDOW, 'plugins.content_manager.client.timeout': 10 }) })
    const { c, base } = await loadedWithChanges()
    h.cti.inject({ path: /\/changes$/, status: 200, body: '{"data":[]}', delayMs: 10_500, after: 3 })
    const r = await pass()
    expect(r.retried).toBe(true)
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready' })
    expect(windows()).toEqual([base, base + 10, base + 20, base + 30, base + 30])
    expect((await ruleIds()).length).toBe(45)
    expect(await h.state('ruleset')).toMatchObject({ local_offset: c.lastOffset })
  }, 30_000)

  test('a corrupt NDJSON line in a snapshot is skipped and counted; the rest loads and the consumer is ready', async () => {
    h = await startSyncHarness({ node: RULESET_FEED })
    const c = seedRuleset(h.cti, { rules: 3 })
    c.publishSnapshot({
      rawLines: [
        '{"resource":"broken","payload":{"type":"rule","document":{"id":"b"',
        JSON.stringify({ resource: 'r9', offset: 1, payload: payloads.rule('r9') }),
      ],
    })
    const r = await pass()
    expect(r.consumers.ruleset).toMatchObject({ status: 'ready', loadedFrom: 'remote' })
    expect((await ruleIds()).sort()).toEqual(['r9', 'rule-1', 'rule-2', 'rule-3'])
    const warning = h.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'snapshot lines skipped')
    expect(warning).toMatchObject({ entry: 'raw.json', unparseable: 1 })
  })

  // A change the consumer cannot apply, what it logs, and a good change after it that must apply.
  const unappliable: Array<{
    what: string
    bad: (c: ReturnType<typeof seedRuleset>) => number
    warning: string
    detail: object
    next: [string, string]
  }> = [
    {
      what: 'a change with an unknown operation is skipped with a warning; the changes after it apply',
      bad: (c) => c.raw({ type: 'rename', resource: 'rule-1', payload: { to: 'x' } }),
      warning: 'change of unknown type skipped',
      detail: { type: 'rename' },
      next: ['rule-2', 'high'],
    },
    {
      what: 'a patch to a missing document is skipped with a warning (the feed does not stall there); the rest applies',
      bad: (c) => c.update('never-created', [{ op: 'replace', path: '/document/level', value: 'high' }]),
      warning: 'update of a document that is not stored; skipped',
      detail: { resource: 'never-created' },
      next: ['rule-1', 'medium'],
    },
  ]
  for (const { what, bad, warning, detail, next } of unappliable)
    test(what, async () => {
      h = await startSyncHarness({ node: RULESET_FEED })
      const c = seedRuleset(h.cti, { rules: 2 })
      c.publishSnapshot()
      await pass()
      const offset = bad(c)
      const [rule, level] = next
      c.update(rule, [{ op: 'replace', path: '/document/level', value: level }])
      const r = await pass()
      expect(r.consumers.ruleset).toMatchObject({ status: 'ready', updated: true })
      expect((await h.docs(ALIAS.rules)).get(rule).document.level).toBe(level)
      expect(logged(warning)).toMatchObject({ offset, ...detail })
      expect(await h.state('ruleset')).toMatchObject({ status: 'ready', local_offset: c.lastOffset })
    })
})

// Correlation and filter rules through the rules API (Sigma YAML over real HTTP), run by a user
// detector over events in the security events stream: the specification's "failed logins followed
// by a successful login" chain fires for exactly the expected users, a filter rule suppresses a
// service account, the findings link what fired them, and a restart mid-window changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createRuleset } from '../../../src/ruleset'
import { detectorBody, type RulesetServer, startRulesetServer } from '../harness'
import { CORRELATION_STATE_INDEX } from '../../../src/ruleset/indices'
import { oldWindow, writeOldState } from './legacy-format'
import { specChain } from './spec-example'
import { actionRule } from '../../helpers/sigma-rules'

const BASE = '/_plugins/_security_analytics'
const T0 = Date.UTC(2026, 8, 10, 12, 0, 0)

const FAILED = actionRule({
  title: 'Single failed login',
  id: '53ba33fd-3a50-4468-a5ef-c583635cfa92',
  name: 'failed_login',
  action: 'login_failed',
})
const SUCCESS = actionRule({
  title: 'Successful login',
  id: '4d0a2c83-c62c-4ed4-b475-c7e23a9269b8',
  name: 'successful_login',
  action: 'login_success',
})
const { multiple: MULTIPLE, chain: CHAIN } = specChain('user.name', 5)
const FILTER = `title: Backup account logs in by retrying
logsource:
    product: linux
filter:
    rules:
        - failed_login
    selection:
        user.name: svc_backup
    condition: selection
`

type Ev = Record<string, unknown>
let clock = 0
const login = (user: string, ok: boolean, at = clock++): Ev => ({
  '@timestamp': new Date(T0 + at * 10_000).toISOString(),
  event: { action: ok ? 'login_success' : 'login_failed' },
  user: { name: user },
  svc: { integration: { name: 'linux', category: 'security' } },
})
/** Five failures and a success for one user, 10 s apart. */
const attack = (user: string) => [...Array.from({ length: 5 }, () => login(user, false)), login(user, true)]

describe('correlation rules in a detector', () => {
  let s: RulesetServer
  let detectorId: string
  const ids: Record<string, string> = {}
  const post = async (yaml: string) => {
    const r = await s.request('POST', `${BASE}/rules?category=linux`, { raw: yaml })
    expect(r.status).toBe(201)
    return r.body._id as string
  }
  const correlationFindings = async () =>
    (await s.findings()).filter((f) => f._source.svc.correlation).map((f) => f._source.svc) as Array<Record<string, any>>

  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
    ids.failed = await post(FAILED)
    ids.success = await post(SUCCESS)
    ids.multiple = await post(MULTIPLE)
    ids.chain = await post(CHAIN)
    ids.filter = await post(FILTER)
    // The detector holds the outer correlation only: its chain and base rules are pulled in.
    const d = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ custom: [ids.chain] }) })
    expect(d.status).toBe(201)
    detectorId = d.body._id
    // Creating the detector baselines it: only events indexed from now on are its business.
    await s.ruleset.scheduler.runLeased(detectorId)
  })
  afterAll(async () => {
    await s.stop()
  })

  test('correlation and filter documents are listed and searched like rules', async () => {
    const r = await s.request('POST', `${BASE}/rules/_search?pre_packaged=false`, {
      body: { size: 20, query: { terms: { 'rule.kind': ['correlation', 'filter'] } } },
    })
    expect(r.status).toBe(200)
    const got = r.body.hits.hits.map((h: any) => [h._source.title, h._source.kind]).sort()
    expect(got).toEqual([
      ['Backup account logs in by retrying', 'filter'],
      ['Correlation - Multiple Failed Logins Followed by Successful Login', 'correlation'],
      ['Multiple failed logons', 'correlation'],
    ])
    const byName = await s.request('POST', `${BASE}/rules/_search?pre_packaged=false`, {
      body: { query: { term: { 'rule.name': 'multiple_failed_login' } } },
    })
    expect(byName.body.hits.hits.map((h: any) => h._id)).toEqual([ids.multiple])
  })

  test('an invalid correlation rule is a 400 naming the construct', async () => {
    const r = await s.request('POST', `${BASE}/rules?category=linux`, { raw: MULTIPLE.replace('timespan: 10m', 'timespan: ten minutes') })
    expect(r.status).toBe(400)
    expect(r.body.error?.reason ?? r.body.message).toContain("correlation 'timespan'")
    const f = await s.request('POST', `${BASE}/rules?category=linux`, { raw: FILTER.replace('condition: selection', 'condition: nope') })
    expect(f.status).toBe(400)
    expect(JSON.stringify(f.body)).toContain("unknown search identifier 'nope'")
  })

  test('the chain fires for the attacked user only; the filtered account and a short burst do not', async () => {
    const events = [...attack('alice'), ...attack('svc_backup'), ...attack('bob').slice(2)]
    await s.index(events)
    const outcome = await s.ruleset.scheduler.runLeased(detectorId)
    expect(outcome?.status).toBe('ran')
    const found = await correlationFindings()
    const summary = found.map((f) => [f.rule.id, f.correlation.group['user.name']]).sort()
    expect(summary).toEqual([[ids.chain, 'alice']])
    // Rules only referenced by the correlation (base rules and the inner correlation of the chain,
    // generate: false) write no findings of their own.
    expect((await s.findings()).length).toBe(1)
    const outer = found.find((f) => f.rule.id === ids.chain)!
    expect(outer.rule.level).toBe('high')
    expect(outer.correlation.rule).toMatchObject({ type: 'temporal_ordered' })
    expect(outer.correlation.window.end).toBe(events[5]['@timestamp'])
    expect(outer.correlation.events.map((e: any) => e.rule)).toEqual([ids.multiple, ids.success])
    expect(outer.correlation.findings).toEqual([])
  })

  test('a detector restarted mid-window finishes the correlation from the stored window', async () => {
    const events = attack('carol')
    await s.index(events.slice(0, 3))
    await s.ruleset.scheduler.runLeased(detectorId)
    await s.restart()
    await s.index(events.slice(3))
    await s.ruleset.scheduler.runLeased(detectorId)
    const carol = (await correlationFindings()).filter((f) => f.correlation.group['user.name'] === 'carol')
    expect(carol.map((f) => f.rule.id)).toEqual([ids.chain])
  })

  test('failures indexed after the success, with earlier timestamps, still complete the ordered chain', async () => {
    const events = attack('frank').map((e, i) => ({ ...e, '@timestamp': new Date(T0 + 9_000_000 + i * 1000).toISOString() }))
    await s.index([events[5], events[0], events[1]]) // the success and two failures first
    await s.ruleset.scheduler.runLeased(detectorId)
    await s.index([events[3], events[2], events[4]]) // the remaining failures, late and shuffled
    await s.ruleset.scheduler.runLeased(detectorId)
    const frank = (await correlationFindings()).filter((f) => f.correlation.group['user.name'] === 'frank')
    expect(frank.map((f) => f.rule.id)).toEqual([ids.chain])
    expect(frank[0].correlation.window.end).toBe(events[5]['@timestamp'])
  })

  test('two nodes sharing the store take turns running the detector and complete one correlation, once', async () => {
    // A second node: its own ruleset (scheduler, findings pipeline, windows client) over the same store.
    const other = createRuleset(s.deps)
    try {
      const events = attack('erin').map((e, i) => ({ ...e, '@timestamp': new Date(T0 + 5_400_000 + i * 1000).toISOString() }))
      await s.index(events.slice(0, 2))
      await s.ruleset.scheduler.runLeased(detectorId)
      await s.index(events.slice(2, 5))
      expect((await other.scheduler.runLeased(detectorId))?.status).toBe('ran')
      await s.index(events.slice(5))
      await s.ruleset.scheduler.runLeased(detectorId)
      await other.scheduler.runLeased(detectorId) // nothing new: no second finding
      const erin = (await correlationFindings()).filter((f) => f.correlation.group['user.name'] === 'erin')
      expect(erin.map((f) => f.rule.id)).toEqual([ids.chain])
    } finally {
      await other.stop()
    }
  })

  test('deleting the filter rule lets the next run correlate the account again', async () => {
    const del = await s.request('DELETE', `${BASE}/rules/${ids.filter}`)
    expect(del.status).toBe(200)
    await s.index(attack('svc_backup').map((e, i) => ({ ...e, '@timestamp': new Date(T0 + 3_600_000 + i * 1000).toISOString() })))
    await s.ruleset.scheduler.runLeased(detectorId)
    const backup = (await correlationFindings()).filter((f) => f.correlation.group['user.name'] === 'svc_backup')
    expect(backup).toHaveLength(1)
  })

  test('an upgrade mid-window: 3 failures in the old state layout and 2 after the upgrade fire once', async () => {
    const d = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ name: 'upgraded', custom: [ids.multiple] }) })
    expect(d.status).toBe(201)
    const upgraded = d.body._id as string
    await s.ruleset.scheduler.runLeased(upgraded)
    const at = (i: number) => T0 + 10_800_000 + i * 1000
    // What the old version stored for this detector after seeing gina's first three failures.
    const old = oldWindow([0, 1, 2].map((i): [string, number] => [`before-${i}`, at(i)]))
    await writeOldState(s.deps.store, upgraded, ids.multiple, ['user.name'], [{ group: { 'user.name': 'gina' }, window: old }])
    const oldDocs = async () =>
      (
        await s.deps.store.search({ index: CORRELATION_STATE_INDEX, body: { size: 100, query: { term: { scope: upgraded } } } })
      ).hits.hits.filter((h) => 'groups' in (h._source ?? {}))
    expect(await oldDocs()).toHaveLength(1)
    await s.index([3, 4].map((i) => ({ ...login('gina', false), '@timestamp': new Date(at(i)).toISOString() })))
    await s.ruleset.scheduler.runLeased(upgraded)
    await s.index([{ ...login('gina', false), '@timestamp': new Date(at(5)).toISOString() }])
    await s.ruleset.scheduler.runLeased(upgraded)
    const gina = (await s.findings()).filter((f) => f._source.svc.detector.id === upgraded).map((f) => f._source.svc.correlation)
    expect(gina.map((c) => [c.group['user.name'], c.event_count])).toEqual([['gina', 5]])
    expect(gina[0].events.slice(0, 3).map((e: any) => e.id)).toEqual(['before-0', 'before-1', 'before-2'])
    expect(await oldDocs()).toHaveLength(0)
  })

  test('a detector holding the inner correlation too writes its findings, linked from the outer one', async () => {
    const d = await s.request('POST', `${BASE}/detectors`, { body: detectorBody({ name: 'both', custom: [ids.multiple, ids.chain] }) })
    expect(d.status).toBe(201)
    await s.ruleset.scheduler.runLeased(d.body._id)
    await s.index(attack('dave').map((e, i) => ({ ...e, '@timestamp': new Date(T0 + 7_200_000 + i * 1000).toISOString() })))
    await s.ruleset.scheduler.runLeased(d.body._id)
    const mine = (await s.findings()).filter((f) => f._source.svc.detector.id === d.body._id).map((f) => f._source.svc)
    expect(mine.map((f) => f.rule.id).sort()).toEqual([ids.chain, ids.multiple].sort())
    const inner = mine.find((f) => f.rule.id === ids.multiple)!
    expect(inner.correlation.event_count).toBe(5)
    expect(inner.correlation.events.every((e: any) => e.rule === ids.failed)).toBe(true)
    const outer = mine.find((f) => f.rule.id === ids.chain)!
    expect(outer.correlation.findings).toHaveLength(1)
  })
})

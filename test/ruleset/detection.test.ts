// A standard detector over the security events stream: exactly the expected findings for a mixed
// stream of matching and non-matching events, across a restart and a crash between "findings
// written" and "checkpoint saved", with no duplicate and no missed finding.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadCheckpoint, saveCheckpoint } from '../../src/ruleset/detection/checkpoint'
import { ctiRule, LINUX, type RulesetServer, startRulesetServer, linuxDetector } from './harness'

type Ev = Record<string, any>

// Each rule with an independent oracle written by hand from the rule's Sigma semantics.
const RULES: Array<{ doc: ReturnType<typeof ctiRule>; oracle: (e: Ev) => boolean }> = [
  {
    doc: ctiRule('r-failed-login', { sel: { 'event.action': 'login_failed' }, condition: 'sel' }, { level: 'high' }),
    oracle: (e) => String(e.event?.action ?? '').toLowerCase() === 'login_failed',
  },
  {
    doc: ctiRule('r-sudo', { sel: { 'process.command_line|contains': 'sudo ' }, condition: 'sel' }),
    oracle: (e) =>
      String(e.process?.command_line ?? '')
        .toLowerCase()
        .includes('sudo '),
  },
  {
    doc: ctiRule('r-root-failure', { a: { 'user.name': 'root' }, b: { 'event.outcome': 'failure' }, condition: 'a and not b' }),
    oracle: (e) => String(e.user?.name ?? '').toLowerCase() === 'root' && String(e.event?.outcome ?? '').toLowerCase() !== 'failure',
  },
]

let seq = 0
function event(kind: number): Ev {
  const n = ++seq
  const base: Ev = {
    '@timestamp': new Date(Date.UTC(2026, 8, 10, 12, 0, n % 60)).toISOString(),
    agent: { id: '001', name: 'web-01' },
    svc: { integration: { name: 'linux', category: 'security' } },
    message: `event ${n}`,
  }
  switch (kind % 7) {
    case 0:
      return { ...base, event: { action: 'login_failed', outcome: 'failure' }, user: { name: 'alice' } }
    case 1:
      return { ...base, event: { action: 'LOGIN_FAILED', outcome: 'failure' }, user: { name: 'root' } } // case-insensitive match, not root-success
    case 2:
      return { ...base, event: { action: 'login_success', outcome: 'success' }, user: { name: 'root' } }
    case 3:
      return { ...base, event: { action: 'exec' }, process: { command_line: 'sudo rm -rf /tmp/x' }, user: { name: 'bob' } }
    case 4:
      return { ...base, event: { action: 'exec' }, process: { command_line: 'pseudo-sudo' }, user: { name: 'bob' } } // near miss: no space
    case 5:
      return { ...base, event: { action: 'login_faile' }, user: { name: 'rooter' } } // near misses everywhere
    default:
      return { ...base, event: { action: 'exec', outcome: 'unknown' }, process: { command_line: 'SUDO  ls' }, user: { name: 'ROOT' } } // 'SUDO ' contains-match; root w/o failure
  }
}

const expected = new Set<string>()
function expect_(ids: Array<{ _id: string }>, events: Ev[]) {
  events.forEach((e, i) => {
    for (const r of RULES) if (r.oracle(e)) expected.add(`${ids[i]._id}|${r.doc.id}`)
  })
}

async function actual(s: RulesetServer): Promise<string[]> {
  return (await s.findings()).map((f) => `${f._source.event.doc_id}|${f._source.svc.rule.id}`)
}

describe('detection runs', () => {
  let s: RulesetServer
  const detectorId = LINUX.id

  beforeAll(async () => {
    s = await startRulesetServer({ linux: true })
    for (const r of RULES) await s.ruleset.sync.upsertRule('standard', r.doc, LINUX.id, false)
    // Events from before the detector exists are not its business.
    await s.index([0, 1, 3].map(event))
    await linuxDetector(
      s,
      RULES.map((r) => r.doc.id),
    )
  })
  afterAll(async () => {
    await s.stop()
  })

  test('a run finds exactly the expected (event, rule) pairs', async () => {
    const events = Array.from({ length: 40 }, (_, i) => event(i))
    expect_(await s.index(events), events)
    const outcome = await s.ruleset.scheduler.runLeased(detectorId)
    expect(outcome?.status).toBe('ran')
    expect(outcome && 'documents' in outcome && outcome.documents).toBe(40)
    const got = await actual(s)
    expect(got.length).toBe(expected.size)
    expect(new Set(got)).toEqual(expected)
    expect(expected.size).toBeGreaterThan(20)
  })

  test('a finding has the reference 4.6 shape', async () => {
    const [f] = (await s.findings()).filter((x) => x._source.svc.rule.id === 'r-failed-login')
    const src = f._source
    expect(src.event.action.toLowerCase()).toBe('login_failed')
    expect(src.event.index).toMatch(/^\.ds-svc-events-v5-security-/)
    expect(typeof src.event.doc_id).toBe('string')
    expect(src.svc.rule).toMatchObject({ id: 'r-failed-login', title: 'Rule r-failed-login', level: 'high', status: 'stable' })
    expect(src.svc.rule.tags).toEqual(['high', 'linux', 'attack.t1110'])
    expect(src.svc.detector).toEqual({ id: detectorId, type: 'linux' })
    expect(src.svc.integration).toEqual({ name: 'linux', category: 'security' })
    expect(src['@timestamp']).toMatch(/^2026-09-10T12:00:/)
  })

  test('a second run with nothing new writes nothing', async () => {
    const before = (await s.findings()).length
    const outcome = await s.ruleset.scheduler.runLeased(detectorId)
    expect(outcome && 'documents' in outcome && outcome.documents).toBe(0)
    expect((await s.findings()).length).toBe(before)
  })

  test('events indexed before and after a restart are each evaluated once', async () => {
    const before = Array.from({ length: 15 }, (_, i) => event(i + 3))
    expect_(await s.index(before), before)
    await s.restart()
    const after = Array.from({ length: 15 }, (_, i) => event(i + 5))
    expect_(await s.index(after), after)
    const outcome = await s.ruleset.scheduler.runLeased(detectorId)
    expect(outcome && 'documents' in outcome && outcome.documents).toBe(30)
    const got = await actual(s)
    expect(got.length).toBe(expected.size)
    expect(new Set(got)).toEqual(expected)
  })

  test('a crash after writing findings but before saving the checkpoint repeats the batch without duplicates', async () => {
    const cp = (await loadCheckpoint(s.deps.store, detectorId))!
    const events = Array.from({ length: 21 }, (_, i) => event(i))
    expect_(await s.index(events), events)
    const outcome = await s.ruleset.scheduler.runLeased(detectorId)
    expect(outcome && 'findings' in outcome && outcome.findings).toBeGreaterThan(0)
    // Put the checkpoint back where it was, as if the node died before saving it.
    const now = (await loadCheckpoint(s.deps.store, detectorId))!
    await saveCheckpoint(s.deps.store, { ...now.checkpoint, indices: cp.checkpoint.indices }, now)
    await s.restart()
    const again = await s.ruleset.scheduler.runLeased(detectorId)
    expect(again && 'documents' in again && again.documents).toBe(21)
    expect(again && 'duplicates' in again && again.duplicates).toBe(outcome && 'findings' in outcome ? outcome.findings : -1)
    const got = await actual(s)
    expect(got.length).toBe(expected.size)
    expect(new Set(got)).toEqual(expected)
  })

  test('a disabled detector finds nothing, and what was indexed while it was off is never evaluated', async () => {
    const count = (await s.findings()).length
    await s.ruleset.sync.setDetectorEnabled(detectorId, false, 'admin')
    await s.index([0, 1, 3].map(event)) // all matching, never to be evaluated
    expect((await s.ruleset.scheduler.runLeased(detectorId))?.status).toBe('disabled')
    await s.ruleset.sync.setDetectorEnabled(detectorId, true, 'admin')
    const events = [event(0), event(4)]
    expect_(await s.index(events), events)
    const outcome = await s.ruleset.scheduler.runLeased(detectorId)
    expect(outcome && 'documents' in outcome && outcome.documents).toBe(2)
    const got = await actual(s)
    expect(got.length).toBe(count + 1)
    expect(new Set(got)).toEqual(expected)
  })

  test('the scheduler runs a due detector once per interval', async () => {
    const events = [event(0)]
    expect_(await s.index(events), events)
    // Not due yet: it ran a moment ago and its interval is 2 minutes (the CTI default).
    await s.ruleset.scheduler.tick()
    expect((await actual(s)).length).toBe(expected.size - 1)
    const cp = (await loadCheckpoint(s.deps.store, detectorId))!
    // Two minutes pass: the last run started and ended that much earlier.
    const earlier = (t: number) => t - 2 * 60_000
    const last = cp.checkpoint.last_run!
    await saveCheckpoint(
      s.deps.store,
      {
        ...cp.checkpoint,
        last_run_at: earlier(cp.checkpoint.last_run_at),
        last_run: { ...last, started_at: earlier(last.started_at), finished_at: earlier(last.finished_at) },
      },
      cp,
    )
    await s.ruleset.scheduler.tick()
    expect(new Set(await actual(s))).toEqual(expected)
  })
})

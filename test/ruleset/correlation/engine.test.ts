// Correlation engine vectors, built from the Sigma correlation rules specification's own examples
// (v2.1: event_count "Many failed logins", value_count "Failed login", temporal recon commands,
// temporal_ordered "failed logins followed by a successful login", field name aliases), plus
// every condition form, out-of-order arrival, a restart and two nodes sharing the windows.
import { describe, expect, test } from 'bun:test'
import {
  type CorrelationFinding,
  type CorrelationInput,
  correlationRule,
  Correlator,
  holds,
  MemoryGroups,
  parseCorrelationDocument,
  type ResolvedCorrelation,
} from '../../../src/ruleset/correlation'
import { SigmaError } from '../../../src/ruleset/sigma'
import { specChain } from './spec-example'

const T0 = Date.UTC(2026, 0, 1, 12, 0, 0)
const sec = (n: number) => T0 + n * 1000
const min = (n: number) => T0 + n * 60_000

/** A correlation rule from YAML; `sources` resolves each `rules` entry (id or name) to a rule id. */
function rule(yaml: string, id: string, resolve: Record<string, string> = {}): ResolvedCorrelation {
  const r = correlationRule(parseCorrelationDocument(yaml), id)
  return { ...r, sources: r.refs.map((ref) => resolve[ref] ?? ref) }
}

let n = 0
function ev(ruleId: string, time: number, source: Record<string, unknown>): CorrelationInput {
  return { ruleId, time, index: 'logs', id: `e${++n}`, source }
}

async function run(rules: ResolvedCorrelation[], batches: CorrelationInput[][], groups = new MemoryGroups()) {
  const c = new Correlator('detector-1', rules, groups)
  const out: CorrelationFinding[] = []
  for (const b of batches) out.push(...(await c.ingest(b)))
  return out
}

const summary = (fs: CorrelationFinding[]) => fs.map((f) => `${f.rule.id}|${JSON.stringify(f.group)}|${f.anchor.id}`).sort()

const MANY_FAILED = `
title: Many failed logins
id: 0e95725d-7320-415d-80f7-004da920fc11
correlation:
    type: event_count
    rules:
        - 5638f7c0-ac70-491d-8465-2a65075e0d86
    group-by:
        - ComputerName
    timespan: 1h
    condition:
        gte: 100
`

describe('event_count (spec: many failed logins, gte 100 per ComputerName in 1h)', () => {
  const r = rule(MANY_FAILED, 'c-many')
  const fail = (t: number, host = 'dc1') => ev('5638f7c0-ac70-491d-8465-2a65075e0d86', t, { ComputerName: host })

  test('the 100th event within the hour fires once, at that event; 99 do not', async () => {
    const events = Array.from({ length: 120 }, (_, i) => fail(sec(i * 30)))
    expect(await run([r], [events.slice(0, 99)])).toHaveLength(0)
    const fs = await run([r], [events])
    expect(fs).toHaveLength(1)
    expect(fs[0].anchor.id).toBe(events[99].id)
    expect(fs[0].group).toEqual({ ComputerName: 'dc1' })
    expect(fs[0].events).toHaveLength(100)
    expect(fs[0].window).toEqual({ start: events[0].time, end: events[99].time })
  })

  test('100 events spread over more than an hour, or over two hosts, do not fire', async () => {
    expect(await run([r], [Array.from({ length: 100 }, (_, i) => fail(sec(i * 37)))])).toHaveLength(0) // 61 min
    expect(await run([r], [Array.from({ length: 100 }, (_, i) => fail(sec(i), i % 2 ? 'a' : 'b'))])).toHaveLength(0)
  })

  test('events without the group-by field are not counted', async () => {
    const events = Array.from({ length: 100 }, (_, i) =>
      ev('5638f7c0-ac70-491d-8465-2a65075e0d86', sec(i), i === 5 ? {} : { ComputerName: 'x' }),
    )
    expect(await run([r], [events])).toHaveLength(0)
  })

  test('a second burst more than an hour later fires again; more events in the same burst do not', async () => {
    const burst = (from: number) => Array.from({ length: 150 }, (_, i) => fail(from + i * 1000))
    const fs = await run([r], [burst(sec(0)), burst(min(200))])
    expect(fs).toHaveLength(2)
  })
})

describe('value_count (spec: failed login, more than 100 users per source and destination in a day)', () => {
  const r = rule(
    `
title: Failed login
id: 0e95725d-7320-415d-80f7-004da920fc12
correlation:
    type: value_count
    rules:
        - 5638f7c0-ac70-491d-8465-2a65075e0d86
    group-by:
        - ComputerName
        - WorkstationName
    timespan: 1d
    condition:
        field: User
        gte: 100
`,
    'c-users',
  )
  const fail = (t: number, user: string, ws = 'ws1') =>
    ev('5638f7c0-ac70-491d-8465-2a65075e0d86', t, { ComputerName: 'dc1', WorkstationName: ws, User: user })

  test('100 distinct users fire; 200 events over 99 users do not', async () => {
    expect(await run([r], [Array.from({ length: 200 }, (_, i) => fail(min(i), `u${i % 99}`))])).toHaveLength(0)
    const fs = await run([r], [Array.from({ length: 100 }, (_, i) => fail(min(i), `u${i}`))])
    expect(fs).toHaveLength(1)
    expect(fs[0].group).toEqual({ ComputerName: 'dc1', WorkstationName: 'ws1' })
  })

  test('group-by fields are AND-ed: the same users split over two workstations do not fire', async () => {
    expect(await run([r], [Array.from({ length: 100 }, (_, i) => fail(min(i), `u${i}`, i % 2 ? 'a' : 'b'))])).toHaveLength(0)
  })
})

const RECON = `
title: recon
correlation:
    type: temporal
    rules:
        - recon_cmd_a
        - recon_cmd_b
        - recon_cmd_c
    group-by:
        - ComputerName
        - User
    timespan: 5m
`

describe('temporal (spec: three recon commands in any order within 5 minutes, same host and user)', () => {
  const r = rule(RECON, 'c-recon', { recon_cmd_a: 'ra', recon_cmd_b: 'rb', recon_cmd_c: 'rc' })
  const cmd = (id: string, t: number, user = 'bob') => ev(id, t, { ComputerName: 'h1', User: user })

  test('all three in any order fire; two of them do not', async () => {
    expect(await run([r], [[cmd('rc', min(0)), cmd('ra', min(1)), cmd('rb', min(4))]])).toHaveLength(1)
    expect(await run([r], [[cmd('rc', min(0)), cmd('ra', min(1)), cmd('ra', min(2))]])).toHaveLength(0)
  })

  test('more than 5 minutes apart, or another user, do not fire', async () => {
    expect(await run([r], [[cmd('ra', min(0)), cmd('rb', min(1)), cmd('rc', min(6))]])).toHaveLength(0)
    expect(await run([r], [[cmd('ra', min(0)), cmd('rb', min(1)), cmd('rc', min(2), 'eve')]])).toHaveLength(0)
  })
})

// The specification's complete example: a chain of an event_count and a temporal_ordered rule.
const { multiple: MULTIPLE_FAILED, chain: CHAIN } = specChain()

describe('temporal_ordered (spec example: multiple failed logins followed by a successful login)', () => {
  const inner = rule(MULTIPLE_FAILED, 'a8418a5a', { failed_login: '53ba33fd' })
  const outer = rule(CHAIN, 'b180ead8', { multiple_failed_login: 'a8418a5a', successful_login: '4d0a2c83' })
  const failed = (t: number, user = 'alice') => ev('53ba33fd', t, { User: user, EventID: 4625 })
  const success = (t: number, user = 'alice') => ev('4d0a2c83', t, { User: user, EventID: 4624 })

  test('ten failures then a success fire both rules of the chain (rules given outer first)', async () => {
    const events = [...Array.from({ length: 10 }, (_, i) => failed(sec(i * 10))), success(sec(200))]
    const fs = await run([outer, inner], [events])
    expect(fs.map((f) => f.rule.id)).toEqual(['a8418a5a', 'b180ead8'])
    const chain = fs[1]
    expect(chain.group).toEqual({ User: 'alice' })
    expect(chain.anchor.id).toBe(events[10].id)
    // The outer finding links the inner finding and the success event.
    expect(chain.events.map((e) => e.rule)).toEqual(['a8418a5a', '4d0a2c83'])
    expect(chain.events[0].finding).toBe(fs[0].id)
  })

  test('a success before the failures, nine failures, or another user, do not fire the chain', async () => {
    const before = [success(sec(0)), ...Array.from({ length: 10 }, (_, i) => failed(sec(10 + i)))]
    expect((await run([outer, inner], [before])).map((f) => f.rule.id)).toEqual(['a8418a5a'])
    const nine = [...Array.from({ length: 9 }, (_, i) => failed(sec(i))), success(sec(60))]
    expect(await run([outer, inner], [nine])).toHaveLength(0)
    const other = [...Array.from({ length: 10 }, (_, i) => failed(sec(i))), success(sec(60), 'bob')]
    expect((await run([outer, inner], [other])).map((f) => f.rule.id)).toEqual(['a8418a5a'])
  })

  test('a success later than the timespan does not fire', async () => {
    const late = [...Array.from({ length: 10 }, (_, i) => failed(sec(i))), success(min(21))]
    expect((await run([outer, inner], [late])).map((f) => f.rule.id)).toEqual(['a8418a5a'])
  })

  test('a rule chain that loops is refused', () => {
    const a = { ...inner, id: 'x', sources: ['y'] }
    const b = { ...inner, id: 'y', sources: ['x'] }
    expect(() => new Correlator('d', [a, b], new MemoryGroups())).toThrow(/references itself/)
  })
})

describe('aliases (spec: internal_error and new_network_connection with swapped addresses)', () => {
  const r = rule(
    `
title: alias example
correlation:
    type: temporal
    rules:
        - internal_error
        - new_network_connection
    group-by:
        - internal_ip
        - remote_ip
    timespan: 10s
    aliases:
        internal_ip:
            internal_error: destination.ip
            new_network_connection: source.ip
        remote_ip:
            internal_error: source.ip
            new_network_connection: destination.ip
`,
    'c-alias',
    { internal_error: 'r-500', new_network_connection: 'r-conn' },
  )
  const err = (t: number, src: string, dst: string) =>
    ev('r-500', t, { source: { ip: src }, destination: { ip: dst }, http: { response: { status_code: 500 } } })
  const conn = (t: number, src: string, dst: string) => ev('r-conn', t, { source: { ip: src }, destination: { ip: dst } })

  test('the same address as destination in one rule and source in the other join', async () => {
    const fs = await run([r], [[err(sec(0), '203.0.113.5', '10.0.0.1'), conn(sec(5), '10.0.0.1', '203.0.113.5')]])
    expect(fs).toHaveLength(1)
    expect(fs[0].group).toEqual({ internal_ip: '10.0.0.1', remote_ip: '203.0.113.5' })
  })

  test('the same fields (not swapped) or beyond 10s do not join', async () => {
    expect(await run([r], [[err(sec(0), '203.0.113.5', '10.0.0.1'), conn(sec(5), '203.0.113.5', '10.0.0.1')]])).toHaveLength(0)
    expect(await run([r], [[err(sec(0), '203.0.113.5', '10.0.0.1'), conn(sec(11), '10.0.0.1', '203.0.113.5')]])).toHaveLength(0)
  })
})

describe('condition forms', () => {
  test.each([
    [{ gt: 5 }, [5, false], [6, true]],
    [{ gte: 5 }, [4, false], [5, true]],
    [{ lt: 5 }, [5, false], [4, true]],
    [{ lte: 5 }, [6, false], [5, true]],
    [{ eq: 5 }, [4, false], [5, true]],
    [{ neq: 5 }, [5, false], [4, true]],
    [{ gt: 100, lte: 200 }, [100, false], [101, true]],
    [{ gt: 100, lte: 200 }, [201, false], [200, true]],
  ] as const)('%o', (cond, [a, ra], [b, rb]) => {
    expect(holds(cond, a)).toBe(ra)
    expect(holds(cond, b)).toBe(rb)
  })

  test('a range (spec: "101 to 200") fires for a group with 150 events and not for one with 250 at once', async () => {
    const r = rule(
      `
title: range
correlation:
  type: event_count
  rules: [r1]
  group-by: [host]
  timespan: 1h
  condition:
    gt: 100
    lte: 200
`,
      'c-range',
    )
    const fs = await run([r], [Array.from({ length: 150 }, (_, i) => ev('r1', sec(i), { host: 'a' }))])
    expect(fs).toHaveLength(1)
    expect(fs[0].anchor.time).toBe(sec(100)) // the 101st event
  })

  test('eq fires at the exact count', async () => {
    const r = rule(`title: eq\ncorrelation: {type: event_count, rules: [r1], group-by: [h], timespan: 1m, condition: {eq: 3}}`, 'c-eq')
    const fs = await run([r], [Array.from({ length: 5 }, (_, i) => ev('r1', sec(i), { h: 'a' }))])
    expect(fs.map((f) => f.anchor.time)).toEqual([sec(2)])
  })

  test('no group-by: one window for every event', async () => {
    const r = rule(`title: all\ncorrelation: {type: event_count, rules: [r1], timespan: 1m, condition: {gte: 3}}`, 'c-all')
    expect(await run([r], [[ev('r1', sec(0), { h: 'a' }), ev('r1', sec(1), { h: 'b' }), ev('r1', sec(2), {})]])).toHaveLength(1)
  })
})

describe('across time', () => {
  const r = rule(MANY_FAILED, 'c-many')
  const inner = rule(MULTIPLE_FAILED, 'a8418a5a', { failed_login: '53ba33fd' })
  const outer = rule(CHAIN, 'b180ead8', { multiple_failed_login: 'a8418a5a', successful_login: '4d0a2c83' })

  // 3 users, bursts of failures and successes over an hour.
  function stream(): CorrelationInput[] {
    const out: CorrelationInput[] = []
    for (let i = 0; i < 240; i++) {
      const user = ['alice', 'bob', 'carol'][i % 3]
      const t = sec(i * 15)
      out.push(i % 13 === 12 ? ev('4d0a2c83', t, { User: user }) : ev('53ba33fd', t, { User: user, ComputerName: 'dc1' }))
      if (i % 50 === 49) out.push(ev('5638f7c0-ac70-491d-8465-2a65075e0d86', t, { ComputerName: 'dc1' }))
    }
    for (let i = 0; i < 120; i++) out.push(ev('5638f7c0-ac70-491d-8465-2a65075e0d86', sec(i * 20), { ComputerName: 'dc1' }))
    return out.sort((a, b) => a.time - b.time)
  }
  const events = stream()
  const rules = [r, inner, outer]

  test('events shuffled within the window, in small batches, give the same findings as in order', async () => {
    const inOrder = summary(await run(rules, [events]))
    expect(inOrder.length).toBeGreaterThan(3)
    // Swap neighbours (at most a few seconds apart) and deliver in batches of 7.
    const shuffled = [...events]
    for (let i = 0; i + 1 < shuffled.length; i += 2) [shuffled[i], shuffled[i + 1]] = [shuffled[i + 1], shuffled[i]]
    const batches: CorrelationInput[][] = []
    for (let i = 0; i < shuffled.length; i += 7) batches.push(shuffled.slice(i, i + 7))
    expect(summary(await run(rules, batches))).toEqual(inOrder)
    // Reversed batches of 20: each batch arrives newest first.
    const reversed: CorrelationInput[][] = []
    for (let i = 0; i < events.length; i += 20) reversed.push(events.slice(i, i + 20).reverse())
    expect(summary(await run(rules, reversed))).toEqual(inOrder)
  })

  test('a restart (a new engine over the same windows) mid-stream, and a replayed batch, change nothing', async () => {
    const inOrder = summary(await run(rules, [events]))
    const groups = new MemoryGroups()
    const half = Math.floor(events.length / 2)
    const first = await run(rules, [events.slice(0, half)], groups)
    const replay = await run(rules, [events.slice(half - 30, half)], groups) // the page before the crash, again
    const second = await run(rules, [events.slice(half)], groups)
    expect(replay).toHaveLength(0)
    expect(summary([...first, ...second])).toEqual(inOrder)
  })

  test('two nodes taking alternate batches over shared windows find each finding once', async () => {
    const inOrder = summary(await run(rules, [events]))
    const groups = new MemoryGroups()
    const a = new Correlator('detector-1', rules, groups)
    const b = new Correlator('detector-1', rules, groups)
    const out: CorrelationFinding[] = []
    for (let i = 0, k = 0; i < events.length; i += 25, k++) out.push(...(await (k % 2 ? b : a).ingest(events.slice(i, i + 25))))
    expect(summary(out)).toEqual(inOrder)
  })

  test('a write lost to another node is re-read and merged, not overwritten', async () => {
    const groups = new MemoryGroups()
    const racing: typeof groups.save = groups.save.bind(groups)
    let raced = false
    groups.save = async (entries) => {
      if (!raced) {
        raced = true
        // Another node writes the same group first.
        await new Correlator('detector-1', [r], groups).ingest(
          Array.from({ length: 60 }, (_, i) => ev('5638f7c0-ac70-491d-8465-2a65075e0d86', sec(i), { ComputerName: 'dc1' })),
        )
      }
      return racing(entries)
    }
    const fs = await new Correlator('detector-1', [r], groups).ingest(
      Array.from({ length: 40 }, (_, i) => ev('5638f7c0-ac70-491d-8465-2a65075e0d86', sec(100 + i), { ComputerName: 'dc1' })),
    )
    expect(fs).toHaveLength(1) // 60 + 40 = 100 only if the other node's events were kept
  })
})

describe('validation names the construct', () => {
  const bad = (yaml: string) => {
    try {
      correlationRule(parseCorrelationDocument(yaml), 'x')
    } catch (e) {
      expect(e).toBeInstanceOf(SigmaError)
      return (e as SigmaError).construct
    }
    throw new Error('accepted')
  }
  test.each([
    ['title: t\ncorrelation: {type: event_count, rules: [a], timespan: 1h}', "correlation 'condition'"],
    ['title: t\ncorrelation: {type: bogus, rules: [a], timespan: 1h, condition: {gte: 1}}', "correlation 'type'"],
    ['title: t\ncorrelation: {type: event_count, rules: [a], timespan: 1H, condition: {gte: 1}}', "correlation 'timespan'"],
    ['title: t\ncorrelation: {type: event_count, rules: [a], timespan: 1h, condition: {gte: x}}', "correlation 'condition.gte'"],
    ['title: t\ncorrelation: {type: event_count, rules: [a], timespan: 1h, condition: {over: 1}}', "correlation 'condition.over'"],
    ['title: t\ncorrelation: {type: value_count, rules: [a], timespan: 1h, condition: {gte: 1}}', "correlation 'condition.field'"],
    ['title: t\ncorrelation: {type: temporal, rules: [a], timespan: 1h}', "correlation 'rules'"],
    ['title: t\ncorrelation: {type: event_count, timespan: 1h, condition: {gte: 1}}', "field 'correlation.rules'"],
    ['title: t\ncorrelation: {type: value_sum, rules: [a], timespan: 1h, condition: {field: x, gte: 1}}', "correlation type 'value_sum'"],
    [
      'title: t\ncorrelation: {type: temporal, rules: [a, b], timespan: 1h, group-by: [ip], aliases: {ip: {c: x}}}',
      "correlation 'aliases.ip.c'",
    ],
  ])('%s', (yaml, construct) => {
    expect(bad(yaml)).toBe(construct)
  })
})

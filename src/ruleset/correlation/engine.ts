/**
 * The correlation engine: base-rule matches in, correlation findings out.
 *
 * A match names the rule, the event time, the event (index, id, source) and, when one was
 * written, its base finding. Each correlation rule keeps one window per group (the `group-by`
 * values, read through `aliases` per referenced rule) in a `GroupStore`; the window logic itself
 * is `./window.ts`. Correlations that reference correlations (chains) get the findings of the
 * inner one as their matches, so the engine runs the rules inner-first.
 *
 * Finding ids are derived from (scope, correlation rule, group, anchor event): a replayed page,
 * a restarted detector or a second node computes the same ids, and the findings stream's
 * create-only writes turn repeats into conflicts instead of duplicates.
 */
import { fieldPath } from '../../store/query'
import type { CorrelationRule } from './document'
import { advance, type GroupWindow, type WindowEvent } from './window'

export interface CorrelationInput {
  /** Id of the rule that matched (a base rule, or a correlation rule for chains). */
  ruleId: string
  /** Event time, epoch millis. */
  time: number
  index: string
  id: string
  source: Record<string, unknown>
  /** The base finding of this match, when the detector wrote one. */
  findingId?: string
  /** Unique key of the match; default `index/id`. */
  key?: string
}

export interface CorrelationFinding {
  id: string
  rule: CorrelationRule
  /** group-by field (or alias) -> value. */
  group: Record<string, string>
  window: { start: number; end: number }
  /** The event that completed the correlation. */
  anchor: CorrelationInput
  /** Every match inside the window, oldest first. */
  events: Array<{ index: string; id: string; rule: string; time: number; finding?: string }>
}

/** A correlation rule whose `rules` references are resolved to rule ids (same order). */
export interface ResolvedCorrelation extends CorrelationRule {
  sources: string[]
}

export interface StoredGroup {
  window: GroupWindow
  /** Opaque version for optimistic concurrency (the store's seq_no / primary_term). */
  version?: unknown
}

/**
 * Where group windows live. `save` answers the keys that lost a concurrent write and sets the
 * new `version` of every entry it wrote.
 */
export interface GroupStore {
  load(keys: string[]): Promise<Map<string, StoredGroup>>
  save(
    entries: Array<{ key: string; scope: string; rule: string; span: number; group: Record<string, string>; stored: StoredGroup }>,
  ): Promise<string[]>
}

/** Attempts at a group write that races with another node before the run gives up (and is retried). */
const MAX_WRITE_ATTEMPTS = 3

/** `<scope>.<rule>.<group>`: a store can keep the windows of one detector together by the prefix. */
export function groupDocId(scope: string, ruleId: string, groupKey: string): string {
  return `${rulePrefix(scope, ruleId)}.${hash(groupKey, 22)}`
}

const rulePrefix = (scope: string, ruleId: string) => `${hash(scope, 16)}.${hash(ruleId, 16)}`

function hash(text: string, length = 32): string {
  const h = new Bun.CryptoHasher('sha256')
  h.update(text)
  return h.digest('base64url').slice(0, length)
}

/** Inner correlations before the ones that use their findings; a cycle is an error naming the rule. */
export function orderChains(rules: ResolvedCorrelation[]): ResolvedCorrelation[] {
  const byId = new Map(rules.map((r) => [r.id, r]))
  const out: ResolvedCorrelation[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (r: ResolvedCorrelation) => {
    const s = state.get(r.id)
    if (s === 'done') return
    if (s === 'visiting') throw new Error(`correlation rule '${r.title}' references itself through a chain`)
    state.set(r.id, 'visiting')
    for (const src of r.sources) {
      const inner = byId.get(src)
      if (inner) visit(inner)
    }
    state.set(r.id, 'done')
    out.push(r)
  }
  rules.forEach(visit)
  return out
}

export class Correlator {
  /** Rules by chain level: level 0 reads base matches only, level n the findings of level n-1. */
  private readonly levels: ResolvedCorrelation[][]
  /** Rule ids whose matches any correlation consumes. */
  readonly consumes: Set<string>

  constructor(
    private readonly scope: string,
    rules: ResolvedCorrelation[],
    private readonly groups: GroupStore,
  ) {
    const ordered = orderChains(rules)
    const depth = new Map<string, number>()
    for (const r of ordered) depth.set(r.id, Math.max(0, ...r.sources.map((s) => (depth.has(s) ? depth.get(s)! + 1 : 0))))
    this.levels = []
    for (const r of ordered) (this.levels[depth.get(r.id)!] ??= []).push(r)
    this.consumes = new Set(rules.flatMap((r) => r.sources))
  }

  /**
   * Adds matches to the windows and answers the findings that fire. `write` (when given) gets the
   * findings before the windows are saved: a crash in between repeats the findings (same ids, so no
   * duplicate) instead of losing them. The windows of every rule of a chain level are read in one
   * call and written in one bulk.
   */
  async ingest(inputs: CorrelationInput[], write?: (findings: CorrelationFinding[]) => Promise<void>): Promise<CorrelationFinding[]> {
    const all: CorrelationFinding[] = []
    const pool = [...inputs]
    for (const level of this.levels) {
      const found = await this.run(level, pool, write)
      all.push(...found)
      // A chained correlation sees these findings as matches of the rule that found them.
      for (const f of found)
        pool.push({
          ruleId: f.rule.id,
          time: f.window.end,
          index: f.anchor.index,
          id: f.anchor.id,
          source: f.group,
          findingId: f.id,
          key: f.id,
        })
    }
    return all
  }

  private async run(
    rules: ResolvedCorrelation[],
    pool: CorrelationInput[],
    write?: (findings: CorrelationFinding[]) => Promise<void>,
  ): Promise<CorrelationFinding[]> {
    // One entry per window document (rule, group).
    const entries = new Map<
      string,
      {
        rule: ResolvedCorrelation
        key: string
        group: Record<string, string>
        events: WindowEvent[]
        inputs: Map<string, CorrelationInput>
      }
    >()
    const bySource = new Map<string, Array<{ rule: ResolvedCorrelation; r: number }>>()
    for (const rule of rules) rule.sources.forEach((src, r) => bySource.set(src, [...(bySource.get(src) ?? []), { rule, r }]))
    // A page has many matches per group (and rules share groups): hash each group once, not per match.
    const prefixes = new Map(rules.map((rule) => [rule, rulePrefix(this.scope, rule.id)]))
    const hashes = new Map<string, string>()
    for (const input of pool) {
      const rulesOf = bySource.get(input.ruleId)
      if (!rulesOf) continue
      // The rules of one source mostly group by the same fields: read each field once per match.
      const read = reader(input.source)
      const k = input.key ?? `${input.index}/${input.id}`
      for (const { rule, r } of rulesOf) {
        const group = groupOf(rule, r, read)
        if (!group) continue
        let value: string | undefined
        if (rule.field) {
          value = tupleOf(rule, r, read, rule.field)
          if (value === undefined) continue
        }
        const key = JSON.stringify(rule.groupBy.map((g) => group[g]))
        let h = hashes.get(key)
        if (h === undefined) hashes.set(key, (h = hash(key, 22)))
        const docId = `${prefixes.get(rule)}.${h}`
        let entry = entries.get(docId)
        if (!entry) entries.set(docId, (entry = { rule, key, group, events: [], inputs: new Map() }))
        const event: WindowEvent = { t: input.time, k, r, i: input.index, d: input.id }
        if (value !== undefined) event.v = value
        if (input.findingId) event.f = input.findingId
        entry.events.push(event)
        entry.inputs.set(k, input)
      }
    }
    if (entries.size === 0) return []
    let pending = [...entries.keys()]
    const out = new Map<string, CorrelationFinding>()
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > MAX_WRITE_ATTEMPTS) throw new Error('correlation windows kept changing under this run')
      const loaded = await this.groups.load(pending)
      const writes: Parameters<GroupStore['save']>[0] = []
      const fresh: CorrelationFinding[] = []
      for (const docId of pending) {
        const entry = entries.get(docId)!
        const stored = loaded.get(docId) ?? { window: { events: [], emitted: [] } }
        const fired = advance(entry.rule, stored.window, entry.events)
        for (const f of fired) {
          const finding = this.finding(entry.rule, entry.key, entry.group, f.anchor, f.window, entry.inputs)
          if (!out.has(finding.id)) fresh.push(finding)
          out.set(finding.id, finding)
        }
        writes.push({ key: docId, scope: this.scope, rule: entry.rule.id, span: entry.rule.timespanMs, group: entry.group, stored })
      }
      if (write && fresh.length > 0) await write(fresh)
      const lost = new Set(await this.groups.save(writes))
      pending = pending.filter((k) => lost.has(k))
    }
    return [...out.values()]
  }

  private finding(
    rule: ResolvedCorrelation,
    groupKey: string,
    group: Record<string, string>,
    anchor: WindowEvent,
    window: WindowEvent[],
    inputs: Map<string, CorrelationInput>,
  ): CorrelationFinding {
    const anchorInput = inputs.get(anchor.k) ?? {
      ruleId: rule.sources[anchor.r],
      time: anchor.t,
      index: anchor.i,
      id: anchor.d,
      source: {},
    }
    return {
      id: hash(`${this.scope}\u0000${rule.id}\u0000${groupKey}\u0000${anchor.k}`),
      rule,
      group,
      window: { start: window[0].t, end: anchor.t },
      anchor: anchorInput,
      events: window.map((e) => ({ index: e.i, id: e.d, rule: rule.sources[e.r], time: e.t, ...(e.f ? { finding: e.f } : {}) })),
    }
  }
}

/** The field a group-by name (or the counted field) means in the events of reference `r`. */
const fieldFor = (rule: CorrelationRule, r: number, name: string) => rule.aliases[name]?.[rule.refs[r]] ?? name

/** One value per field: the first value the event holds, as text; undefined when missing. */
function valueOf(source: Record<string, unknown>, field: string): string | undefined {
  const v = fieldPath(field).collect(source)[0]
  if (v === undefined || (typeof v === 'object' && v !== null)) return undefined
  return String(v)
}

type Reader = (field: string) => string | undefined

function reader(source: Record<string, unknown>): Reader {
  const seen = new Map<string, string | undefined>()
  return (field) => {
    if (!seen.has(field)) seen.set(field, valueOf(source, field))
    return seen.get(field)
  }
}

/** An event without a value for every group-by field belongs to no group (it is not counted). */
function groupOf(rule: CorrelationRule, r: number, read: Reader): Record<string, string> | undefined {
  const group: Record<string, string> = {}
  for (const g of rule.groupBy) {
    const v = read(fieldFor(rule, r, g))
    if (v === undefined) return undefined
    group[g] = v
  }
  return group
}

function tupleOf(rule: CorrelationRule, r: number, read: Reader, fields: string[]): string | undefined {
  const values: string[] = []
  for (const f of fields) {
    const v = read(fieldFor(rule, r, f))
    if (v === undefined) return undefined
    values.push(v)
  }
  return values.length === 1 ? values[0] : JSON.stringify(values)
}

/** An in-memory GroupStore (single process; tests and logtest-style one-shot runs). */
export class MemoryGroups implements GroupStore {
  readonly docs = new Map<string, { window: GroupWindow; version: number }>()

  async load(keys: string[]): Promise<Map<string, StoredGroup>> {
    const out = new Map<string, StoredGroup>()
    for (const k of keys) {
      const d = this.docs.get(k)
      if (d) out.set(k, { window: structuredClone(d.window), version: d.version })
    }
    return out
  }

  async save(entries: Parameters<GroupStore['save']>[0]): Promise<string[]> {
    const lost: string[] = []
    for (const e of entries) {
      const cur = this.docs.get(e.key)
      if ((cur?.version ?? undefined) !== e.stored.version) {
        lost.push(e.key)
        continue
      }
      const version = (cur?.version ?? 0) + 1
      this.docs.set(e.key, { window: structuredClone(e.stored.window), version })
      e.stored.version = version
    }
    return lost
  }
}

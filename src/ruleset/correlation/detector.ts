/**
 * Correlation rules inside a detector run. A detector may hold correlation rules beside its
 * detection rules; their referenced rules (by id or name, chains included) are resolved and
 * compiled with the detector's others. A referenced rule (or inner correlation of a chain) that
 * the detector does not hold itself is evaluated for the correlation only: its own findings are
 * written when the referencing correlation says `generate: true` (the specification's default
 * is to generate only the correlation).
 *
 * Per page the run hands every event's matches to `admit` (which answers those whose findings are
 * written), and `flush` feeds them to the
 * engine, whose findings become findings of the correlation rule: a copy of the event that
 * completed the correlation, with `svc.correlation` naming the rule, the group values, the window
 * and the events (and base findings) that fired it.
 */
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { parseDate } from '../../store/query'
import type { SearchHit, Store } from '../../store/port'
import type { FindingInput, FindingRule } from '../findings/writer'
import type { StoredRule } from '../model'
import type { Rules } from '../rules'
import type { CompiledSigmaRule } from '../sigma'
import { correlationRule, parseCorrelationDocument } from './document'
import { type CorrelationFinding, type CorrelationInput, Correlator, type GroupStore, type ResolvedCorrelation } from './engine'
import { StoreGroups } from './state'

/** Events linked from one correlation finding; the count says how many the window held. */
export const MAX_LINKED_EVENTS = 100
/** Depth of correlation chains followed when resolving references. */
const MAX_CHAIN_DEPTH = 10

type Finding = FindingInput & { id: string }

export interface CorrelationDeps {
  store: Store
  rules: Rules
}

export interface PreparedCorrelation {
  /** Rules evaluated only because a correlation references them. */
  extra: Array<{ rule: StoredRule; compiled: CompiledSigmaRule }>
  /** Ids of rules whose own findings are not written (referenced only, `generate` false). */
  silent: Set<string>
  /** Correlation rules that could not be used, by id (a reference not found, a loop, ...). */
  skipped: Array<{ id: string; reason: string }>
  /** Takes an event's matches for the correlations; answers the matches whose own findings are written. */
  admit(hit: SearchHit, matches: Finding[]): Finding[]
  flush(write: (findings: Finding[]) => Promise<void>): Promise<void>
}

export async function prepareCorrelation(
  deps: CorrelationDeps,
  detectorId: string,
  detectorType: string,
  stored: StoredRule[],
  held: CompiledSigmaRule[],
  settings: SettingsSnapshot,
  meta: (rule: StoredRule) => FindingRule,
  /** Where windows are kept: the store (a detector's, shared by its runs) unless given (a preview's, in memory). */
  groups?: GroupStore,
): Promise<PreparedCorrelation | undefined> {
  if (stored.length === 0) return undefined
  const { resolved, correlationMeta, extra, generated, referencedOnly, skipped } = await resolveChains(deps, stored, held, settings, meta)
  let correlator: Correlator
  const windows = groups ?? new StoreGroups(deps.store, { scope: detectorId, rules: resolved })
  try {
    correlator = new Correlator(detectorId, resolved, windows)
  } catch (e) {
    for (const r of resolved) skipped.push({ id: r.id, reason: (e as Error).message })
    const silentRules = referencedOnly
    return { extra, silent: silentRules, skipped, admit: (_, m) => m.filter((f) => !silentRules.has(f.rule.id)), flush: async () => {} }
  }
  const silent = new Set([...referencedOnly].filter((id) => !generated.has(id)))

  let inputs: CorrelationInput[] = []
  return {
    extra,
    silent,
    skipped,
    admit(hit, matches) {
      const source = hit._source ?? {}
      const time = parseDate(source['@timestamp'])
      // Without an event time there is no window to place the event in.
      if (time === undefined) return matches.filter((f) => !silent.has(f.rule.id))
      for (const m of matches) {
        if (!correlator.consumes.has(m.rule.id)) continue
        inputs.push({
          ruleId: m.rule.id,
          time,
          index: hit._index,
          id: hit._id,
          source,
          ...(silent.has(m.rule.id) ? {} : { findingId: m.id }),
        })
      }
      return matches.filter((f) => !silent.has(f.rule.id))
    },
    async flush(write) {
      if (inputs.length === 0) return
      const batch = inputs
      inputs = []
      await correlator.ingest(batch, (found) =>
        write(
          found
            .filter((f) => !silent.has(f.rule.id))
            .map((f) => asFinding(f, detectorId, detectorType, correlationMeta.get(f.rule.id)!, silent)),
        ),
      )
    },
  }
}

/**
 * The detector's correlation rules with the rules they reference, followed down chains of
 * correlations (at most MAX_CHAIN_DEPTH deep); referenced rules the detector does not hold are
 * compiled as extras. A correlation that cannot be used is skipped with its reason.
 */
async function resolveChains(
  deps: CorrelationDeps,
  stored: StoredRule[],
  held: CompiledSigmaRule[],
  settings: SettingsSnapshot,
  meta: (rule: StoredRule) => FindingRule,
) {
  const heldIds = new Set(held.map((c) => c.id!))
  const ownCorrelations = new Set(stored.map((s) => s.document.id))
  const skipped: PreparedCorrelation['skipped'] = []
  const resolved: ResolvedCorrelation[] = []
  const correlationMeta = new Map<string, FindingRule>()
  const extra: PreparedCorrelation['extra'] = []
  const generated = new Set<string>()
  const referencedOnly = new Set<string>()
  const mappings = new Map<string, Promise<Record<string, string>>>()
  const filters = deps.rules.filters()

  let queue = stored
  const seen = new Set<string>()
  for (let depth = 0; queue.length > 0 && depth < MAX_CHAIN_DEPTH; depth++) {
    const next: StoredRule[] = []
    for (const s of queue) {
      if (seen.has(s.document.id)) continue
      seen.add(s.document.id)
      try {
        const rule = correlationRule(parseCorrelationDocument(s.rule), s.document.id)
        const refs = await deps.rules.byReferences(rule.refs)
        const missing = rule.refs.filter((r) => !refs.has(r))
        if (missing.length > 0) throw new Error(`referenced rules not found: ${missing.join(', ')}`)
        const sources = rule.refs.map((r) => refs.get(r)!.document.id)
        for (const target of refs.values()) {
          if (target.kind === 'correlation') {
            next.push(target)
            // An inner correlation of a chain is part of the outer one, not a finding of its own.
            if (!ownCorrelations.has(target.document.id)) referencedOnly.add(target.document.id)
          } else if (target.kind !== 'filter' && !heldIds.has(target.document.id)) {
            heldIds.add(target.document.id)
            referencedOnly.add(target.document.id)
            extra.push({ rule: target, compiled: await deps.rules.compileForDetection(target, settings, mappings, filters) })
          }
          if (rule.generate) generated.add(target.document.id)
        }
        resolved.push({ ...rule, sources })
        correlationMeta.set(rule.id, meta(s))
      } catch (e) {
        skipped.push({ id: s.document.id, reason: (e as Error).message })
      }
    }
    queue = next
  }
  return { resolved, correlationMeta, extra, generated, referencedOnly, skipped }
}

function asFinding(f: CorrelationFinding, detectorId: string, detectorType: string, rule: FindingRule, silent: Set<string>): Finding {
  const source = f.anchor.source
  const svc = typeof source.svc === 'object' && source.svc !== null && !Array.isArray(source.svc) ? source.svc : {}
  const iso = (ms: number) => new Date(ms).toISOString()
  const correlation = {
    rule: { id: f.rule.id, title: f.rule.title, type: f.rule.type, ...(f.rule.name ? { name: f.rule.name } : {}) },
    group: f.group,
    window: { start: iso(f.window.start), end: iso(f.window.end), timespan_ms: f.rule.timespanMs },
    event_count: f.events.length,
    events: f.events.slice(-MAX_LINKED_EVENTS).map((e) => ({ index: e.index, id: e.id, rule: e.rule, time: iso(e.time) })),
    // Links to findings that were written (a silent rule's matches are linked as events only).
    findings: f.events.flatMap((e) => (e.finding && !silent.has(e.rule) ? [e.finding] : [])).slice(-MAX_LINKED_EVENTS),
  }
  return {
    id: f.id,
    event: {
      _id: f.anchor.id,
      _index: f.anchor.index,
      _source: { ...source, '@timestamp': iso(f.window.end), svc: { ...svc, correlation } },
    },
    rule,
    detector: { id: detectorId, type: detectorType },
  }
}

/**
 * Rule preview (beyond the peer): a Sigma rule (stored, by id, or given as YAML), a correlation
 * rule (alike) or a threat-intel match run over the stored events of some indices in a time range,
 * as a detector would run it (same compiler, same evaluator, same IoC index), but nothing is
 * written: no finding, no alert, no correlation window. It answers the first `size` matches, the
 * matches per hour and the time taken. It is bounded: at most `terminate_after` events scanned and
 * `timeout` spent (both capped by settings, as a search's are), at most `search.max_buckets` hours.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { timeToMillis } from '../../config/values'
import { ApiError } from '../../http/errors'
import type { SearchHit, Store } from '../../store/port'
import { parseDate } from '../../store/query'
import { MemoryGroups } from '../correlation/engine'
import { isCorrelationDocument } from '../correlation/document'
import { prepareCorrelation } from '../correlation/detector'
import { eventsInRange, rangeBound, type TimeRange } from '../detection/stored-events'
import { findingRule, typesOf } from '../detection/run'
import { runPacer } from '../detection/scan'
import type { FindingInput } from '../findings/writer'
import type { LogTypes } from '../log-types'
import type { StoredRule } from '../model'
import { type Rules, sigma400 } from '../rules'
import { type CompiledSigmaRule, compileCache, ruleSet } from '../sigma'
import { readSigmaYaml } from '../sigma/document'
import { eventMatches } from '../threat-intel/collect'
import { iocFieldsOf, type IocFieldList, IocFieldsSchema } from '../threat-intel/ioc-fields'
import type { IocIndex } from '../threat-intel/ioc-index'

export const PREVIEW_SETTINGS = {
  maxEvents: 'plugins.security_analytics.preview.max_events',
  timeout: 'plugins.security_analytics.preview.timeout',
  maxSize: 'plugins.security_analytics.preview.max_size',
} as const

export const PreviewBody = T.Object(
  {
    rule_id: T.Optional(T.String({ minLength: 1 })),
    rule: T.Optional(T.String({ minLength: 1 })),
    threat_intel: T.Optional(T.Object({ ioc_fields: T.Optional(IocFieldsSchema) }, { additionalProperties: false })),
    log_type: T.Optional(T.String({ minLength: 1 })),
    indices: T.Array(T.String({ minLength: 1 }), { minItems: 1, maxItems: 100 }),
    start_time: T.Union([T.Integer(), T.String({ minLength: 1 })]),
    end_time: T.Optional(T.Union([T.Integer(), T.String({ minLength: 1 })])),
    size: T.Optional(T.Integer({ minimum: 0 })),
    terminate_after: T.Optional(T.Integer({ minimum: 1 })),
    timeout: T.Optional(T.String()),
  },
  { additionalProperties: false },
)
export type PreviewBody = Static<typeof PreviewBody>

export interface PreviewDeps {
  store: Store
  rules: Rules
  logTypes: LogTypes
  iocs: { current(): Promise<IocIndex> }
  now: () => number
}

export interface PreviewMatch {
  _index: string
  _id: string
  '@timestamp': string | null
  rule?: { id: string; title: string; level?: string }
  ioc?: { type: string; value: string; field: string; ioc_ids: string[] }
}

/** What runs over the events: each page's matches, and at the end whatever is pending (correlations). */
interface Matcher {
  page(index: string, hits: SearchHit[]): Promise<PreviewMatch[]>
  end(): Promise<PreviewMatch[]>
}

const HOUR = 3_600_000

function bounds(body: PreviewBody, settings: SettingsSnapshot, now: number) {
  const range: TimeRange = {
    from: rangeBound(body.start_time, 'start_time', now),
    to: body.end_time === undefined ? now : rangeBound(body.end_time, 'end_time', now, true) + 1,
  }
  if (range.to <= range.from) throw new ApiError(400, 'end_time must be after start_time')
  const hours = Math.ceil((range.to - Math.floor(range.from / HOUR) * HOUR) / HOUR)
  const maxBuckets = settings.num('search.max_buckets')
  if (hours > maxBuckets) throw new ApiError(400, `The range spans ${hours} hours; at most search.max_buckets [${maxBuckets}] are counted`)
  const maxEvents = settings.num(PREVIEW_SETTINGS.maxEvents)
  const maxSize = settings.num(PREVIEW_SETTINGS.maxSize)
  const limitMillis = timeToMillis(settings.str(PREVIEW_SETTINGS.timeout))
  let timeout = limitMillis
  if (body.timeout !== undefined) {
    try {
      timeout = Math.min(timeToMillis(body.timeout), limitMillis)
    } catch {
      throw new ApiError(400, `Invalid timeout [${body.timeout}]`)
    }
    if (timeout <= 0) throw new ApiError(400, `Invalid timeout [${body.timeout}]`)
  }
  if ((body.size ?? 0) > maxSize) throw new ApiError(400, `size is at most ${PREVIEW_SETTINGS.maxSize} [${maxSize}]`)
  return { range, size: body.size ?? Math.min(10, maxSize), maxEvents: Math.min(body.terminate_after ?? maxEvents, maxEvents), timeout }
}

export async function preview(
  deps: PreviewDeps,
  body: PreviewBody,
  settings: SettingsSnapshot,
  /** The caller's document-level security per concrete index (the same gate as a search of it). */
  filterOf?: (index: string) => Record<string, unknown> | undefined,
) {
  const started = performance.now()
  const kinds = [body.rule_id, body.rule, body.threat_intel].filter((x) => x !== undefined).length
  if (kinds !== 1) throw new ApiError(400, 'Give exactly one of rule_id, rule (Sigma or correlation YAML) and threat_intel')
  const b = bounds(body, settings, deps.now())
  const matcher = await matcherOf(deps, body, settings)
  const matches: PreviewMatch[] = []
  const perHour = new Map<number, number>()
  let total = 0
  let scanned = 0
  let timedOut = false
  let terminated = false
  const take = (found: PreviewMatch[]) => {
    for (const m of found) {
      total++
      if (matches.length < b.size) matches.push(m)
      const at = m['@timestamp'] === null ? undefined : Date.parse(m['@timestamp'])
      if (at !== undefined) perHour.set(Math.floor(at / HOUR) * HOUR, (perHour.get(Math.floor(at / HOUR) * HOUR) ?? 0) + 1)
    }
  }
  const pageSize = Math.min(1_000, b.maxEvents)
  for await (const { index, hits } of eventsInRange(deps.store, body.indices, b.range, { size: pageSize, filterOf })) {
    const kept = hits.slice(0, b.maxEvents - scanned)
    scanned += kept.length
    take(await matcher.page(index, kept))
    if (scanned >= b.maxEvents) {
      terminated = true
      break
    }
    if (performance.now() - started >= b.timeout) {
      timedOut = true
      break
    }
  }
  take(await matcher.end())
  const hours = [...perHour.entries()].sort((x, y) => x[0] - y[0])
  return {
    took: Math.round(performance.now() - started),
    timed_out: timedOut,
    terminated_early: terminated,
    events_scanned: scanned,
    range: { from: new Date(b.range.from).toISOString(), to: new Date(b.range.to).toISOString() },
    total_matches: total,
    matches,
    per_hour: hours.map(([key, count]) => ({ key, key_as_string: new Date(key).toISOString(), doc_count: count })),
  }
}

const timestampOf = (hit: SearchHit): string | null => {
  const ms = parseDate(hit._source?.['@timestamp'])
  return ms === undefined ? null : new Date(ms).toISOString()
}

async function matcherOf(deps: PreviewDeps, body: PreviewBody, settings: SettingsSnapshot): Promise<Matcher> {
  if (body.threat_intel) {
    const own = body.threat_intel.ioc_fields ?? (body.log_type ? (await deps.logTypes.byName(body.log_type))?.ioc_fields : undefined)
    const fields = iocFieldsOf(body.log_type ?? '', own)
    if (fields.length === 0) throw new ApiError(400, 'threat_intel needs ioc_fields, or a log_type that has IoC fields')
    return iocMatcher(await deps.iocs.current(), fields)
  }
  const stored = body.rule_id ? await storedRule(deps, body.rule_id) : inlineRule(body.rule!, body.log_type)
  if (stored.kind === 'correlation') return correlationMatcher(deps, stored, settings)
  let compiled: CompiledSigmaRule
  try {
    compiled = body.rule_id
      ? await deps.rules.compileForDetection(stored, settings)
      : compileCache.compile(body.rule!, { fieldMapping: await deps.logTypes.fieldMapping(body.log_type ?? '', settings) }, 'preview')
  } catch (e) {
    throw sigma400(e)
  }
  return sigmaMatcher(deps.store, [compiled])
}

async function storedRule(deps: PreviewDeps, id: string): Promise<StoredRule> {
  const rule = (await deps.rules.byReferences([id])).get(id)
  if (!rule) throw new ApiError(404, `Rule [${id}] not found`)
  if (rule.kind === 'filter') throw new ApiError(400, `Rule [${id}] is a filter: it matches nothing on its own`)
  return rule
}

/** An inline rule as a stored one would be (only what a preview reads of it). */
function inlineRule(text: string, logType: string | undefined): StoredRule {
  let doc: unknown
  try {
    doc = readSigmaYaml(text)
  } catch (e) {
    throw sigma400(e)
  }
  const correlation = isCorrelationDocument(doc)
  if (!correlation && !logType) throw new ApiError(400, 'An inline Sigma rule needs the log_type whose field mapping it uses')
  const title = (doc as { title?: unknown })?.title
  return {
    document: { id: 'preview' },
    rule: text,
    kind: correlation ? 'correlation' : 'rule',
    title: typeof title === 'string' ? title : 'preview',
    category: logType ?? '',
    tags: [],
  } as unknown as StoredRule
}

/** Sigma rules over each page, typed by each index's mapping as a detector's run is. */
function sigmaMatcher(
  store: Store,
  compiled: CompiledSigmaRule[],
  onMatches?: (hit: SearchHit, rules: CompiledSigmaRule[]) => void,
): Matcher {
  const sets = new Map<string, ReturnType<typeof ruleSet>>()
  return {
    async page(index, hits) {
      let set = sets.get(index)
      if (!set)
        sets.set(
          index,
          (set = ruleSet(
            compiled,
            await typesOf(
              store,
              index,
              compiled.flatMap((r) => r.fields),
            ),
          )),
        )
      const out: PreviewMatch[] = []
      const pacer = runPacer()
      for (const hit of hits) {
        const matched = set.evaluate(hit._source ?? {})
        if (matched.length > 0 && onMatches)
          onMatches(
            hit,
            matched.map((m) => compiled[m.at]),
          )
        else
          for (const m of matched)
            out.push({
              _index: index,
              _id: hit._id,
              '@timestamp': timestampOf(hit),
              rule: { id: m.rule.id ?? 'preview', title: m.rule.title },
            })
        if (pacer.due()) await pacer.pause()
      }
      return out
    },
    end: async () => [],
  }
}

/** A correlation rule: its referenced rules evaluated, windows kept in memory, each correlation found a match. */
async function correlationMatcher(deps: PreviewDeps, stored: StoredRule, settings: SettingsSnapshot): Promise<Matcher> {
  const prepared = await prepareCorrelation(deps, 'preview', stored.category, [stored], [], settings, findingRule, new MemoryGroups())
  const skipped = prepared?.skipped.find((s) => s.id === stored.document.id)
  if (!prepared || skipped) throw new ApiError(400, `The correlation rule cannot be run: ${skipped?.reason ?? 'nothing to correlate'}`)
  const found: PreviewMatch[] = []
  const drain = () =>
    prepared.flush(async (findings) => {
      for (const f of findings)
        found.push({
          _index: f.event._index,
          _id: f.event._id,
          '@timestamp': typeof f.event._source['@timestamp'] === 'string' ? f.event._source['@timestamp'] : null,
          rule: { id: f.rule.id, title: f.rule.title ?? '' },
        })
    })
  const base = sigmaMatcher(
    deps.store,
    prepared.extra.map((x) => x.compiled),
    (hit, rules) =>
      prepared.admit(
        hit,
        rules.map((r, i) => ({
          id: `preview-${hit._id}-${i}`,
          event: { _id: hit._id, _index: hit._index, _source: hit._source ?? {} },
          rule: { id: r.id!, title: r.title, tags: [] },
          detector: { id: 'preview', type: stored.category },
        })) as Array<FindingInput & { id: string }>,
      ),
  )
  return {
    async page(index, hits) {
      await base.page(index, hits)
      await drain()
      return found.splice(0)
    },
    async end() {
      await drain()
      return found.splice(0)
    },
  }
}

/** Each event's IoC field values looked up in the node's IoC index: one match per (event, value). */
function iocMatcher(iocs: IocIndex, fields: IocFieldList): Matcher {
  return {
    async page(index, hits) {
      return hits.flatMap((hit) =>
        eventMatches(iocs, fields, hit._source ?? {}).map(({ type, value, field, iocIds }) => ({
          _index: index,
          _id: hit._id,
          '@timestamp': timestampOf(hit),
          ioc: { type, value, field, ioc_ids: iocIds },
        })),
      )
    },
    end: async () => [],
  }
}

import { Type as T, type Static } from '@sinclair/typebox'
import { FINDINGS_SECURITY_STREAM } from '../../setup/indices/names'
import type { BulkLine, BulkParams, Refresh, Source, Store } from '../../store/port'
import { isObject } from '../../json'

/**
 * Appends enriched findings (reference 4.6) to the findings data stream: a
 * copy of the triggering event with `event.doc_id`/`event.index`, the rule's
 * metadata under `svc.rule` and the detector under `svc.detector`. Writes are
 * op_type create, so a finding is never overwritten; `svc.case` is absent
 * until a case update is made.
 */

const Names = T.Object({ id: T.Optional(T.Array(T.String())), name: T.Optional(T.Array(T.String())) })

/** Rule metadata as the detector knows it; only the fields present are copied. */
export const FindingRule = T.Object({
  id: T.String(),
  sigma_id: T.Optional(T.String()),
  title: T.Optional(T.String()),
  /** The rule's own tags; the finding's tags are `[level, log type, ...these]`. */
  tags: T.Optional(T.Array(T.String())),
  level: T.Optional(T.String()),
  status: T.Optional(T.String()),
  author: T.Optional(T.String()),
  category: T.Optional(T.String()),
  description: T.Optional(T.String()),
  license: T.Optional(T.String()),
  name: T.Optional(T.String()),
  reference: T.Optional(T.Union([T.String(), T.Array(T.String())])),
  ruleset: T.Optional(T.String()),
  uuid: T.Optional(T.String()),
  version: T.Optional(T.String()),
  compliance: T.Optional(T.Record(T.String(), T.Array(T.String()))),
  mitre: T.Optional(T.Object({ tactic: T.Optional(Names), technique: T.Optional(Names), subtechnique: T.Optional(Names) })),
})
export type FindingRule = Static<typeof FindingRule>

export const FindingDetector = T.Object({
  id: T.String(),
  /** The detector's log type (integration); also the second tag of the finding. */
  type: T.Optional(T.String()),
})
export type FindingDetector = Static<typeof FindingDetector>

/** The event that matched, as a search hit gives it. */
export interface MatchedEvent {
  _id: string
  _index: string
  _source: Source
}

export interface FindingInput {
  /** Optional document id: a detector gives a deterministic one so a re-run batch cannot duplicate. */
  id?: string
  event: MatchedEvent
  rule: FindingRule
  detector: FindingDetector
}

export interface AppendedFinding {
  _id: string | null
  _index: string
  status: number
  error?: string
}

function valueAt(doc: Record<string, unknown>, path: string): unknown {
  if (path in doc) return doc[path]
  let cur: unknown = doc
  for (const part of path.split('.')) {
    if (!isObject(cur)) return undefined
    cur = cur[part]
  }
  return cur
}

/**
 * Resolves `{{ field.path }}` placeholders of rule titles and tags against the
 * event. A placeholder whose field is missing is left as written, so the
 * analyst sees which data was absent instead of an empty gap.
 */
export function interpolate(text: string, event: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([^{}\s]+)\s*\}\}/g, (whole, path: string) => {
    const v = valueAt(event, path)
    if (v === undefined || v === null || typeof v === 'object') return whole
    return String(v)
  })
}

/** The document of one finding, as it is stored. */
export function buildFinding({ event, rule, detector }: FindingInput, now: () => number = Date.now): Source {
  // Shallow copies only: every object the finding changes (the root, `event`, `svc`) is copied
  // before it is changed, so the event stays as it was without a deep clone per finding.
  const source = event._source
  const doc: Source = { ...source }
  doc['@timestamp'] = source['@timestamp'] ?? new Date(now()).toISOString()
  doc.event = { ...(isObject(source.event) ? source.event : {}), doc_id: event._id, index: event._index }

  const { tags = [], title, ...meta } = rule
  const svcRule: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(meta)) if (v !== undefined) svcRule[k] = v
  if (title !== undefined) svcRule.title = interpolate(title, source)
  svcRule.tags = [rule.level, detector.type, ...tags.map((t) => interpolate(t, source))].filter((t): t is string => typeof t === 'string')

  const svc: Record<string, unknown> = { ...(isObject(source.svc) ? source.svc : {}) }
  delete svc.case
  svc.rule = svcRule
  svc.detector = detector.type === undefined ? { id: detector.id } : { id: detector.id, type: detector.type }
  doc.svc = svc
  return doc
}

/**
 * Writes findings in bulks of `bulkSize` (the `enriched_findings_bulk_size`
 * setting when a detector calls). Item results keep the input order; a failed
 * item does not stop the others.
 */
export async function appendFindings(
  store: Store,
  findings: FindingInput[],
  opts: { stream?: string; bulkSize?: number; refresh?: Refresh; durability?: BulkParams['durability']; now?: () => number } = {},
): Promise<AppendedFinding[]> {
  const stream = opts.stream ?? FINDINGS_SECURITY_STREAM
  const bulkSize = Math.max(1, opts.bulkSize ?? 100)
  const out: AppendedFinding[] = []
  for (let at = 0; at < findings.length; at += bulkSize) {
    const lines: BulkLine[] = []
    for (const f of findings.slice(at, at + bulkSize))
      lines.push({ create: f.id === undefined ? { _index: stream } : { _index: stream, _id: f.id } }, buildFinding(f, opts.now))
    const answer = await store.bulk({ body: lines, refresh: opts.refresh, durability: opts.durability })
    for (const entry of answer.items) {
      const r = entry.create ?? Object.values(entry)[0]
      out.push(
        r?.error
          ? { _id: r._id ?? null, _index: r._index, status: r.status, error: r.error.reason }
          : { _id: r?._id ?? null, _index: r?._index ?? stream, status: r?.status ?? 500 },
      )
    }
  }
  return out
}

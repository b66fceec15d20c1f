import { ApiError } from '../../http/errors'
import { FINDINGS_PATTERN } from '../../setup/indices/names'
import type { Query, SearchHit, Store } from '../../store/port'

/**
 * `GET /_plugins/_security_analytics/findings/_search` with the upstream
 * parameters and answer shape (reference 5.7), served from the enriched
 * findings streams: the upstream raw-findings indices are empty by default,
 * and the findings a case-management client works on are these. Two members
 * are added to each finding for that client: `_index` (the backing index a
 * case update must name) and `case` (the finding's `svc.case`, or null).
 */

export interface FindingsQuery {
  detectorId?: string
  detectorType?: string
  sortString: string
  sortOrder: 'asc' | 'desc'
  size: number
  startIndex: number
  searchString?: string
  severity?: string
  detectionType?: string
  findingIds?: string[]
  startTime?: number
  endTime?: number
}

const MAX_WINDOW = 10_000

function int(query: Record<string, string | undefined>, name: string, fallback: number, min: number): number {
  const raw = query[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw.trim()) || Number(raw) < min)
    throw new ApiError(400, `Invalid value [${raw}] for parameter [${name}]: a number of at least ${min} is required`)
  return Number(raw)
}

const text = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim())

/** Reads the query string; bad numbers and orders are 400s, never 500s. */
export function parseFindingsQuery(query: Record<string, string | undefined>): FindingsQuery {
  const sortOrder = (text(query.sortOrder) ?? 'asc').toLowerCase()
  if (sortOrder !== 'asc' && sortOrder !== 'desc')
    throw new ApiError(400, `Invalid value [${query.sortOrder}] for parameter [sortOrder]: asc or desc`)
  const size = int(query, 'size', 20, 0)
  const startIndex = int(query, 'startIndex', 0, 0)
  if (size + startIndex > MAX_WINDOW) throw new ApiError(400, `startIndex + size must be at most ${MAX_WINDOW}`)
  const startTime = query.startTime === undefined ? undefined : int(query, 'startTime', 0, 0)
  const endTime = query.endTime === undefined ? undefined : int(query, 'endTime', 0, 0)
  return {
    detectorId: text(query.detector_id),
    detectorType: text(query.detectorType),
    sortString: text(query.sortString) ?? 'timestamp',
    sortOrder,
    size,
    startIndex,
    searchString: text(query.searchString),
    severity: text(query.severity),
    detectionType: text(query.detectionType),
    findingIds: text(query.findingIds)
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    startTime,
    endTime,
  }
}

function escapeWildcard(s: string): string {
  return s.replace(/[\\*?]/g, (c) => `\\${c}`)
}

export function findingsQueryDsl(q: FindingsQuery, visibility: Query | undefined): Query {
  const filter: Query[] = []
  if (visibility) filter.push(visibility)
  if (q.detectorId) filter.push({ term: { 'svc.detector.id': q.detectorId } })
  if (q.detectorType) filter.push({ term: { 'svc.detector.type': { value: q.detectorType, case_insensitive: true } } })
  if (q.severity && q.severity.toLowerCase() !== 'all')
    filter.push({ term: { 'svc.rule.level': { value: q.severity, case_insensitive: true } } })
  // Every finding here comes from a detection rule; threat-intel findings are not produced.
  if (q.detectionType && /threat/i.test(q.detectionType)) filter.push({ match_none: {} })
  if (q.findingIds) filter.push({ ids: { values: q.findingIds } })
  if (q.startTime !== undefined || q.endTime !== undefined) {
    const range: Record<string, unknown> = { format: 'epoch_millis' }
    if (q.startTime !== undefined) range.gte = q.startTime
    if (q.endTime !== undefined) range.lte = q.endTime
    filter.push({ range: { '@timestamp': range } })
  }
  if (q.searchString) {
    const s = q.searchString
    const contains = { value: `*${escapeWildcard(s)}*`, case_insensitive: true }
    filter.push({
      bool: {
        should: [
          { ids: { values: [s] } },
          { term: { 'svc.rule.id': s } },
          { term: { 'svc.detector.id': s } },
          { wildcard: { 'svc.rule.tags': contains } },
          { match: { 'svc.rule.title': s } },
          { wildcard: { 'svc.rule.title': contains } },
        ],
        minimum_should_match: 1,
      },
    })
  }
  return filter.length === 0 ? { match_all: {} } : { bool: { filter } }
}

type Json = Record<string, any>

/** One enriched finding in the upstream finding shape. */
export function findingOf(hit: SearchHit): Json {
  const src: Json = hit._source ?? {}
  const { doc_id, index, ...eventOwn } = (src.event ?? {}) as Json
  const { rule = {}, case: kase, detector = {}, ...svcOwn } = (src.svc ?? {}) as Json
  const event: Json = { ...src, event: eventOwn, svc: svcOwn }
  const stamp = Date.parse(String(src['@timestamp']))
  return {
    detectorId: detector.id ?? null,
    id: hit._id,
    related_doc_ids: doc_id === undefined ? [] : [doc_id],
    index: index ?? null,
    queries: [{ id: rule.id ?? null, name: rule.title ?? null, fields: [], query: '', tags: rule.tags ?? [] }],
    timestamp: Number.isNaN(stamp) ? null : stamp,
    document_list: doc_id === undefined ? [] : [{ index: index ?? null, id: doc_id, found: true, document: JSON.stringify(event) }],
    _index: hit._index,
    case: kase ?? null,
  }
}

export async function searchFindings(
  store: Store,
  q: FindingsQuery,
  visibility: Query | undefined,
): Promise<{ total_findings: number; findings: Json[] }> {
  const field = q.sortString === 'timestamp' ? '@timestamp' : q.sortString
  const answer = await store.search({
    index: FINDINGS_PATTERN,
    ignore_unavailable: true,
    allow_no_indices: true,
    body: {
      query: findingsQueryDsl(q, visibility),
      from: q.startIndex,
      size: q.size,
      track_total_hits: true,
      sort: [{ [field]: { order: q.sortOrder, unmapped_type: 'keyword' } }],
    },
  })
  const total = answer.hits.total
  return {
    total_findings: typeof total === 'number' ? total : (total?.value ?? answer.hits.hits.length),
    findings: answer.hits.hits.map(findingOf),
  }
}

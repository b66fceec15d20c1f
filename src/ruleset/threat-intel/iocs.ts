/**
 * `GET /threat_intel/iocs` (reference 3.2): the stored IoCs in the peer's list shape, with how many
 * IoC findings name each. The CTI consumer's IoCs are the one feed (`svc-cti-iocs`); feed types map
 * onto the peer's IoC types, and since the feed labels both address families alike, `ipv4-addr` and
 * `ipv6-addr` each select the feed's address types (each IoC then reports its own family).
 */
import { ApiError } from '../../http/errors'
import { isObject } from '../../json'
import { IOC_SUMMARY_ID } from '../../content/sync/ioc-post-sync'
import { IndexNotFound } from '../../store/errors'
import type { Store } from '../../store/port'
import { CTI_FEED_ID, IOC_FINDINGS_PATTERN, IOC_INDICES } from './ioc-findings'
import { feedTypesOf, IOC_TYPES, iocTypeOf, isIocType } from './ioc-types'

/** The peer's sort fields on the stored document. */
const SORT_FIELDS: Record<string, string> = {
  name: 'document.name',
  value: 'document.name',
  type: 'document.type',
  created: 'document.first_seen',
  modified: 'document.last_seen',
  feed_name: 'document.feed.name',
  id: 'document.id',
}

const csv = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)

function count(v: string | undefined, fallback: number, name: string): number {
  if (v === undefined || v === '') return fallback
  const n = Number(v)
  if (!Number.isInteger(n) || n < 0 || n > 10_000) throw new ApiError(400, `Invalid ${name} [${v}]`)
  return n
}

const iso = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? new Date(v).toISOString() : null)

export async function listIocs(store: Store, q: Record<string, string | undefined>): Promise<{ total: number; iocs: unknown[] }> {
  const types = csv(q.ioc_types ?? 'ALL').map((t) => t.toLowerCase())
  const filter: unknown[] = []
  if (!types.includes('all')) {
    const unknown = types.filter((t) => !isIocType(t))
    if (unknown.length) throw new ApiError(400, `Invalid ioc_types [${unknown.join(', ')}]; expected ALL or any of ${IOC_TYPES.join(', ')}`)
    filter.push({ terms: { 'document.type': [...new Set(types.flatMap((t) => feedTypesOf(t as (typeof IOC_TYPES)[number])))] } })
  }
  const feeds = csv(q.feed_ids)
  // CTI IoCs carry no feed_id: the built-in feed is "no feed_id".
  if (feeds.length > 0)
    filter.push({
      bool: {
        should: [
          { terms: { feed_id: feeds } },
          ...(feeds.includes(CTI_FEED_ID) ? [{ bool: { must_not: [{ exists: { field: 'feed_id' } }] } }] : []),
        ],
        minimum_should_match: 1,
      },
    })
  const sortKey = q.sortString ?? 'name'
  const sortField = SORT_FIELDS[sortKey]
  if (!sortField) throw new ApiError(400, `Invalid sortString [${sortKey}]; expected one of ${Object.keys(SORT_FIELDS).join(', ')}`)
  const order = (q.sortOrder ?? 'asc').toLowerCase()
  if (order !== 'asc' && order !== 'desc') throw new ApiError(400, `Invalid sortOrder [${q.sortOrder}]`)
  const size = count(q.size, 20, 'size')
  const from = count(q.startIndex, 0, 'startIndex')
  const must = q.searchString
    ? [
        {
          query_string: {
            query: q.searchString,
            fields: ['document.name', 'document.type', 'document.tags', 'document.provider', 'document.feed.name'],
          },
        },
      ]
    : []
  let r
  try {
    r = await store.search({
      index: IOC_INDICES,
      expand_wildcards: 'all',
      ignore_unavailable: true,
      body: {
        from,
        size,
        track_total_hits: true,
        query: { bool: { filter, must, must_not: [{ ids: { values: [IOC_SUMMARY_ID] } }] } },
        sort: [{ [sortField]: { order, ...(q.missing ? { missing: q.missing } : {}) } }, { _id: 'asc' }],
      },
    })
  } catch (e) {
    if (e instanceof IndexNotFound) return { total: 0, iocs: [] }
    throw e
  }
  const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0)
  const counts = await findingCounts(
    store,
    r.hits.hits.map((h) => h._id),
  )
  const iocs = r.hits.hits.map((h) => {
    if (isObject(h._source?.ioc)) return uploaded(h._id, h._source, counts.get(h._id) ?? 0)
    const doc = isObject(h._source?.document) ? h._source.document : {}
    const name = String(doc.name ?? '')
    const feed = isObject(doc.feed) && typeof doc.feed.name === 'string' ? doc.feed.name : undefined
    return {
      id: h._id,
      name,
      type: iocTypeOf(String(doc.type ?? ''), name) ?? doc.type ?? null,
      value: name,
      severity: null,
      created: iso(doc.first_seen),
      modified: iso(doc.last_seen) ?? iso(doc.first_seen),
      description: null,
      labels: Array.isArray(doc.tags) ? doc.tags : [],
      feed_id: CTI_FEED_ID,
      feed_name: feed ?? doc.provider ?? null,
      spec_version: null,
      version: typeof h._source?.offset === 'number' ? h._source.offset : null,
      num_findings: counts.get(h._id) ?? 0,
    }
  })
  return { total, iocs }
}

/** An IoC of a user's uploaded source, as uploaded. */
function uploaded(id: string, source: Record<string, unknown>, findings: number) {
  const ioc = source.ioc as Record<string, unknown>
  const doc = isObject(source.document) ? source.document : {}
  return {
    ...ioc,
    id,
    created: iso(ioc.created),
    modified: iso(ioc.modified) ?? iso(ioc.created),
    feed_id: source.feed_id,
    feed_name: isObject(doc.feed) ? (doc.feed.name ?? null) : null,
    version: null,
    num_findings: findings,
  }
}

/** IoC findings naming each of these IoCs (one search, a terms aggregation). */
async function findingCounts(store: Store, ids: string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  if (ids.length === 0) return out
  try {
    const r = await store.search({
      index: IOC_FINDINGS_PATTERN,
      expand_wildcards: 'all',
      body: {
        size: 0,
        query: { terms: { 'ioc_feed_ids.ioc_id': ids } },
        // A finding may name other IoCs too: their buckets are left out below.
        aggs: { ioc: { terms: { field: 'ioc_feed_ids.ioc_id', size: Math.min(10_000, ids.length * 10) } } },
      },
    })
    const buckets = ((r.aggregations?.ioc as { buckets?: Array<{ key: string; doc_count: number }> })?.buckets ?? []) as Array<{
      key: string
      doc_count: number
    }>
    const wanted = new Set(ids)
    for (const b of buckets) if (wanted.has(String(b.key))) out.set(String(b.key), b.doc_count)
  } catch (e) {
    if (!(e instanceof IndexNotFound)) throw e
  }
  return out
}

/**
 * IoC findings (reference 3.4): one `ioc_finding` per distinct malicious value per detector run,
 * naming the events that held it (`<docId>:<index>`), the IoCs it matched with their feed, its
 * type and value, in the peer's IoC findings index; and the peer's search over them
 * (`GET /threat_intel/findings/_search`).
 *
 * Ids are derived from (detector, type, value, first event) rather than random: a run repeated
 * after a crash before its checkpoint writes the same finding again, as a create conflict.
 */
import { ApiError } from '../../http/errors'
import { listParams } from '../alerts/list-params'
import { AlreadyExists, IndexNotFound } from '../../store/errors'
import type { Mappings, SearchBody, Store } from '../../store/port'
import { SlicedCalls } from '../../store/sliced-calls'
import { READABLE_WINDOW, readablePage, type ReadableEvents } from './readable-events'
import { isObject } from '../../json'
import { sha256Hex } from '../../content/hash'
import { iocTypeOf, type IocType } from './ioc-types'
import { IOC_ALIAS } from './synced-iocs'
import { TI_UPLOADED_IOCS_INDEX } from '../indices'
import { firstHistoryIndex, type HistoryFamily } from '../history-indices'

/** The write alias of the IoC findings (reference 3.4), over `<alias>-history-<yyyy.MM.dd>-<n>` indices. */
export const IOC_FINDINGS_INDEX = '.opensearch-sap-ioc-findings'
/** What reads search: every history index (and an index of the alias's name, as versions before the rollover wrote). */
export const IOC_FINDINGS_PATTERN = `${IOC_FINDINGS_INDEX}*`
const HISTORY_PREFIX = `${IOC_FINDINGS_INDEX}-history`
export const IOC_FINDING_SETTINGS = {
  historyEnabled: 'plugins.security_analytics.ioc_finding_enabled',
  maxAge: 'plugins.security_analytics.ioc_finding_history_max_age',
  maxDocs: 'plugins.security_analytics.ioc_finding_history_max_docs',
  retention: 'plugins.security_analytics.ioc_finding_history_retention_period',
  rolloverPeriod: 'plugins.security_analytics.ioc_finding_history_rollover_period',
} as const
/** The CTI consumer's IoCs as a threat-intel source of their own (the built-in feed). */
export const CTI_FEED_ID = 'svc-cti-iocs'
/** Where IoCs are stored: the CTI consumer's, and those of users' uploaded sources. */
export const IOC_INDICES = [IOC_ALIAS, TI_UPLOADED_IOCS_INDEX]

/** IoCs read, findings written, per request at most. */
const PAGE = 1_000
/**
 * The store calls of detector runs, monitor runs and hunts, in slices of about 10 ms of this thread
 * (shared by all of them): a hunt's flush looks up and writes thousands at once.
 */
const lookups = new SlicedCalls()
const writes = new SlicedCalls()
const kw = { type: 'keyword' }
export const IOC_FINDING_MAPPING: Mappings = {
  dynamic: false,
  properties: {
    id: kw,
    related_doc_ids: kw,
    ioc_feed_ids: { properties: { ioc_id: kw, feed_id: kw, feed_name: kw, index: kw } },
    monitor_id: kw,
    monitor_name: kw,
    detector_id: kw,
    ioc_value: kw,
    ioc_type: kw,
    timestamp: { type: 'date', format: 'epoch_millis' },
    execution_id: kw,
  },
}

export interface IocFeedRef {
  ioc_id: string
  feed_id: string
  feed_name: string
  index: string
}

export interface IocFinding {
  id: string
  related_doc_ids: string[]
  ioc_feed_ids: IocFeedRef[]
  monitor_id: string
  monitor_name: string
  /** svc-ext: the detector whose `threat_intel_enabled` found it. */
  detector_id: string
  ioc_value: string
  ioc_type: IocType
  timestamp: number
  execution_id: string
}

/** UUID-shaped, derived from the parts (see the module comment). */
export function derivedUuid(...parts: string[]): string {
  const h = sha256Hex(parts.join('\0'))
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`
}

/** What a run found for one value: the IoC ids the index returned and the events (`docId:index`). */
export interface IocHit {
  type: IocType
  value: string
  iocIds: string[]
  docs: string[]
}

const ensured = new WeakMap<Store, boolean>()

async function createFindingsIndex(store: Store, index: string, aliases?: Record<string, object>): Promise<void> {
  try {
    await store.createIndex({
      index,
      body: { settings: { index: { hidden: true } }, mappings: IOC_FINDING_MAPPING, ...(aliases ? { aliases } : {}) },
    })
  } catch (e) {
    if (!(e instanceof AlreadyExists)) throw e
  }
}

/**
 * The IoC findings family for the shared history job: the history indices
 * (`.opensearch-sap-ioc-findings-history-<day>-<n>`, the peer's names) rolled over behind the alias.
 */
export const IOC_FINDINGS_HISTORY = (store: Store): HistoryFamily => ({
  name: 'IoC finding history',
  pattern: `${HISTORY_PREFIX}-*`,
  prefix: () => HISTORY_PREFIX,
  settings: IOC_FINDING_SETTINGS,
  create: (index, aliases) => createFindingsIndex(store, index, aliases),
})

/** The write alias over its first history index, unless the alias (or an index of its name) exists. */
async function ensureFindingsIndex(store: Store, now: number): Promise<void> {
  if (ensured.get(store)) return
  if (!(await store.existsIndex({ index: IOC_FINDINGS_INDEX, expand_wildcards: 'all' })))
    await createFindingsIndex(store, firstHistoryIndex(HISTORY_PREFIX, now), { [IOC_FINDINGS_INDEX]: { is_write_index: true } })
  ensured.set(store, true)
}

/** The findings of a run's hits: the IoCs read from the store for their feed and type. */
export async function buildIocFindings(
  store: Store,
  hits: IocHit[],
  run: { detectorId: string; monitorId: string; monitorName: string; now: number },
): Promise<IocFinding[]> {
  if (hits.length === 0) return []
  const ids = [...new Set(hits.flatMap((h) => h.iocIds))]
  const iocs = new Map<string, Record<string, unknown>>()
  const feeds = new Map<string, string>()
  // In slices of this thread (a hunt's flush may look up thousands), each well inside `index.max_result_window`.
  await lookups.run(ids, PAGE, async (page) => {
    const r = await store.search({
      index: IOC_INDICES,
      expand_wildcards: 'all',
      ignore_unavailable: true,
      body: { query: { ids: { values: page } }, size: page.length, _source: ['document', 'feed_id'] },
    })
    for (const h of r.hits.hits)
      if (isObject(h._source?.document)) {
        iocs.set(h._id, h._source.document)
        if (typeof h._source.feed_id === 'string') feeds.set(h._id, h._source.feed_id)
      }
    return []
  })
  const out: IocFinding[] = []
  for (const hit of hits) {
    // An IoC deleted since the index was read matches nothing any more.
    const listed = hit.iocIds.filter((id) => iocs.has(id))
    if (listed.length === 0) continue
    const first = iocs.get(listed[0])!
    const id = derivedUuid(run.detectorId, hit.type, hit.value, hit.docs[0] ?? '')
    out.push({
      id,
      related_doc_ids: hit.docs,
      ioc_feed_ids: listed.map((iocId) => {
        const doc = iocs.get(iocId)!
        const feed = isObject(doc.feed) && typeof doc.feed.name === 'string' ? doc.feed.name : undefined
        return { ioc_id: iocId, feed_id: feeds.get(iocId) ?? CTI_FEED_ID, feed_name: feed ?? String(doc.provider ?? 'CTI'), index: '' }
      }),
      monitor_id: run.monitorId,
      monitor_name: run.monitorName,
      detector_id: run.detectorId,
      ioc_value: hit.value,
      // The IoC's own type (an address field may hold either family).
      ioc_type: iocTypeOf(String(first.type ?? ''), String(first.name ?? '')) ?? hit.type,
      timestamp: run.now,
      execution_id: derivedUuid(id, 'execution'),
    })
  }
  return out
}

/**
 * Writes findings as creates; one already written (a repeated run) is left as it is. Answers how
 * many were new. `durability: 'async'` when a durable write follows that they must precede (a
 * detector run's checkpoint): made durable with it, not each on its own.
 */
export async function writeIocFindings(store: Store, findings: IocFinding[], opts: { durability?: 'async' } = {}): Promise<number> {
  if (findings.length === 0) return 0
  await ensureFindingsIndex(store, findings[0].timestamp)
  let written = 0
  const failures: string[] = []
  const items = await writes.run(findings, PAGE, async (slice, last) => {
    const body = slice.flatMap((f) => [{ create: { _index: IOC_FINDINGS_INDEX, _id: f.id } }, f as unknown as Record<string, unknown>])
    return (await store.bulk({ refresh: last, body, durability: opts.durability })).items
  })
  for (const item of items) {
    const result = item.create
    if (!result) continue
    if (result.status === 201 || result.status === 200) written++
    else if (result.status !== 409) failures.push(JSON.stringify(result.error ?? result.status))
  }
  if (failures.length > 0) throw new Error(`IoC findings could not be written: ${failures.slice(0, 3).join('; ')}`)
  return written
}

const SORTABLE = /^[a-z_][a-z0-9_.]*$/i

const csv = (v: string | undefined) =>
  (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)

/** `GET /threat_intel/findings/_search` with the peer's parameters and defaults (reference 3.4), under the caller's DLS. */
export async function searchIocFindings(
  store: Store,
  q: Record<string, string | undefined>,
  events?: ReadableEvents,
): Promise<{ total_findings: number; ioc_findings: unknown[] }> {
  const filter: unknown[] = []
  const findingIds = csv(q.findingIds)
  if (findingIds.length) filter.push({ ids: { values: findingIds } })
  const iocIds = csv(q.iocIds)
  if (iocIds.length) filter.push({ terms: { 'ioc_feed_ids.ioc_id': iocIds } })
  if (q.startTime !== undefined && q.endTime !== undefined) {
    const [from, to] = [Number(q.startTime), Number(q.endTime)]
    if (!Number.isFinite(from) || !Number.isFinite(to)) throw new ApiError(400, 'startTime and endTime are epoch milliseconds')
    filter.push({ range: { timestamp: { gte: from, lte: to } } })
  }
  const should = q.searchString ? [{ query_string: { query: q.searchString } }] : []
  const { sortField, order, size, from } = listParams(q, 'timestamp', (field) => SORTABLE.test(field))
  const query = { bool: { filter, should, ...(should.length ? { minimum_should_match: 1 } : {}) } }
  const sort = [{ [sortField]: { order, ...(q.missing ? { missing: q.missing } : {}), unmapped_type: 'keyword' } }]
  const search = (body: SearchBody) => store.search({ index: IOC_FINDINGS_PATTERN, expand_wildcards: 'all', allow_no_indices: true, body })
  try {
    if (events) {
      const matches = await search({ size: READABLE_WINDOW, query, sort, _source: ['related_doc_ids'] })
      const page = await readablePage(events, matches.hits.hits, ':', { from, size })
      if (page) {
        const byId = new Map(
          (await search({ size: page.ids.length, query: { ids: { values: page.ids } } })).hits.hits.map((h) => [h._id, h]),
        )
        const findings = []
        for (const id of page.ids) {
          const f = byId.get(id)?._source
          if (f) findings.push({ ...f, related_doc_ids: await events.keep(f.related_doc_ids as string[], ':') })
        }
        return { total_findings: page.total, ioc_findings: findings }
      }
    }
    const r = await search({ from, size, query, sort, track_total_hits: true })
    const total = typeof r.hits.total === 'number' ? r.hits.total : (r.hits.total?.value ?? 0)
    return { total_findings: total, ioc_findings: r.hits.hits.map((h) => h._source) }
  } catch (e) {
    if (e instanceof IndexNotFound) return { total_findings: 0, ioc_findings: [] }
    throw e
  }
}

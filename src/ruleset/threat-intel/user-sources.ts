/**
 * Threat-intel sources of users (reference 3.2): `IOC_UPLOAD` sources, created, updated and
 * deleted through the sources API. The source's config is one document; its IoCs are one document
 * each, in the CTI IoCs' `document` shape (so the IoC index, the IoC list and findings read both
 * alike) plus the source as `feed_id`. Every write hands the node's IoC index exactly the IoCs it
 * changed (`SyncedIocs.changed`): an upload adds its IoCs, an update only what differs, a deletion
 * removes the source's IoCs; nothing is rebuilt. A source with `enabled_for_scan: false` keeps its
 * IoCs stored but out of matching.
 *
 * A source is written `CREATING` before its IoCs and `AVAILABLE` after, so a crash in between
 * leaves a source a user sees and can delete, never IoCs no source names.
 */
import { type Static, Type as T } from '@sinclair/typebox'
import { ApiError } from '../../http/errors'
import { isObject } from '../../json'
import { DocumentMissing, IndexNotFound } from '../../store/errors'
import type { SearchHit, Store } from '../../store/port'
import { check } from '../model'
import { ensureIndex, TI_SOURCES_INDEX, TI_UPLOADED_IOCS_INDEX } from '../indices'
import type { SyncedIocs } from './synced-iocs'
import { parseUpload, type UploadedIoc } from './upload-iocs'

export const SourceConfigBody = T.Object(
  {
    name: T.String({ pattern: '^[A-Za-z0-9 _-]{1,128}$', default: 'source' }),
    format: T.Optional(T.String({ maxLength: 50 })),
    type: T.String(),
    description: T.Optional(T.Union([T.String(), T.Null()])),
    enabled: T.Optional(T.Boolean()),
    enabled_for_scan: T.Optional(T.Boolean()),
    ioc_types: T.Optional(T.Array(T.String())),
    schedule: T.Optional(T.Union([T.Object({}, { additionalProperties: true }), T.Null()])),
    source: T.Optional(T.Object({ ioc_upload: T.Optional(T.Unknown()) }, { additionalProperties: true })),
  },
  { additionalProperties: true },
)
type SourceConfigBody = Static<typeof SourceConfigBody>

export interface UserSourcesDeps {
  store: Store
  now: () => number
  iocs: Pick<SyncedIocs, 'changed'>
}

/** Stored IoC documents per bulk request. */
const BULK = 2_000
const PAGE = 10_000

const docId = (source: string, iocId: string) => `${source}:${iocId}`

/** The body of a source (top level, or wrapped in `source_config` as the answers are), checked. */
function checked(body: Record<string, unknown>): SourceConfigBody {
  const config = check(SourceConfigBody, isObject(body.source_config) ? body.source_config : body, 'source config')
  if (config.type === 'URL_DOWNLOAD') throw new ApiError(400, 'URL_DOWNLOAD sources are reserved for internal use')
  if (config.type === 'S3_CUSTOM') throw new ApiError(400, 'S3_CUSTOM sources are not supported; upload the IoCs (IOC_UPLOAD)')
  if (config.type !== 'IOC_UPLOAD') throw new ApiError(400, `Invalid source type [${config.type}]; expected IOC_UPLOAD`)
  if (config.enabled) throw new ApiError(400, 'IOC_UPLOAD sources cannot be enabled: they have no refresh schedule')
  if (config.schedule) throw new ApiError(400, 'IOC_UPLOAD sources take no schedule')
  if (config.source && 'custom_schema_ioc_upload' in config.source)
    throw new ApiError(400, 'custom_schema_ioc_upload is not supported; upload STIX2 IoCs (source.ioc_upload)')
  return config
}

/** The uploaded IoCs of a body, or undefined when it carries none (an update of the config only). */
function uploadOf(config: SourceConfigBody, required: boolean): UploadedIoc[] | undefined {
  const upload = config.source?.ioc_upload
  if (upload === undefined && !required) return undefined
  if (!isObject(upload) || !('iocs' in upload)) throw new ApiError(400, 'An IOC_UPLOAD source needs source.ioc_upload.iocs')
  return parseUpload(upload.iocs, config.ioc_types)
}

/** The stored document of an IoC of a source. */
function iocDocument(sourceId: string, sourceName: string, scan: boolean, ioc: UploadedIoc): Record<string, unknown> {
  return {
    feed_id: sourceId,
    ioc_key: docId(sourceId, ioc.id),
    scan,
    ioc,
    document: {
      id: ioc.id,
      name: ioc.value,
      type: ioc.type,
      tags: ioc.labels,
      provider: sourceName,
      first_seen: ioc.created,
      last_seen: ioc.modified,
      feed: { name: sourceName },
    },
  }
}

/** What identifies an IoC document's effect on matching (unchanged ones are not rewritten). */
const fingerprint = (doc: Record<string, unknown>) => {
  const d = isObject(doc.document) ? doc.document : {}
  return JSON.stringify([doc.scan, d.type, d.name, doc.ioc])
}

const priorFileName = (prior: Record<string, unknown> | undefined) =>
  isObject(prior?.source) && isObject(prior.source.ioc_upload) ? (prior.source.ioc_upload.file_name ?? null) : null

export class UserSources {
  constructor(private readonly deps: UserSourcesDeps) {}

  async get(id: string): Promise<{ _id: string; _version: number; source_config: Record<string, unknown> } | undefined> {
    const got = await this.deps.store.get({ index: TI_SOURCES_INDEX, id }).catch((e) => {
      if (e instanceof IndexNotFound) return undefined
      throw e
    })
    if (!got?.found || !isObject(got._source?.source_config)) return undefined
    return { _id: id, _version: got._version ?? 1, source_config: got._source.source_config }
  }

  async create(body: Record<string, unknown>, user: string | null) {
    const config = checked(body)
    const iocs = uploadOf(config, true)!
    const id = crypto.randomUUID()
    const now = this.deps.now()
    await ensureIndex(this.deps.store, TI_SOURCES_INDEX)
    const stored = this.render(config, iocs, { created_by_user: user, created_at: now, last_refreshed_user: user }, now)
    await this.write(id, { ...stored, state: 'CREATING' }, true)
    await this.replaceIocs(id, config.name, config.enabled_for_scan ?? true, iocs)
    return { _id: id, ...(await this.write(id, stored, false)) }
  }

  async update(id: string, body: Record<string, unknown>, user: string | null) {
    const was = await this.get(id)
    if (!was) throw new ApiError(404, `Threat intel source [${id}] not found`)
    const config = checked(body)
    const iocs = uploadOf(config, false)
    const now = this.deps.now()
    const prior = was.source_config
    const kept = {
      created_by_user: prior.created_by_user ?? null,
      created_at: prior.created_at ?? null,
      last_refreshed_user: iocs ? user : (prior.last_refreshed_user ?? null),
    }
    const stored = this.render(config, iocs, kept, now, iocs ? undefined : prior)
    await this.replaceIocs(id, config.name, config.enabled_for_scan ?? true, iocs)
    return { _id: id, ...(await this.write(id, stored, false)) }
  }

  async delete(id: string): Promise<{ _id: string }> {
    if (!(await this.get(id))) throw new ApiError(404, `Threat intel source [${id}] not found`)
    const stored = await this.storedIocs(id)
    const removed = new Map<string, null>([...stored.keys()].map((k) => [k, null]))
    await this.bulk([...removed.keys()].map((k) => [{ delete: { _index: TI_UPLOADED_IOCS_INDEX, _id: k } }]))
    this.deps.iocs.changed(removed)
    await this.deps.store.delete({ index: TI_SOURCES_INDEX, id, refresh: true }).catch((e) => {
      if (!(e instanceof DocumentMissing)) throw e
    })
    return { _id: id }
  }

  /** `POST /sources/_search` over users' sources: the body's query, from and size as given. */
  async search(body: Record<string, unknown>) {
    try {
      return await this.deps.store.search({ index: TI_SOURCES_INDEX, body: { ...body, version: true } })
    } catch (e) {
      if (!(e instanceof IndexNotFound)) throw e
      return { took: 0, timed_out: false, hits: { total: { value: 0, relation: 'eq' as const }, max_score: null, hits: [] as SearchHit[] } }
    }
  }

  /** The `source_config` as answered (the uploaded IoCs are not repeated: `GET /iocs` lists them). */
  private render(
    config: SourceConfigBody,
    iocs: UploadedIoc[] | undefined,
    kept: Record<string, unknown>,
    now: number,
    prior?: Record<string, unknown>,
  ): Record<string, unknown> {
    const types = config.ioc_types?.map((t) => t.toLowerCase()) ?? (iocs ? [...new Set(iocs.map((i) => i.type))] : prior?.ioc_types)
    const upload = isObject(config.source?.ioc_upload) ? config.source.ioc_upload : {}
    return {
      name: config.name,
      format: config.format ?? 'STIX2',
      type: 'IOC_UPLOAD',
      description: config.description ?? null,
      ...kept,
      enabled_time: null,
      last_update_time: now,
      schedule: null,
      state: 'AVAILABLE',
      refresh_type: 'FULL',
      last_refreshed_time: iocs ? now : (prior?.last_refreshed_time ?? now),
      enabled: false,
      enabled_for_scan: config.enabled_for_scan ?? true,
      ioc_types: types ?? [],
      source: {
        ioc_upload: {
          file_name: typeof upload.file_name === 'string' ? upload.file_name : priorFileName(prior),
          iocs: [],
        },
      },
      ioc_count: iocs?.length ?? prior?.ioc_count ?? 0,
    }
  }

  private async write(id: string, sourceConfig: Record<string, unknown>, create: boolean) {
    const w = await this.deps.store.index({
      index: TI_SOURCES_INDEX,
      id,
      body: { source_config: sourceConfig },
      refresh: true,
      ...(create ? { op_type: 'create' as const } : {}),
    })
    return { _version: w._version, source_config: sourceConfig }
  }

  /**
   * Makes the stored IoCs of a source these (undefined: the stored ones, their name and scan flag
   * brought up to date) and tells the IoC index what changed.
   */
  private async replaceIocs(id: string, name: string, scan: boolean, iocs: UploadedIoc[] | undefined): Promise<void> {
    await ensureIndex(this.deps.store, TI_UPLOADED_IOCS_INDEX)
    const stored = await this.storedIocs(id)
    const wanted = new Map<string, Record<string, unknown>>()
    for (const ioc of iocs ?? [...stored.values()].map((d) => d.ioc as UploadedIoc))
      wanted.set(docId(id, ioc.id), iocDocument(id, name, scan, ioc))
    const changes = new Map<string, Record<string, unknown> | null>()
    for (const key of stored.keys()) if (!wanted.has(key)) changes.set(key, null)
    for (const [key, doc] of wanted) {
      const had = stored.get(key)
      if (!had || fingerprint(had) !== fingerprint(doc) || (isObject(had.document) && had.document.provider !== name)) changes.set(key, doc)
    }
    await this.bulk(
      [...changes].map(([key, doc]) =>
        doc ? [{ index: { _index: TI_UPLOADED_IOCS_INDEX, _id: key } }, doc] : [{ delete: { _index: TI_UPLOADED_IOCS_INDEX, _id: key } }],
      ),
    )
    this.deps.iocs.changed(changes)
  }

  /** The stored IoC documents of a source, by document id. */
  private async storedIocs(id: string): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>()
    let after: unknown[] | undefined
    for (;;) {
      let hits: SearchHit[]
      try {
        const r = await this.deps.store.search({
          index: TI_UPLOADED_IOCS_INDEX,
          body: {
            query: { term: { feed_id: id } },
            sort: [{ ioc_key: 'asc' }],
            size: PAGE,
            track_total_hits: false,
            ...(after ? { search_after: after } : {}),
          },
        })
        hits = r.hits.hits
      } catch (e) {
        if (e instanceof IndexNotFound) return out
        throw e
      }
      for (const h of hits) if (h._source) out.set(h._id, h._source)
      if (hits.length < PAGE) return out
      after = hits[hits.length - 1].sort
    }
  }

  private async bulk(ops: Array<Array<Record<string, unknown>>>): Promise<void> {
    for (let at = 0; at < ops.length; at += BULK) {
      const r = await this.deps.store.bulk({ refresh: at + BULK >= ops.length, body: ops.slice(at, at + BULK).flat() })
      const failed = r.items.map((i) => Object.values(i)[0]).filter((x) => x && x.status >= 300 && x.status !== 404)
      if (failed.length > 0)
        throw new Error(`IoCs of a source could not be written: ${JSON.stringify(failed[0]?.error ?? failed[0]?.status)}`)
    }
  }
}

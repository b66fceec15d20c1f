/**
 * Threat-intel sources (reference 3.2): the CTI consumer's IoCs are a source built in and
 * read-only (`svc-cti-iocs`, a `URL_DOWNLOAD` source as the peer's default feed is): its config
 * reflects the consumer's state and settings. Users add `IOC_UPLOAD` sources (user-sources.ts);
 * creating a `URL_DOWNLOAD` source is a 400 as on the peer, and S3 sources are not supported.
 */
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { ApiError } from '../../http/errors'
import { isObject } from '../../json'
import { CTI_CONSUMERS_INDEX } from '../../setup/indices/names'
import type { Store } from '../../store/port'
import { CTI_FEED_ID } from './ioc-findings'
import { IocIndex } from './ioc-index'
import { IOC_TYPES } from './ioc-types'
import type { UserSources } from './user-sources'

const IOC_CONSUMER = 'cti:catalog:consumer:iocs'

/** What a refresh of the built-in source starts: a sync pass (`busy` or `locked` when one already runs). */
export type StartSyncPass = () => Promise<'started' | 'busy' | 'locked'>

export interface SourcesDeps {
  store: Store
  uploads: UserSources
  /** The Content Manager's on-demand pass, set once the sync exists (unset where none runs, as in tools). */
  contentSync: { pass?: StartSyncPass }
  settings: { snapshot(): Promise<SettingsSnapshot> }
  /** The node's IoC index: which types the source holds now. */
  iocs: { current(): Promise<IocIndex> }
}

const millis = (iso: unknown) => (typeof iso === 'string' && !Number.isNaN(Date.parse(iso)) ? Date.parse(iso) : null)

/** The built-in source's config in the peer's `source_config` shape. */
async function builtIn(d: SourcesDeps): Promise<Record<string, unknown>> {
  const settings = await d.settings.snapshot()
  const got = await d.store.get({ index: CTI_CONSUMERS_INDEX, id: IOC_CONSUMER }).catch(() => undefined)
  const state = got?.found && isObject(got._source) ? got._source : {}
  const last = isObject(state.last_pass) ? state.last_pass : {}
  const counts = (await d.iocs.current()).counts()
  const status =
    state.status === 'running' ? 'REFRESHING' : state.status === 'failed' || last.outcome === 'failed' ? 'REFRESH_FAILED' : 'AVAILABLE'
  const interval = settings.num('plugins.content_manager.catalog.sync_interval')
  return {
    name: 'CTI IoCs',
    format: 'CTI',
    type: 'URL_DOWNLOAD',
    description: 'IoCs of the CTI feed the Content Manager keeps in step (read-only).',
    created_by_user: null,
    created_at: null,
    enabled_time: null,
    last_update_time: millis(last.finished_at),
    schedule: { interval: { start_time: null, period: interval, unit: 'Minutes' } },
    state: status,
    refresh_type: 'FULL',
    last_refreshed_time: millis(last.finished_at),
    last_refreshed_user: null,
    enabled: settings.bool('plugins.content_manager.catalog.update_on_schedule'),
    enabled_for_scan: true,
    ioc_types: IOC_TYPES.filter((t) => counts[t] > 0),
    source: { url_download: { url: settings.str('plugins.content_manager.catalog.iocs') || null, feed_format: 'CTI' } },
    // svc-ext: where the consumer is in the feed.
    local_offset: typeof state.local_offset === 'number' ? state.local_offset : 0,
    remote_offset: typeof state.remote_offset === 'number' ? state.remote_offset : 0,
  }
}

const BUILT_IN_READ_ONLY = `The built-in source [${CTI_FEED_ID}] is read-only: the Content Manager keeps it in step with the CTI feed`

export async function getSource(d: SourcesDeps, id: string) {
  if (id === CTI_FEED_ID) return { _id: CTI_FEED_ID, _version: 1, source_config: await builtIn(d) }
  const got = await d.uploads.get(id)
  if (!got) throw new ApiError(404, `Threat intel source [${id}] not found`)
  return got
}

/** `POST /sources/_search`: the built-in source first (the query is not applied to it), then users' sources searched. */
export async function searchSources(d: SourcesDeps, body: Record<string, unknown>) {
  const from = typeof body.from === 'number' ? body.from : 0
  const size = typeof body.size === 'number' ? body.size : 10
  if (!Number.isInteger(from) || from < 0 || !Number.isInteger(size) || size < 0)
    throw new ApiError(400, 'from and size are non-negative integers')
  const withBuiltIn = from === 0 && size > 0
  const users = await d.uploads.search({ ...body, from: Math.max(0, from - 1), size: withBuiltIn ? size - 1 : size })
  const builtInHit = {
    _index: '.opensearch-sap-threat-intel-sources',
    _id: CTI_FEED_ID,
    _score: 1,
    _source: { source_config: await builtIn(d) },
  }
  const hits = [...(withBuiltIn ? [builtInHit] : []), ...users.hits.hits]
  const total = (typeof users.hits.total === 'number' ? users.hits.total : (users.hits.total?.value ?? 0)) + 1
  return {
    took: users.took ?? 0,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: { total: { value: total, relation: 'eq' }, max_score: hits.length ? 1 : null, hits },
  }
}

export async function createSource(d: SourcesDeps, body: Record<string, unknown>, user: string | null) {
  return d.uploads.create(body, user)
}

export async function updateSource(d: SourcesDeps, id: string, body: Record<string, unknown>, user: string | null) {
  if (id === CTI_FEED_ID) throw new ApiError(400, BUILT_IN_READ_ONLY)
  return d.uploads.update(id, body, user)
}

export async function deleteSource(d: SourcesDeps, id: string) {
  if (id === CTI_FEED_ID) throw new ApiError(400, BUILT_IN_READ_ONLY)
  return d.uploads.delete(id)
}

/**
 * `POST /sources/{id}/_refresh`. The built-in source is refreshed by a pass of the Content Manager's
 * sync, as `POST /_plugins/_content_manager/update` starts one (the same setting switches both off).
 * An uploaded source has nothing to fetch: the peer refuses it with this message, here a 400.
 */
export async function refreshSource(d: SourcesDeps, id: string): Promise<{ acknowledged: true }> {
  if (id !== CTI_FEED_ID) {
    if (!(await d.uploads.get(id))) throw new ApiError(404, `Threat intel source [${id}] not found`)
    throw new ApiError(400, `Unable to refresh source config [${id}] with a source type of [IOC_UPLOAD]`)
  }
  const pass = d.contentSync.pass
  if (!pass) throw new ApiError(400, `The built-in source [${CTI_FEED_ID}] is refreshed by the content sync, which this node does not run`)
  if (!(await d.settings.snapshot()).bool('plugins.content_manager.catalog.update_on_demand'))
    throw new ApiError(403, 'On-demand content updates are disabled on this deployment.')
  const started = await pass()
  if (started !== 'started') throw new ApiError(409, 'Invalid TIF job state. Expecting AVAILABLE or REFRESH_FAILED but received REFRESHING')
  return { acknowledged: true }
}

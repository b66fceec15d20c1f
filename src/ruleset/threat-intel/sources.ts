/**
 * Threat-intel sources (reference 3.2): the CTI consumer's IoCs are the one source, built in and
 * read-only (`svc-cti-iocs`, a `URL_DOWNLOAD` source as the peer's default feed is): its config
 * reflects the consumer's state and settings. Sources of users (S3, uploads) are not supported, and
 * creating one is a 400, as creating a `URL_DOWNLOAD` source is on the peer.
 */
import type { SettingsSnapshot } from '../../config/cluster-settings'
import { ApiError } from '../../http/errors'
import { isObject } from '../../json'
import { CTI_CONSUMERS_INDEX } from '../../setup/indices/names'
import type { Store } from '../../store/port'
import { CTI_FEED_ID } from './ioc-findings'
import { IocIndex } from './ioc-index'
import { IOC_TYPES } from './ioc-types'

const IOC_CONSUMER = 'cti:catalog:consumer:iocs'

export interface SourcesDeps {
  store: Store
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

export async function getSource(d: SourcesDeps, id: string) {
  if (id !== CTI_FEED_ID) throw new ApiError(404, `Threat intel source [${id}] not found`)
  return { _id: CTI_FEED_ID, _version: 1, source_config: await builtIn(d) }
}

/** `POST /sources/_search`: the built-in source as the one hit (the query is not applied to it). */
export async function searchSources(d: SourcesDeps, body: Record<string, unknown>) {
  const from = typeof body.from === 'number' ? body.from : 0
  const size = typeof body.size === 'number' ? body.size : 10
  if (!Number.isInteger(from) || from < 0 || !Number.isInteger(size) || size < 0)
    throw new ApiError(400, 'from and size are non-negative integers')
  const hits =
    from === 0 && size > 0
      ? [{ _index: '.opensearch-sap-threat-intel-sources', _id: CTI_FEED_ID, _score: 1, _source: { source_config: await builtIn(d) } }]
      : []
  return {
    took: 0,
    timed_out: false,
    _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
    hits: { total: { value: 1, relation: 'eq' }, max_score: hits.length ? 1 : null, hits },
  }
}

export function createSource(body: Record<string, unknown>): never {
  const type = isObject(body.source_config) ? body.source_config.type : body.type
  if (type === 'URL_DOWNLOAD') throw new ApiError(400, 'URL_DOWNLOAD sources are reserved for internal use')
  throw new ApiError(400, `Only the built-in source [${CTI_FEED_ID}] exists; sources of type [${String(type)}] cannot be created here`)
}

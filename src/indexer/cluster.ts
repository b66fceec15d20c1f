/**
 * Cluster-level routes: `GET|HEAD /`, `_cluster/health`, `_cluster/settings`.
 */
import { SettingsError } from '../config/cluster-settings'
import { flattenKeys, nestKeys } from '../store/flat-keys'
import { timeToMillis } from '../config/values'
import { VERSION } from '../version'
import { badRequest, type RequestContext } from './context'
import { Reply, type IndexRouter } from './router'
import { atLeast, indexShards, worst, type Health } from './topology'

/** The OpenSearch version whose REST behaviour we claim (what the conformance suite is pinned to). */
export const COMPATIBLE_OPENSEARCH_VERSION = '3.6.0'
export const LUCENE_VERSION = '10.3.1'

/** The cluster state's uuid: one state per cluster here, so derived from the cluster's (22 base64url characters). */
export function stateUuid(clusterUuid: string): string {
  return new Bun.CryptoHasher('sha256').update(`svc-state:${clusterUuid}`).digest('base64url').slice(0, 22)
}

async function info(ctx: RequestContext) {
  await ctx.authorizeCluster('cluster:monitor/main')
  const clusterName = ctx.deps.node.values.get('cluster.name') as string
  return {
    name: ctx.deps.node.values.get('node.name'),
    cluster_name: clusterName,
    cluster_uuid: await ctx.store.clusterUuid(),
    version: {
      distribution: 'svc-ext',
      number: COMPATIBLE_OPENSEARCH_VERSION,
      svc_version: VERSION,
      build_type: 'bun',
      build_hash: 'unknown',
      build_date: '1970-01-01T00:00:00.000Z',
      build_snapshot: false,
      lucene_version: LUCENE_VERSION,
      minimum_wire_compatibility_version: '2.19.0',
      minimum_index_compatibility_version: '2.0.0',
    },
    svc_version: VERSION,
    tagline: 'The OpenSearch Project: https://opensearch.org/',
  }
}

export async function healthBody(ctx: RequestContext, index: string | undefined) {
  const all = await indexShards(ctx.store, index, index === undefined ? {} : ctx.resolveOptions({ expand_wildcards: 'all' }))
  const status: Health = worst(all.map((i) => i.health))
  const primaries = all.reduce((n, i) => n + i.shards, 0)
  const unassigned = all.reduce((n, i) => n + i.shards * i.replicas, 0)
  const level = ctx.str('level') ?? 'cluster'
  const body: Record<string, unknown> = {
    cluster_name: ctx.deps.node.values.get('cluster.name'),
    status,
    timed_out: false,
    number_of_nodes: 1,
    number_of_data_nodes: 1,
    discovered_master: true,
    discovered_cluster_manager: true,
    active_primary_shards: primaries,
    active_shards: primaries,
    relocating_shards: 0,
    initializing_shards: 0,
    unassigned_shards: unassigned,
    delayed_unassigned_shards: 0,
    number_of_pending_tasks: 0,
    number_of_in_flight_fetch: 0,
    task_max_waiting_in_queue_millis: 0,
    active_shards_percent_as_number: primaries + unassigned === 0 ? 100.0 : (100 * primaries) / (primaries + unassigned),
  }
  if (level === 'indices' || level === 'shards') {
    body.indices = Object.fromEntries(
      all.map((i) => {
        const entry: Record<string, unknown> = {
          status: i.health,
          number_of_shards: i.shards,
          number_of_replicas: i.replicas,
          active_primary_shards: i.shards,
          active_shards: i.shards,
          relocating_shards: 0,
          initializing_shards: 0,
          unassigned_shards: i.shards * i.replicas,
        }
        if (level === 'shards') {
          entry.shards = Object.fromEntries(
            Array.from({ length: i.shards }, (_, n) => [
              String(n),
              {
                status: i.health,
                primary_active: true,
                active_shards: 1,
                relocating_shards: 0,
                initializing_shards: 0,
                unassigned_shards: i.replicas,
              },
            ]),
          )
        }
        return [i.index, entry]
      }),
    )
  } else if (level !== 'cluster') {
    throw badRequest(`level [${level}] is not a valid option, valid options are [cluster, indices, shards]`)
  }
  return body
}

/** `wait_for_*` conditions a single node can meet; the others (more nodes, more shards) time out with 408. */
function satisfied(ctx: RequestContext, body: Record<string, unknown>): boolean {
  const wantStatus = ctx.str('wait_for_status')
  if (wantStatus !== undefined) {
    if (!['green', 'yellow', 'red'].includes(wantStatus)) throw badRequest(`unknown cluster health status [${wantStatus}]`)
    if (!atLeast(body.status as Health, wantStatus as Health)) return false
  }
  const nodes = ctx.str('wait_for_nodes')
  if (nodes !== undefined) {
    const m = /^(>=|<=|>|<|ge\(|le\(|gt\(|lt\()?\s*(\d+)\)?$/.exec(nodes.trim())
    if (!m) throw badRequest(`cannot parse wait_for_nodes [${nodes}]`)
    const n = Number(m[2])
    const op = m[1] ?? ''
    const ok =
      op === ''
        ? n === 1
        : op.startsWith('>=') || op === 'ge('
          ? 1 >= n
          : op.startsWith('<=') || op === 'le('
            ? 1 <= n
            : op === '>' || op === 'gt('
              ? 1 > n
              : 1 < n
    if (!ok) return false
  }
  const active = ctx.str('wait_for_active_shards')
  if (active !== undefined && active !== 'all') {
    if (!/^\d+$/.test(active)) throw badRequest(`cannot parse value [${active}] for wait_for_active_shards`)
    if ((body.active_shards as number) < Number(active)) return false
  }
  return true
}

async function health(ctx: RequestContext) {
  await ctx.authorizeCluster('cluster:monitor/health')
  const index = ctx.part('index')
  const timeoutText = ctx.str('timeout') ?? '30s'
  let timeout: number
  try {
    timeout = timeToMillis(timeoutText)
  } catch {
    throw badRequest(`failed to parse setting [timeout] with value [${timeoutText}] as a time value`)
  }
  const deadline = ctx.deps.now() + timeout
  for (;;) {
    const body = await healthBody(ctx, index)
    if (satisfied(ctx, body)) return body
    if (ctx.deps.now() >= deadline) return new Reply(408, { ...body, timed_out: true })
    await Bun.sleep(Math.min(200, Math.max(1, deadline - ctx.deps.now())))
  }
}

/** OpenSearch reports every setting value as a string, nested unless `flat_settings`. */
function settingsAnswer(ctx: RequestContext, body: Record<string, unknown>) {
  const flat = ctx.flag('flat_settings', false)
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(body)) {
    if (!v || typeof v !== 'object') {
      out[k] = v
      continue
    }
    const strings = Object.fromEntries(
      Object.entries(v as Record<string, unknown>).map(([key, val]) => [key, val === null || typeof val === 'object' ? val : String(val)]),
    )
    out[k] = flat ? strings : nestKeys(strings)
  }
  return out
}

async function getSettings(ctx: RequestContext) {
  await ctx.authorizeCluster('cluster:monitor/settings')
  const read = await ctx.deps.settings.read(ctx.flag('include_defaults', false))
  return settingsAnswer(ctx, read as unknown as Record<string, unknown>)
}

async function putSettings(ctx: RequestContext) {
  await ctx.authorizeCluster('cluster:admin/settings/update')
  const body = (await ctx.json()) ?? {}
  for (const key of Object.keys(body)) {
    if (key !== 'persistent' && key !== 'transient') throw badRequest(`request body contains unknown key [${key}]`, 'parsing_exception')
  }
  if (body.persistent === undefined && body.transient === undefined)
    throw badRequest('no settings to update', 'action_request_validation_exception')
  let result
  try {
    result = await ctx.deps.settings.update(body as { persistent?: Record<string, unknown>; transient?: Record<string, unknown> })
  } catch (e) {
    if (e instanceof SettingsError) throw badRequest(e.message, e.type)
    throw e
  }
  // OpenSearch echoes only what this request set, not the whole state.
  const echo = (scope: 'persistent' | 'transient') => {
    const given = body[scope]
    if (!given || typeof given !== 'object') return {}
    const keys = Object.keys(flattenKeys(given as Record<string, unknown>))
    const state = result[scope]
    return Object.fromEntries(keys.filter((k) => k in state).map((k) => [k, state[k]]))
  }
  return settingsAnswer(ctx, { acknowledged: true, persistent: echo('persistent'), transient: echo('transient') })
}

export function clusterRoutes(r: IndexRouter): void {
  r.on(['GET', 'HEAD'], '/', info)
  r.on('GET', ['/_cluster/health', '/_cluster/health/:index'], health)
  r.on('GET', '/_cluster/settings', getSettings)
  r.on('PUT', '/_cluster/settings', putSettings)
}

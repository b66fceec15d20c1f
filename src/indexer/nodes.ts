/**
 * `_nodes`, `_nodes/stats`, `_cluster/stats` and `_cluster/state` (metadata) for this single
 * node: OpenSearch's shapes, with figures from the process, the OS and the store's index stats.
 */
import { readFileSync } from 'node:fs'
import { cpus, freemem, loadavg, totalmem, hostname } from 'node:os'
import type { IndexStats } from '../store/port'
import { badRequest, withoutSystemIndices, type RequestContext } from './context'
import { COMPATIBLE_OPENSEARCH_VERSION, healthBody, stateUuid } from './cluster'
import { disk, fileDescriptors, heapFigures, nodeIdOf, STARTED_AT } from './node-info'
import { PLUGIN_COMPONENTS } from './plugins'
import type { IndexRouter } from './router'
import { indexShards } from './topology'
import { flatSettings, STATS_METRICS as INDEX_STATS_METRICS } from './indices'
import { indexFigures, sectionOf } from './index-figures'
import { unrecognized } from './suggestion'
import { StatusCounter } from './status-counter'

export const NODE_ACTIONS = {
  info: 'cluster:monitor/nodes/info',
  stats: 'cluster:monitor/nodes/stats',
  clusterStats: 'cluster:monitor/stats',
  state: 'cluster:monitor/state',
} as const

const ROLES = ['cluster_manager', 'data', 'ingest', 'remote_cluster_client']
const INFO_METRICS = new Set([
  'settings',
  'os',
  'process',
  'jvm',
  'thread_pool',
  'transport',
  'http',
  'plugins',
  'ingest',
  'aggregations',
  'indices',
  'search_pipelines',
])
const STATS_METRICS = new Set([
  'indices',
  'os',
  'process',
  'jvm',
  'thread_pool',
  'fs',
  'transport',
  'http',
  'breaker',
  'script',
  'discovery',
  'ingest',
  'adaptive_selection',
  'script_cache',
  'indexing_pressure',
  'shard_indexing_pressure',
  'search_backpressure',
  'cluster_manager_throttling',
  'weighted_routing',
  'file_cache',
  'task_cancellation',
  'search_pipeline',
  'resource_usage_stats',
  'admission_control',
  'caches',
  'repositories',
  'segment_replication_backpressure',
  'remote_store',
])
/** `_nodes/stats/indices/<metric>` takes the indices stats API's metric names (`merge` answers `merges`). */
const INDEX_METRICS = [...INDEX_STATS_METRICS].filter((m) => m !== '_all')

function nodesHeader() {
  return { total: 1, successful: 1, failed: 0 }
}

function address(ctx: RequestContext): { host: string; port: number } {
  const url = new URL(ctx.request.url)
  return { host: url.hostname, port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) }
}

function nodeBase(ctx: RequestContext) {
  const { host, port } = address(ctx)
  return {
    name: String(ctx.deps.node.values.get('node.name')),
    transport_address: `127.0.0.1:${port + 100}`,
    host: '127.0.0.1',
    ip: '127.0.0.1',
    roles: ROLES,
    attributes: {},
    _http: `${host}:${port}`,
  }
}

/** Which metrics a path asks for: none named means all. */
function metricsOf(ctx: RequestContext, given: string | undefined, known: Set<string>): Set<string> {
  if (given === undefined || given === '_all') return known
  const list = given.split(',').map((m) => m.trim())
  for (const m of list) if (!known.has(m)) throw badRequest(unrecognized(ctx.url.pathname, 'metric', m, known))
  return new Set(list)
}

/** `/_nodes/<x>`: x is a metric list when every part is a metric, otherwise a node filter. */
function nodeAndMetric(ctx: RequestContext, known: Set<string>): { nodeFilter?: string; metric?: string } {
  const a = ctx.part('node_id')
  const b = ctx.part('metric')
  if (b !== undefined) return { nodeFilter: a, metric: b }
  if (a !== undefined && a.split(',').every((m) => known.has(m) || m === '_all')) return { metric: a }
  return { nodeFilter: a }
}

/** True when a node filter (`_all`, `_local`, the id, the name, `*`, roles) selects this node. */
function selects(ctx: RequestContext, filter: string | undefined): boolean {
  if (filter === undefined) return true
  const id = nodeIdOf(ctx)
  const name = String(ctx.deps.node.values.get('node.name'))
  return filter.split(',').some((f) => {
    const [k, v] = f.split(':')
    if (v !== undefined) return (ROLES.includes(k) || k === 'master' || k === 'cluster_manager') && v === 'true'
    return ['_all', '_local', '_master', '_cluster_manager', '*', id, name].includes(f) || ROLES.includes(f)
  })
}

/** `flat_settings=true`: dotted keys, as OpenSearch answers settings. */
function flatIf(ctx: RequestContext, settings: Record<string, unknown>): Record<string, unknown> {
  return ctx.flag('flat_settings', false) ? flatSettings(settings) : settings
}

function osInfo() {
  return {
    refresh_interval_in_millis: 1000,
    name: process.platform === 'linux' ? 'Linux' : process.platform,
    pretty_name: process.platform,
    arch: process.arch,
    version: '',
    available_processors: cpus().length,
    allocated_processors: cpus().length,
  }
}

async function nodesInfo(ctx: RequestContext) {
  await ctx.authorizeCluster(NODE_ACTIONS.info)
  const { nodeFilter, metric } = nodeAndMetric(ctx, INFO_METRICS)
  const metrics = metricsOf(ctx, metric, INFO_METRICS)
  const nodes: Record<string, unknown> = {}
  if (selects(ctx, nodeFilter)) {
    const { _http, ...base } = nodeBase(ctx)
    const node: Record<string, unknown> = {
      ...base,
      version: COMPATIBLE_OPENSEARCH_VERSION,
      build_type: 'bun',
      build_hash: 'unknown',
      ...(ctx.flag('human', false) ? { total_indexing_buffer: '0b' } : {}),
      total_indexing_buffer_in_bytes: 0,
    }
    if (metrics.has('settings'))
      node.settings = flatIf(ctx, {
        cluster: { name: ctx.deps.node.values.get('cluster.name') },
        node: { name: ctx.deps.node.values.get('node.name') },
        path: { data: [String(ctx.deps.node.values.get('path.data'))] },
        client: { type: 'node' },
        http: { type: 'bun' },
      })
    if (metrics.has('os')) node.os = osInfo()
    if (metrics.has('process')) node.process = { refresh_interval_in_millis: 1000, id: process.pid, mlockall: false }
    if (metrics.has('jvm'))
      node.jvm = {
        pid: process.pid,
        version: Bun.version,
        vm_name: 'bun',
        start_time_in_millis: STARTED_AT,
        mem: { heap_init_in_bytes: 0, heap_max_in_bytes: heapFigures().max },
      }
    if (metrics.has('thread_pool')) node.thread_pool = {}
    if (metrics.has('transport'))
      node.transport = { bound_address: [base.transport_address], publish_address: base.transport_address, profiles: {} }
    if (metrics.has('http'))
      node.http = {
        bound_address: [_http],
        publish_address: _http,
        max_content_length_in_bytes: Number(ctx.deps.node.values.get('http.max_body_bytes') ?? 104857600),
      }
    if (metrics.has('plugins'))
      node.plugins = PLUGIN_COMPONENTS.map((p) => ({
        name: p.name,
        version: p.version,
        opensearch_version: COMPATIBLE_OPENSEARCH_VERSION,
        java_version: '21',
        description: p.description,
        classname: p.classname,
        custom_foldername: '',
        extended_plugins: [],
        has_native_controller: false,
      }))
    if (metrics.has('plugins')) node.modules = []
    if (metrics.has('ingest')) node.ingest = { processors: [] }
    if (metrics.has('aggregations'))
      node.aggregations = Object.fromEntries(
        ['terms', 'filter', 'cardinality', 'value_count', 'min', 'max', 'sum', 'avg'].map((a) => [a, { types: ['other'] }]),
      )
    if (metrics.has('indices')) node.indices = { analyzers: {} }
    if (metrics.has('search_pipelines')) node.search_pipelines = { request_processors: [], response_processors: [] }
    nodes[nodeIdOf(ctx)] = node
  }
  return {
    _nodes: { ...nodesHeader(), total: Object.keys(nodes).length, successful: Object.keys(nodes).length },
    cluster_name: ctx.deps.node.values.get('cluster.name'),
    nodes,
  }
}

async function allStats(ctx: RequestContext): Promise<IndexStats[]> {
  const indices = await ctx.store.resolve(withoutSystemIndices(undefined), { expand_wildcards: 'all' })
  return indices.length === 0 ? [] : ctx.store.stats({ index: indices, expand_wildcards: 'all' })
}

function osStats() {
  const total = totalmem()
  const free = freemem()
  const [l1, l5, l15] = loadavg()
  return {
    timestamp: Date.now(),
    cpu: { percent: Math.min(100, Math.round((100 * l1) / Math.max(1, cpus().length))), load_average: { '1m': l1, '5m': l5, '15m': l15 } },
    mem: {
      total_in_bytes: total,
      free_in_bytes: free,
      used_in_bytes: total - free,
      free_percent: Math.round((100 * free) / total),
      used_percent: Math.round((100 * (total - free)) / total),
    },
    swap: { total_in_bytes: 0, free_in_bytes: 0, used_in_bytes: 0 },
  }
}

async function nodesStats(ctx: RequestContext) {
  await ctx.authorizeCluster(NODE_ACTIONS.stats)
  const metrics = metricsOf(ctx, ctx.part('metric'), STATS_METRICS)
  const indexMetric = ctx.part('index_metric')
  const wantedIndex = new Set(indexMetric === undefined || indexMetric === '_all' ? INDEX_METRICS : indexMetric.split(','))
  for (const m of wantedIndex)
    if (!INDEX_METRICS.includes(m)) throw badRequest(unrecognized(ctx.url.pathname, 'index metric', m, INDEX_METRICS))
  const nodes: Record<string, unknown> = {}
  if (selects(ctx, ctx.part('node_id'))) {
    const { _http, ...base } = nodeBase(ctx)
    const node: Record<string, unknown> = { timestamp: ctx.deps.now(), ...base }
    if (metrics.has('indices')) node.indices = await nodeIndices(ctx, wantedIndex)
    if (metrics.has('os')) node.os = osStats()
    if (metrics.has('process')) {
      const fd = await fileDescriptors()
      const mem = process.memoryUsage()
      const cpu = process.cpuUsage()
      node.process = {
        timestamp: Date.now(),
        open_file_descriptors: fd.current,
        max_file_descriptors: fd.max,
        cpu: { percent: 0, total_in_millis: Math.round((cpu.user + cpu.system) / 1000) },
        mem: { total_virtual_in_bytes: mem.rss },
      }
    }
    if (metrics.has('jvm')) {
      const mem = process.memoryUsage()
      const heap = heapFigures()
      node.jvm = {
        timestamp: Date.now(),
        uptime_in_millis: Date.now() - STARTED_AT,
        mem: {
          heap_used_in_bytes: heap.used,
          heap_used_percent: heap.percent,
          heap_committed_in_bytes: heap.committed,
          heap_max_in_bytes: heap.max,
          non_heap_used_in_bytes: Math.max(0, mem.rss - heap.used),
        },
        threads: threadCounts(),
        // Array buffers outside the JavaScript heap are what the JVM's direct buffers are.
        buffer_pools: {
          direct: { count: 0, used_in_bytes: mem.arrayBuffers, total_capacity_in_bytes: mem.arrayBuffers },
          mapped: { count: 0, used_in_bytes: 0, total_capacity_in_bytes: 0 },
        },
      }
    }
    if (metrics.has('fs')) {
      const fs = await disk(String(ctx.deps.node.values.get('path.data')))
      node.fs = {
        timestamp: Date.now(),
        total: { total_in_bytes: fs?.total ?? 0, free_in_bytes: fs?.avail ?? 0, available_in_bytes: fs?.avail ?? 0 },
        data: [
          {
            path: String(ctx.deps.node.values.get('path.data')),
            mount: String(ctx.deps.node.values.get('path.data')),
            type: 'unknown',
            total_in_bytes: fs?.total ?? 0,
            free_in_bytes: fs?.avail ?? 0,
            available_in_bytes: fs?.avail ?? 0,
          },
        ],
      }
    }
    if (metrics.has('http')) node.http = { current_open: 0, total_opened: 0 }
    if (metrics.has('transport'))
      node.transport = { server_open: 0, total_outbound_connections: 0, rx_count: 0, rx_size_in_bytes: 0, tx_count: 0, tx_size_in_bytes: 0 }
    if (metrics.has('thread_pool')) node.thread_pool = {}
    if (metrics.has('breaker')) node.breakers = {}
    // One node publishes no cluster states to others.
    if (metrics.has('discovery'))
      node.discovery = {
        cluster_state_queue: { total: 0, pending: 0, committed: 0 },
        published_cluster_states: { full_states: 0, incompatible_diffs: 0, compatible_diffs: 0 },
      }
    if (metrics.has('ingest')) node.ingest = { total: { count: 0, time_in_millis: 0, current: 0, failed: 0 }, pipelines: {} }
    if (metrics.has('indexing_pressure')) node.indexing_pressure = indexingPressure(ctx)
    nodes[nodeIdOf(ctx)] = node
  }
  const n = Object.keys(nodes).length
  return { _nodes: { total: n, successful: n, failed: 0 }, cluster_name: ctx.deps.node.values.get('cluster.name'), nodes }
}

/** Bytes of writes under way and written, as OpenSearch's indexing pressure reports them; the limit is the body limit of a bulk. */
function indexingPressure(ctx: RequestContext) {
  const bytes = {
    combined_coordinating_and_primary_in_bytes: 0,
    coordinating_in_bytes: 0,
    primary_in_bytes: 0,
    replica_in_bytes: 0,
    all_in_bytes: 0,
  }
  return {
    memory: {
      current: bytes,
      total: { ...bytes, coordinating_rejections: 0, primary_rejections: 0, replica_rejections: 0 },
      limit_in_bytes: Number(ctx.deps.node.values.get('http.max_body_bytes') ?? 0),
    },
  }
}

/** The process's threads now (Linux's /proc), as the JVM's thread count and peak. */
function threadCounts(): { count: number; peak_count: number } {
  let count = 1
  try {
    count = Number(/^Threads:\s+(\d+)/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? 1)
  } catch {
    // not Linux: the main thread
  }
  peakThreads = Math.max(peakThreads, count)
  return { count, peak_count: peakThreads }
}
let peakThreads = 0

/** `indices` of a node's stats: the sections asked for, the status counter, and per index with `level=indices`. */
async function nodeIndices(ctx: RequestContext, wanted: Set<string>): Promise<Record<string, unknown>> {
  const sections = new Set([...wanted].map(sectionOf))
  const stats = await allStats(ctx)
  const level = ctx.str('level') ?? 'node'
  if (!['node', 'indices', 'shards'].includes(level))
    throw badRequest(`level parameter must be one of [indices] or [node] or [shards] but was [${level}]`)
  return {
    ...indexFigures(stats, sections),
    status_counter: ctx.deps.statusCounter?.figures() ?? new StatusCounter().figures(),
    ...(level === 'node' ? {} : { indices: Object.fromEntries(stats.map((s) => [s.index, indexFigures([s], sections)])) }),
  }
}

async function clusterStats(ctx: RequestContext) {
  await ctx.authorizeCluster(NODE_ACTIONS.clusterStats)
  const stats = await allStats(ctx)
  const shards = await indexShards(ctx.store, withoutSystemIndices(undefined))
  const primaries = shards.reduce((n, s) => n + s.shards, 0)
  const health = await healthBody(ctx, undefined)
  const fd = await fileDescriptors()
  const heap = heapFigures()
  const fs = await disk(String(ctx.deps.node.values.get('path.data')))
  const name = String(ctx.deps.node.values.get('cluster.name'))
  const os = osStats()
  return {
    _nodes: nodesHeader(),
    cluster_name: name,
    cluster_uuid: await ctx.store.clusterUuid(),
    timestamp: ctx.deps.now(),
    status: health.status,
    indices: {
      count: stats.length,
      shards: {
        total: primaries,
        primaries,
        replication: 0,
        index: { shards: { min: 1, max: 1, avg: 1 }, primaries: { min: 1, max: 1, avg: 1 }, replication: { min: 0, max: 0, avg: 0 } },
      },
      ...indexFigures(stats, new Set(['docs', 'store', 'fielddata', 'query_cache', 'completion', 'segments'])),
      mappings: { field_types: [] },
      analysis: {
        char_filter_types: [],
        tokenizer_types: [],
        filter_types: [],
        analyzer_types: [],
        built_in_char_filters: [],
        built_in_tokenizers: [],
        built_in_filters: [],
        built_in_analyzers: [],
      },
    },
    nodes: {
      count: {
        total: 1,
        cluster_manager: 1,
        master: 1,
        coordinating_only: 0,
        data: 1,
        ingest: 1,
        remote_cluster_client: 0,
        search: 0,
        warm: 0,
      },
      versions: [COMPATIBLE_OPENSEARCH_VERSION],
      os: {
        available_processors: cpus().length,
        allocated_processors: cpus().length,
        names: [{ name: osInfo().name, count: 1 }],
        pretty_names: [{ pretty_name: hostname(), count: 1 }],
        mem: os.mem,
      },
      process: { cpu: { percent: 0 }, open_file_descriptors: { min: fd.current, max: fd.current, avg: fd.current } },
      jvm: {
        max_uptime_in_millis: Date.now() - STARTED_AT,
        versions: [],
        mem: { heap_used_in_bytes: heap.used, heap_max_in_bytes: heap.max },
        threads: 1,
      },
      fs: { total_in_bytes: fs?.total ?? 0, free_in_bytes: fs?.avail ?? 0, available_in_bytes: fs?.avail ?? 0 },
      plugins: PLUGIN_COMPONENTS.map((p) => ({ name: p.name, version: p.version, description: p.description, classname: p.classname })),
      network_types: { transport_types: { bun: 1 }, http_types: { bun: 1 } },
      discovery_types: { 'single-node': 1 },
      packaging_types: [{ type: 'bun', count: 1 }],
      ingest: { number_of_pipelines: 0, processor_stats: {} },
    },
  }
}

const STATE_METRICS = new Set([
  '_all',
  'metadata',
  'version',
  'master_node',
  'cluster_manager_node',
  'blocks',
  'nodes',
  'routing_table',
  'routing_nodes',
  'customs',
])

/** The three kinds of templates as the cluster state's metadata holds them (a legacy template's mapping under `_doc`). */
async function templateMetadata(ctx: RequestContext) {
  const legacy = await ctx.store.getTemplate()
  const { component_templates } = await ctx.store.getComponentTemplate()
  const { index_templates } = await ctx.store.getIndexTemplate()
  return {
    templates: Object.fromEntries(
      Object.entries(legacy).map(([name, t]) => [
        name,
        { ...t, mappings: Object.keys(t.mappings ?? {}).length > 0 ? { _doc: t.mappings } : {} },
      ]),
    ),
    component_template: { component_template: Object.fromEntries(component_templates.map((t) => [t.name, t.component_template])) },
    index_template: { index_template: Object.fromEntries(index_templates.map((t) => [t.name, t.index_template])) },
  }
}

/**
 * `_cluster/state`: the metadata of the indices the caller may see (their settings, mappings and
 * aliases) and this node; routing tables have no meaning for one embedded node.
 */
async function clusterState(ctx: RequestContext) {
  await ctx.authorizeCluster(NODE_ACTIONS.state)
  const metric = ctx.part('metric')
  const metrics = metric === undefined ? new Set(['_all']) : new Set(metric.split(','))
  for (const m of metrics) if (!STATE_METRICS.has(m)) throw badRequest(unrecognized(ctx.url.pathname, 'metric', m, STATE_METRICS))
  const all = metrics.has('_all')
  const name = String(ctx.deps.node.values.get('cluster.name'))
  const id = nodeIdOf(ctx)
  const uuid = await ctx.store.clusterUuid()
  const out: Record<string, unknown> = { cluster_name: name, cluster_uuid: uuid }
  if (all || metrics.has('version')) out.version = 1
  if (all || metrics.has('version')) out.state_uuid = stateUuid(uuid)
  if (all || metrics.has('master_node')) out.master_node = id
  if (all || metrics.has('cluster_manager_node')) out.cluster_manager_node = id
  if (all || metrics.has('blocks')) out.blocks = {}
  if (all || metrics.has('nodes')) {
    const { _http, ...base } = nodeBase(ctx)
    out.nodes = { [id]: { name: base.name, ephemeral_id: id, transport_address: base.transport_address, attributes: {} } }
  }
  if (all || metrics.has('metadata')) {
    const expression = ctx.indexExpression()
    const indices = await ctx.authorized('indices:admin/get', expression, ctx.resolveOptions({ expand_wildcards: 'all' }))
    const got = indices.length === 0 ? {} : await ctx.store.getIndex({ index: indices, expand_wildcards: 'all' })
    const stats = new Map(
      (indices.length === 0 ? [] : await ctx.store.stats({ index: indices, expand_wildcards: 'all' })).map((s) => [s.index, s]),
    )
    out.metadata = {
      cluster_uuid: uuid,
      cluster_uuid_committed: true,
      ...(await templateMetadata(ctx)),
      indices: Object.fromEntries(
        Object.entries(got).map(([index, info]) => [
          index,
          {
            version: 1,
            state: stats.get(index)?.status === 'close' ? 'close' : 'open',
            settings: info.settings,
            mappings: { _doc: info.mappings },
            aliases: Object.keys(info.aliases ?? {}),
          },
        ]),
      ),
    }
  }
  if (all || metrics.has('routing_table')) out.routing_table = { indices: {} }
  return out
}

export function nodeRoutes(r: IndexRouter): void {
  r.on(
    'GET',
    [
      '/_nodes/stats',
      '/_nodes/stats/:metric',
      '/_nodes/stats/:metric/:index_metric',
      '/_nodes/:node_id/stats',
      '/_nodes/:node_id/stats/:metric',
      '/_nodes/:node_id/stats/:metric/:index_metric',
    ],
    nodesStats,
  )
  r.on('GET', ['/_nodes', '/_nodes/:node_id', '/_nodes/:node_id/:metric'], nodesInfo)
  r.on('GET', '/_cluster/stats', clusterStats)
  r.on('GET', ['/_cluster/state', '/_cluster/state/:metric', '/_cluster/state/:metric/:index'], clusterState)
}

/**
 * `_cat/count`, `_cat/health`, `_cat/shards`, `_cat/templates`, `_cat/plugins`: the text
 * tables operators' scripts read. `_cat/count` counts through the search gate (the caller's
 * DLS applies, as to `_count`).
 */
import type { RequestContext } from './context'
import { globMatcher } from './names'
import { renderCat, type Cell, type Column } from './cat-table'
import { healthBody } from './cluster'
import type { IndexRouter } from './router'
import { countAs } from './search'
import { indexShards } from './topology'
import { nodeIdOf } from './node-info'
import { PLUGIN_COMPONENTS } from './plugins'

export const CAT_CLUSTER_ACTIONS = {
  health: 'cluster:monitor/health',
  shards: 'indices:monitor/stats',
  templates: 'cluster:monitor/state',
  plugins: 'cluster:monitor/nodes/info',
} as const

/** `epoch` and `timestamp` columns, hidden by `ts=false`. */
function timeColumns(ctx: RequestContext): Column[] {
  const ts = ctx.flag('ts', true)
  return [
    { name: 'epoch', aliases: ['t', 'time'], default: ts, description: 'seconds since 1970-01-01 00:00:00' },
    { name: 'timestamp', aliases: ['ts', 'hms', 'hhmmss'], default: ts, description: 'time in HH:MM:SS' },
  ]
}

function timeCells(now: number): Record<string, Cell> {
  return { epoch: Math.floor(now / 1000), timestamp: new Date(now).toISOString().slice(11, 19) }
}

async function catCount(ctx: RequestContext) {
  const columns: Column[] = [
    ...timeColumns(ctx),
    { name: 'count', aliases: ['dc', 'docs.count', 'docsCount'], default: true, description: 'the document count' },
  ]
  const { count } = await countAs(ctx, ctx.indexExpression(), ctx.resolveOptions(), undefined)
  return renderCat(ctx, columns, [{ ...timeCells(ctx.deps.now()), count }])
}

async function catHealth(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_CLUSTER_ACTIONS.health)
  const h = await healthBody(ctx, undefined)
  const columns: Column[] = [
    ...timeColumns(ctx),
    { name: 'cluster', aliases: ['cl'], default: true, description: 'cluster name' },
    { name: 'status', aliases: ['st'], default: true, description: 'health status' },
    { name: 'node.total', aliases: ['nt', 'nodeTotal'], default: true, description: 'total number of nodes' },
    { name: 'node.data', aliases: ['nd', 'nodeData'], default: true, description: 'number of nodes that can store data' },
    { name: 'discovered_cluster_manager', aliases: ['dcm'], default: true, description: 'cluster manager is discovered' },
    { name: 'shards', aliases: ['t', 'sh', 'shards.total', 'shardsTotal'], default: true, description: 'total number of shards' },
    { name: 'pri', aliases: ['p', 'shards.primary', 'shardsPrimary'], default: true, description: 'number of primary shards' },
    { name: 'relo', aliases: ['r', 'shards.relocating', 'shardsRelocating'], default: true, description: 'number of relocating nodes' },
    {
      name: 'init',
      aliases: ['i', 'shards.initializing', 'shardsInitializing'],
      default: true,
      description: 'number of initializing nodes',
    },
    {
      name: 'unassign',
      aliases: ['u', 'shards.unassigned', 'shardsUnassigned'],
      default: true,
      description: 'number of unassigned shards',
    },
    { name: 'pending_tasks', aliases: ['pt', 'pendingTasks'], default: true, description: 'number of pending tasks' },
    { name: 'max_task_wait_time', aliases: ['mtwt', 'maxTaskWaitTime'], default: true, description: 'wait time of longest task pending' },
    {
      name: 'active_shards_percent',
      aliases: ['asp', 'activeShardsPercent'],
      default: true,
      description: 'active number of shards in percent',
    },
  ]
  const row: Record<string, Cell> = {
    ...timeCells(ctx.deps.now()),
    cluster: String(h.cluster_name),
    status: String(h.status),
    'node.total': 1,
    'node.data': 1,
    discovered_cluster_manager: 'true',
    shards: Number(h.active_shards),
    pri: Number(h.active_primary_shards),
    relo: 0,
    init: 0,
    unassign: Number(h.unassigned_shards),
    pending_tasks: 0,
    max_task_wait_time: '-',
    active_shards_percent: `${Number(h.active_shards_percent_as_number).toFixed(1)}%`,
  }
  return renderCat(ctx, columns, [row])
}

const SHARD_COLUMNS: Column[] = [
  { name: 'index', aliases: ['i', 'idx'], default: true, description: 'index name' },
  { name: 'shard', aliases: ['s', 'sh'], default: true, description: 'shard name' },
  { name: 'prirep', aliases: ['p', 'pr', 'primaryOrReplica'], default: true, description: 'primary or replica' },
  { name: 'state', aliases: ['st'], default: true, description: 'shard state' },
  { name: 'docs', aliases: ['d', 'dc'], default: true, description: 'number of docs in shard' },
  { name: 'store', aliases: ['sto'], default: true, bytes: true, description: 'store size of shard (how much disk it uses)' },
  { name: 'ip', default: true, description: 'ip of node where it lives' },
  { name: 'id', description: 'unique id of node where it lives' },
  { name: 'node', aliases: ['n'], default: true, description: 'name of node where it lives' },
  { name: 'unassigned.reason', aliases: ['ur'], description: 'reason shard is unassigned' },
]

async function catShards(ctx: RequestContext) {
  const options = ctx.resolveOptions({ expand_wildcards: 'open,closed' })
  const indices = await ctx.authorized(CAT_CLUSTER_ACTIONS.shards, ctx.indexExpression(), options)
  const rows: Array<Record<string, Cell>> = []
  if (indices.length > 0) {
    const stats = new Map((await ctx.store.stats({ index: indices, expand_wildcards: 'all' })).map((s) => [s.index, s]))
    const node = String(ctx.deps.node.values.get('node.name'))
    const id = nodeIdOf(ctx)
    for (const sh of await indexShards(ctx.store, indices.join(','), { expand_wildcards: 'all' })) {
      const st = stats.get(sh.index)
      // The embedded store keeps an index whole: its documents count in shard 0.
      for (let n = 0; n < sh.shards; n++) {
        rows.push({
          index: sh.index,
          shard: n,
          prirep: 'p',
          state: st?.status === 'close' ? 'CLOSED' : 'STARTED',
          docs: n === 0 ? (st?.docs_count ?? 0) : 0,
          store: n === 0 ? (st?.store_size_in_bytes ?? 0) : 0,
          ip: '127.0.0.1',
          id,
          node,
        })
        for (let r = 0; r < sh.replicas; r++)
          rows.push({ index: sh.index, shard: n, prirep: 'r', state: 'UNASSIGNED', 'unassigned.reason': 'INDEX_CREATED' })
      }
    }
  }
  return renderCat(ctx, SHARD_COLUMNS, rows)
}

const TEMPLATE_COLUMNS: Column[] = [
  { name: 'name', aliases: ['n'], default: true, description: 'template name' },
  { name: 'index_patterns', aliases: ['t'], default: true, description: 'template index patterns' },
  { name: 'order', aliases: ['o', 'p'], default: true, left: true, description: 'template application order/priority number' },
  { name: 'version', aliases: ['v'], default: true, left: true, description: 'version' },
  { name: 'composed_of', aliases: ['c'], default: true, description: 'component templates comprising index template' },
]

/** Legacy templates first, then composable ones (their `order` is the priority), as OpenSearch lists them. */
async function catTemplates(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_CLUSTER_ACTIONS.templates)
  const name = ctx.part('name')
  const legacy = await ctx.store.getTemplate()
  const { index_templates } = await ctx.store.getIndexTemplate()
  const keep = name === undefined ? () => true : globMatcher(name)
  const patterns = (p: string | string[]) => `[${[p].flat().join(', ')}]`
  const rows = [
    ...Object.entries(legacy).map(([n, t]) => ({
      name: n,
      index_patterns: patterns(t.index_patterns),
      order: t.order ?? 0,
      version: t.version ?? null,
      composed_of: '',
    })),
    ...index_templates.map((t) => ({
      name: t.name,
      index_patterns: patterns(t.index_template.index_patterns),
      order: t.index_template.priority ?? 0,
      version: t.index_template.version ?? null,
      composed_of: patterns(t.index_template.composed_of ?? []),
    })),
  ]
  return renderCat(
    ctx,
    TEMPLATE_COLUMNS,
    rows.filter((r) => keep(r.name)),
  )
}

const PLUGIN_COLUMNS: Column[] = [
  { name: 'id', description: 'unique node id' },
  { name: 'name', aliases: ['n'], default: true, description: 'node name' },
  { name: 'component', aliases: ['c'], default: true, description: 'component' },
  { name: 'version', aliases: ['v'], default: true, description: 'component version' },
  { name: 'description', aliases: ['d'], description: 'plugin details' },
]

async function catPlugins(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_CLUSTER_ACTIONS.plugins)
  const node = String(ctx.deps.node.values.get('node.name'))
  const id = nodeIdOf(ctx)
  const rows = PLUGIN_COMPONENTS.map((p) => ({ id, name: node, component: p.name, version: p.version, description: p.description }))
  return renderCat(ctx, PLUGIN_COLUMNS, rows)
}

export function catClusterRoutes(r: IndexRouter): void {
  r.on('GET', ['/_cat/count', '/_cat/count/:index'], catCount)
  r.on('GET', '/_cat/health', catHealth)
  r.on('GET', ['/_cat/shards', '/_cat/shards/:index'], catShards)
  r.on('GET', ['/_cat/templates', '/_cat/templates/:name'], catTemplates)
  r.on('GET', '/_cat/plugins', catPlugins)
}

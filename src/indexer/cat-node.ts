/**
 * `_cat/cluster_manager` (and its old name `_cat/master`), `_cat/pending_tasks`,
 * `_cat/allocation`, `_cat/recovery`, `_cat/fielddata`: the tables monitoring tools poll, answered
 * for the one node the embedded store is. Nothing here is queued, relocated or held as fielddata,
 * and every shard was recovered from the store file when its index was opened.
 */
import type { RequestContext } from './context'
import { renderCat, type Cell, type Column } from './cat-table'
import type { IndexRouter } from './router'
import { indexShards } from './topology'
import { disk, nodeIdOf, STARTED_AT } from './node-info'

export const CAT_NODE_ACTIONS = {
  clusterManager: 'cluster:monitor/state',
  pendingTasks: 'cluster:monitor/task',
  allocation: 'cluster:monitor/state',
  recovery: 'indices:monitor/recovery',
  fielddata: 'cluster:monitor/nodes/stats',
} as const

const col = (name: string, aliases: string[], description: string, extra: Partial<Column> = {}): Column => ({
  name,
  aliases,
  default: true,
  description,
  ...extra,
})

/** Who this node is, as the node columns of these tables name it. */
function self(ctx: RequestContext) {
  return { id: nodeIdOf(ctx), host: '127.0.0.1', ip: '127.0.0.1', node: String(ctx.deps.node.values.get('node.name')) }
}

const NODE_COLUMNS: Column[] = [
  col('id', [], 'node id'),
  col('host', ['h'], 'host name'),
  col('ip', [], 'ip address'),
  col('node', ['n'], 'node name'),
]

async function catClusterManager(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_NODE_ACTIONS.clusterManager)
  return renderCat(ctx, NODE_COLUMNS, [self(ctx)])
}

const PENDING_COLUMNS: Column[] = [
  col('insertOrder', ['o'], 'task insertion order'),
  col('timeInQueue', ['t'], 'how long task has been in queue'),
  col('priority', ['p'], 'task priority'),
  col('source', ['s'], 'task source'),
]

async function catPendingTasks(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_NODE_ACTIONS.pendingTasks)
  return renderCat(ctx, PENDING_COLUMNS, [])
}

const ALLOCATION_COLUMNS: Column[] = [
  col('shards', ['s'], 'number of shards on node'),
  col('disk.indices', ['di', 'diskIndices'], 'disk used by OpenSearch indices', { bytes: true }),
  col('disk.used', ['du', 'diskUsed'], 'disk used (total, not just OpenSearch)', { bytes: true }),
  col('disk.avail', ['da', 'diskAvail'], 'disk available', { bytes: true }),
  col('disk.total', ['dt', 'diskTotal'], 'total capacity of all volumes', { bytes: true }),
  col('disk.percent', ['dp', 'diskPercent'], 'percent disk used'),
  col('host', ['h'], 'host of node'),
  col('ip', [], 'ip of node'),
  col('node', ['n'], 'name of node'),
]

async function catAllocation(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_NODE_ACTIONS.allocation)
  const shards = await indexShards(ctx.store, undefined, { expand_wildcards: 'all' })
  const stats = shards.length === 0 ? [] : await ctx.store.stats({ index: shards.map((s) => s.index), expand_wildcards: 'all' })
  const fs = await disk(String(ctx.deps.node.values.get('path.data')))
  const { host, ip, node } = self(ctx)
  const rows: Array<Record<string, Cell>> = [
    {
      shards: shards.reduce((n, s) => n + s.shards, 0),
      'disk.indices': stats.reduce((n, s) => n + s.store_size_in_bytes, 0),
      'disk.used': fs ? fs.total - fs.avail : undefined,
      'disk.avail': fs?.avail,
      'disk.total': fs?.total,
      'disk.percent': fs && fs.total > 0 ? Math.round((100 * (fs.total - fs.avail)) / fs.total) : undefined,
      host,
      ip,
      node,
    },
  ]
  // Replicas have no second node to live on: OpenSearch lists them on a row of their own.
  const unassigned = shards.reduce((n, s) => n + s.shards * s.replicas, 0)
  if (unassigned > 0) rows.push({ shards: unassigned, node: 'UNASSIGNED' })
  return renderCat(ctx, ALLOCATION_COLUMNS, rows)
}

const RECOVERY_COLUMNS: Column[] = [
  col('index', ['i', 'idx'], 'index name'),
  col('shard', ['s', 'sh'], 'shard name'),
  col('start_time', ['start'], 'recovery start time', { default: false }),
  col('start_time_millis', ['start_millis'], 'recovery start time in epoch milliseconds', { default: false }),
  col('stop_time', ['stop'], 'recovery stop time', { default: false }),
  col('stop_time_millis', ['stop_millis'], 'recovery stop time in epoch milliseconds', { default: false }),
  col('time', ['t', 'ti'], 'recovery time'),
  col('type', ['ty'], 'recovery type'),
  col('stage', ['st'], 'recovery stage'),
  col('source_host', ['shost'], 'source host'),
  col('source_node', ['snode'], 'source node name'),
  col('target_host', ['thost'], 'target host'),
  col('target_node', ['tnode'], 'target node name'),
  col('repository', ['rep'], 'repository'),
  col('snapshot', ['snap'], 'snapshot'),
  col('files', ['f'], 'number of files to recover'),
  col('files_recovered', ['fr'], 'files recovered'),
  col('files_percent', ['fp'], 'percent of files recovered'),
  col('files_total', ['tf'], 'total number of files'),
  col('bytes', ['b'], 'number of bytes to recover', { bytes: true }),
  col('bytes_recovered', ['br'], 'bytes recovered', { bytes: true }),
  col('bytes_percent', ['bp'], 'percent of bytes recovered'),
  col('bytes_total', ['tb'], 'total number of bytes', { bytes: true }),
  col('translog_ops', ['to'], 'number of translog ops to recover'),
  col('translog_ops_recovered', ['tor'], 'translog ops recovered'),
  col('translog_ops_percent', ['top'], 'percent of translog ops recovered'),
]

async function catRecovery(ctx: RequestContext) {
  const options = ctx.resolveOptions({ expand_wildcards: 'open' })
  const indices = await ctx.authorized(CAT_NODE_ACTIONS.recovery, ctx.indexExpression(), options)
  const rows: Array<Record<string, Cell>> = []
  // Every recovery is done the moment the index opens: none is ever active.
  if (indices.length > 0 && !ctx.flag('active_only', false)) {
    const created = new Map((await ctx.store.stats({ index: indices, expand_wildcards: 'all' })).map((s) => [s.index, s.creation_date]))
    const { host, node } = self(ctx)
    for (const sh of await indexShards(ctx.store, indices.join(','), { expand_wildcards: 'all' })) {
      // Created by this process: a new, empty store; older: the store file this process opened.
      const start = Math.max(created.get(sh.index) ?? STARTED_AT, STARTED_AT)
      for (let n = 0; n < sh.shards; n++)
        rows.push({
          index: sh.index,
          shard: n,
          start_time: new Date(start).toISOString(),
          start_time_millis: start,
          stop_time: new Date(start).toISOString(),
          stop_time_millis: start,
          time: '0s',
          type: start === STARTED_AT ? 'existing_store' : 'empty_store',
          stage: 'done',
          source_host: 'n/a',
          source_node: 'n/a',
          target_host: host,
          target_node: node,
          repository: 'n/a',
          snapshot: 'n/a',
          files: 0,
          files_recovered: 0,
          files_percent: '0.0%',
          files_total: 0,
          bytes: 0,
          bytes_recovered: 0,
          bytes_percent: '0.0%',
          bytes_total: 0,
          translog_ops: 0,
          translog_ops_recovered: 0,
          translog_ops_percent: '100.0%',
        })
    }
  }
  return renderCat(ctx, RECOVERY_COLUMNS, rows)
}

const FIELDDATA_COLUMNS: Column[] = [
  ...NODE_COLUMNS,
  col('field', ['f'], 'field name'),
  col('size', ['s'], 'field data usage', { bytes: true }),
]

async function catFielddata(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_NODE_ACTIONS.fielddata)
  // Aggregations read the store's columns: no field data is loaded into memory to report.
  return renderCat(ctx, FIELDDATA_COLUMNS, [])
}

export function catNodeRoutes(r: IndexRouter): void {
  r.on('GET', ['/_cat/cluster_manager', '/_cat/master'], catClusterManager)
  r.on('GET', '/_cat/pending_tasks', catPendingTasks)
  r.on('GET', ['/_cat/allocation', '/_cat/allocation/:node_id'], catAllocation)
  r.on('GET', ['/_cat/recovery', '/_cat/recovery/:index'], catRecovery)
  r.on('GET', ['/_cat/fielddata', '/_cat/fielddata/:fields'], catFielddata)
}

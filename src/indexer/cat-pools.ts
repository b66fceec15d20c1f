/**
 * `_cat/thread_pool` and `_cat/segments`, the two tables monitoring tools poll beside the node
 * ones (cat-node.ts). This node runs no Java thread pools: each pool OpenSearch lists is a row,
 * its completed tasks what the store counted of that kind of work (writes, gets, searches,
 * refreshes, flushes); nothing waits in a queue or is refused by one. An index's documents are
 * one table, shown as one committed, searchable segment when it has any.
 */
import type { IndexActivity, IndexStats } from '../store/port'
import { globMatcher } from './names'
import type { RequestContext } from './context'
import { renderCat, type Cell, type Column } from './cat-table'
import { LUCENE_VERSION } from './cluster'
import { nodeIdOf } from './node-info'
import type { IndexRouter } from './router'

export const CAT_POOL_ACTIONS = {
  threadPool: 'cluster:monitor/nodes/stats',
  segments: 'indices:monitor/segments',
} as const

const col = (name: string, aliases: string[], description: string, shown = false, bytes = false): Column => ({
  name,
  aliases,
  default: shown,
  description,
  bytes,
})

const POOL_COLUMNS: Column[] = [
  col('node_name', ['nn'], 'node name', true),
  col('node_id', ['id'], 'persistent node id'),
  col('pid', ['p'], 'process id'),
  col('host', ['h'], 'host name'),
  col('ip', ['i'], 'ip address'),
  col('name', ['n'], 'thread pool name', true),
  col('type', ['t'], 'thread pool type'),
  col('active', ['a'], 'number of active threads', true),
  col('pool_size', ['psz'], 'number of threads'),
  col('queue', ['q'], 'number of tasks currently in queue', true),
  col('queue_size', ['qs'], 'maximum number of tasks permitted in queue'),
  col('rejected', ['r'], 'number of rejected tasks', true),
  col('largest', ['l'], 'highest number of seen active threads'),
  col('completed', ['c'], 'number of completed tasks'),
]

/** OpenSearch's pools, with the counters of the work each stands for here. */
const POOLS: Array<[string, string, (a: IndexActivity) => number]> = [
  ['analyze', 'fixed', () => 0],
  ['fetch_shard_started', 'scaling', () => 0],
  ['fetch_shard_store', 'scaling', () => 0],
  ['flush', 'scaling', () => 0],
  ['force_merge', 'fixed', () => 0],
  ['generic', 'scaling', () => 0],
  ['get', 'fixed', (a) => a.get.total],
  ['management', 'scaling', () => 0],
  ['refresh', 'scaling', (a) => a.refresh.total],
  ['search', 'resizable', (a) => a.search.query_total],
  ['search_throttled', 'resizable', () => 0],
  ['snapshot', 'scaling', () => 0],
  ['warmer', 'scaling', () => 0],
  ['write', 'fixed', (a) => a.indexing.index_total + a.indexing.delete_total],
]

async function catThreadPool(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_POOL_ACTIONS.threadPool)
  const stats = await ctx.store.stats({ index: '*', expand_wildcards: 'all' })
  const patterns = ctx.part('thread_pool_patterns')?.split(',').map(globMatcher)
  const node = {
    node_name: String(ctx.deps.node.values.get('node.name')),
    node_id: nodeIdOf(ctx),
    pid: process.pid,
    host: '127.0.0.1',
    ip: '127.0.0.1',
  }
  const rows: Array<Record<string, Cell>> = POOLS.filter(([name]) => !patterns || patterns.some((m) => m(name))).map(
    ([name, type, work]) => ({
      ...node,
      name,
      type,
      active: 0,
      pool_size: 0,
      queue: 0,
      queue_size: type === 'fixed' ? 10000 : type === 'resizable' ? 1000 : -1,
      rejected: 0,
      largest: 0,
      completed: stats.reduce((n, s) => n + (s.activity ? work(s.activity) : 0), 0),
    }),
  )
  return renderCat(ctx, POOL_COLUMNS, rows)
}

const SEGMENT_COLUMNS: Column[] = [
  col('index', ['i', 'idx'], 'index name', true),
  col('shard', ['s', 'sh'], 'shard name', true),
  col('prirep', ['p', 'pr', 'primaryOrReplica'], 'primary or replica', true),
  col('ip', [], 'ip of node where it lives', true),
  col('id', [], 'unique id of node where it lives'),
  col('segment', ['seg'], 'segment name', true),
  col('generation', ['g', 'gen'], 'segment generation', true),
  col('docs.count', ['dc', 'docsCount'], 'number of docs in segment', true),
  col('docs.deleted', ['dd', 'docsDeleted'], 'number of deleted docs in segment', true),
  col('size', ['si'], 'segment size in bytes', true, true),
  col('size.memory', ['sm', 'sizeMemory'], 'segment memory in bytes', true),
  col('committed', ['ic', 'isCommitted'], 'is segment committed', true),
  col('searchable', ['is', 'isSearchable'], 'is segment searched', true),
  col('version', ['v', 'ver'], 'version', true),
  col('compound', ['ico', 'isCompound'], 'is segment compound', true),
]

async function catSegments(ctx: RequestContext) {
  const indices = await ctx.authorized(CAT_POOL_ACTIONS.segments, ctx.indexExpression(), ctx.resolveOptions({ expand_wildcards: 'open' }))
  const stats: IndexStats[] = indices.length === 0 ? [] : await ctx.store.stats({ index: indices, expand_wildcards: 'all' })
  const id = nodeIdOf(ctx)
  const rows: Array<Record<string, Cell>> = stats
    .filter((s) => s.status === 'open' && s.docs_count > 0)
    .map((s) => ({
      index: s.index,
      shard: 0,
      prirep: 'p',
      ip: '127.0.0.1',
      id,
      segment: '_0',
      generation: 0,
      'docs.count': s.docs_count,
      'docs.deleted': 0,
      size: s.store_size_in_bytes,
      'size.memory': 0,
      committed: 'true',
      searchable: 'true',
      version: LUCENE_VERSION,
      compound: 'true',
    }))
  return renderCat(ctx, SEGMENT_COLUMNS, rows)
}

export function catPoolRoutes(r: IndexRouter): void {
  r.on('GET', ['/_cat/thread_pool', '/_cat/thread_pool/:thread_pool_patterns'], catThreadPool)
  r.on('GET', ['/_cat/segments', '/_cat/segments/:index'], catSegments)
}

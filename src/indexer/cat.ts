/**
 * `_cat/indices`, `_cat/nodes`, `_cat/aliases`.
 */
import { freemem, loadavg, totalmem } from 'node:os'
import { badRequest, withoutSystemIndices, type RequestContext } from './context'
import { renderCat, type Cell, type Column } from './cat-table'
import { aliasNameFilter } from './aliases'
import type { IndexRouter } from './router'
import { indexShards } from './topology'
import { disk, fileDescriptors, heapFigures, nodeIdOf, STARTED_AT } from './node-info'

export const CAT_ACTIONS = {
  indices: 'indices:monitor/stats',
  nodes: 'cluster:monitor/nodes/info',
  aliases: 'indices:admin/aliases/get',
} as const

const INDEX_COLUMNS: Column[] = [
  { name: 'health', aliases: ['h'], default: true, description: 'current health status' },
  { name: 'status', aliases: ['s'], default: true, description: 'open/close status' },
  { name: 'index', aliases: ['i', 'idx'], default: true, description: 'index name' },
  { name: 'uuid', aliases: ['id', 'uuid'], default: true, description: 'index uuid' },
  { name: 'pri', aliases: ['p', 'shards.primary', 'shardsPrimary'], default: true, description: 'number of primary shards' },
  { name: 'rep', aliases: ['r', 'shards.replica', 'shardsReplica'], default: true, description: 'number of replica shards' },
  { name: 'docs.count', aliases: ['dc', 'docsCount'], default: true, description: 'available docs' },
  { name: 'docs.deleted', aliases: ['dd', 'docsDeleted'], default: true, description: 'deleted docs' },
  { name: 'creation.date', aliases: ['cd'], description: 'index creation date (millisecond value)' },
  { name: 'creation.date.string', aliases: ['cds'], description: 'index creation date (as string)' },
  { name: 'store.size', aliases: ['ss', 'storeSize'], default: true, bytes: true, description: 'store size of primaries & replicas' },
  { name: 'pri.store.size', default: true, bytes: true, description: 'store size of primaries' },
]

async function catIndices(ctx: RequestContext) {
  const expression = ctx.indexExpression()
  // Like OpenSearch's strictExpand: wildcards reach open and closed indices (hidden ones on request).
  const options = ctx.resolveOptions({ expand_wildcards: 'open,closed' })
  const indices = await ctx.authorized(CAT_ACTIONS.indices, expression, options)
  const stats = indices.length === 0 ? [] : await ctx.store.stats({ index: indices, expand_wildcards: 'all' })
  const shards = new Map((indices.length === 0 ? [] : await indexShards(ctx.store, indices.join(','))).map((s) => [s.index, s]))
  const wantHealth = ctx.str('health')
  if (wantHealth !== undefined && !['green', 'yellow', 'red'].includes(wantHealth)) throw badRequest(`unknown health [${wantHealth}]`)
  const rows: Array<Record<string, Cell>> = []
  for (const s of stats) {
    const sh = shards.get(s.index)
    const health = sh?.health ?? 'green'
    if (wantHealth !== undefined && wantHealth !== health) continue
    const size = s.store_size_in_bytes
    // A closed index has no shard statistics: OpenSearch leaves those cells empty.
    const open = s.status === 'open'
    rows.push({
      health,
      status: s.status,
      index: s.index,
      uuid: s.uuid,
      pri: sh?.shards ?? 1,
      rep: sh?.replicas ?? 1,
      'docs.count': open ? s.docs_count : undefined,
      'docs.deleted': open ? 0 : undefined,
      'creation.date': s.creation_date,
      'creation.date.string': new Date(s.creation_date).toISOString(),
      'store.size': open ? size : undefined,
      'pri.store.size': open ? size : undefined,
    })
  }
  return renderCat(ctx, INDEX_COLUMNS, rows)
}

const NODE_COLUMNS: Column[] = [
  { name: 'id', aliases: ['nodeId'] },
  { name: 'pid', aliases: ['p'] },
  { name: 'ip', aliases: ['i'], default: true },
  { name: 'port', aliases: ['po'] },
  { name: 'http_address', aliases: ['http'] },
  { name: 'version', aliases: ['v'] },
  { name: 'heap.current', aliases: ['hc', 'heapCurrent'], bytes: true },
  { name: 'heap.percent', aliases: ['hp', 'heapPercent'], default: true },
  { name: 'heap.max', aliases: ['hm', 'heapMax'], bytes: true },
  { name: 'ram.current', aliases: ['rc', 'ramCurrent'], bytes: true },
  { name: 'ram.percent', aliases: ['rp', 'ramPercent'], default: true },
  { name: 'ram.max', aliases: ['rm', 'ramMax'], bytes: true },
  { name: 'file_desc.current', aliases: ['fdc', 'fileDescriptorCurrent'] },
  { name: 'file_desc.percent', aliases: ['fdp', 'fileDescriptorPercent'] },
  { name: 'file_desc.max', aliases: ['fdm', 'fileDescriptorMax'] },
  { name: 'disk.total', aliases: ['dt', 'diskTotal'], bytes: true },
  { name: 'disk.used', aliases: ['du', 'diskUsed'], bytes: true },
  { name: 'disk.avail', aliases: ['d', 'da', 'disk', 'diskAvail'], bytes: true },
  { name: 'disk.used_percent', aliases: ['dup', 'diskUsedPercent'] },
  { name: 'cpu', default: true },
  { name: 'load_1m', aliases: ['l'], default: true },
  { name: 'load_5m', aliases: ['l'], default: true },
  { name: 'load_15m', aliases: ['l'], default: true },
  { name: 'uptime', aliases: ['u'] },
  { name: 'node.role', aliases: ['r', 'role', 'nodeRole'], default: true },
  { name: 'node.roles', default: true },
  { name: 'cluster_manager', aliases: ['cm', 'm', 'master'], default: true },
  { name: 'name', aliases: ['n'], default: true },
]

async function catNodes(ctx: RequestContext) {
  await ctx.authorizeCluster(CAT_ACTIONS.nodes)
  const heap = heapFigures()
  const total = totalmem()
  const free = freemem()
  const [l1, l5, l15] = loadavg()
  const fd = await fileDescriptors()
  const url = new URL(ctx.request.url)
  const uptime = Math.floor((Date.now() - STARTED_AT) / 1000)
  const fs = await disk(String(ctx.deps.node.values.get('path.data')))
  const nodeId = nodeIdOf(ctx)
  const row: Record<string, Cell> = {
    id: ctx.flag('full_id', false) ? nodeId : nodeId.slice(0, 4),
    pid: process.pid,
    ip: '127.0.0.1',
    port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
    http_address: url.host,
    version: '3.6.0',
    'heap.current': heap.used,
    'heap.percent': heap.percent,
    'heap.max': heap.max,
    'ram.current': total - free,
    'ram.percent': Math.round((100 * (total - free)) / total),
    'ram.max': total,
    'file_desc.current': fd.current,
    'file_desc.percent': fd.max > 0 ? Math.round((100 * fd.current) / fd.max) : -1,
    'file_desc.max': fd.max,
    'disk.total': fs?.total,
    'disk.used': fs ? fs.total - fs.avail : undefined,
    'disk.avail': fs?.avail,
    'disk.used_percent': fs && fs.total > 0 ? ((100 * (fs.total - fs.avail)) / fs.total).toFixed(2) : undefined,
    cpu: Math.min(100, Math.round((100 * l1) / Math.max(1, navigator.hardwareConcurrency))),
    load_1m: l1.toFixed(2),
    load_5m: l5.toFixed(2),
    load_15m: l15.toFixed(2),
    uptime: `${uptime}s`,
    'node.role': 'dim',
    'node.roles': 'cluster_manager,data,ingest',
    cluster_manager: '*',
    name: String(ctx.deps.node.values.get('node.name')),
  }
  return renderCat(ctx, NODE_COLUMNS, [row])
}

const ALIAS_COLUMNS: Column[] = [
  { name: 'alias', aliases: ['a'], default: true },
  { name: 'index', aliases: ['i', 'idx'], default: true },
  { name: 'filter', aliases: ['f', 'fi'], default: true },
  { name: 'routing.index', aliases: ['ri', 'routingIndex'], default: true },
  { name: 'routing.search', aliases: ['rs', 'routingSearch'], default: true },
  { name: 'is_write_index', aliases: ['w', 'isWriteIndex'], default: true },
]

async function catAliases(ctx: RequestContext) {
  const names = ctx.part('name')?.split(',')
  const options = ctx.resolveOptions({ expand_wildcards: 'all' })
  // Like every wildcard, "all aliases" never reaches the system indices.
  const indices = await ctx.authorized(CAT_ACTIONS.aliases, withoutSystemIndices(undefined), options)
  const all = await ctx.store.getAlias({ index: indices, ...options })
  const keep = aliasNameFilter(names)
  const rows: Array<Record<string, Cell>> = []
  for (const [index, { aliases }] of Object.entries(all)) {
    for (const [alias, def] of Object.entries(aliases ?? {})) {
      if (!keep(alias)) continue
      rows.push({
        alias,
        index,
        filter: def.filter ? '*' : '-',
        'routing.index': def.index_routing ?? def.routing ?? '-',
        'routing.search': def.search_routing ?? def.routing ?? '-',
        is_write_index: def.is_write_index === undefined ? '-' : String(def.is_write_index),
      })
    }
  }
  rows.sort((a, b) => String(a.alias).localeCompare(String(b.alias)) || String(a.index).localeCompare(String(b.index)))
  return renderCat(ctx, ALIAS_COLUMNS, rows)
}

export function catRoutes(r: IndexRouter): void {
  r.on('GET', ['/_cat/indices', '/_cat/indices/:index'], catIndices)
  r.on('GET', '/_cat/nodes', catNodes)
  r.on('GET', ['/_cat/aliases', '/_cat/aliases/:name'], catAliases)
}

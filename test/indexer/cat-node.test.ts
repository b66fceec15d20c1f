// The node tables monitoring tools poll (_cat/cluster_manager, _cat/master, _cat/pending_tasks,
// _cat/allocation, _cat/recovery, _cat/fielddata) and the heap figures of _cat/nodes and
// _nodes/stats, over real HTTP, with OpenSearch 3.4's columns.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

const ROLES = `
_meta: { type: roles, config_version: 2 }
logs_reader:
  index_permissions:
    - index_patterns: ["logs-*"]
      allowed_actions: ["read"]
`

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ roles: ROLES, users: { admin: { roles: ['all_access'] }, alice: { roles: ['logs_reader'] } } })
  await ok(api.call('admin', 'PUT', '/logs-a', { settings: { number_of_replicas: 1 } }))
  await ok(api.call('admin', 'PUT', '/logs-b', { settings: { number_of_shards: 2, number_of_replicas: 0 } }))
})

afterAll(async () => {
  await api?.stop()
})

const json = async (path: string) => ok(api.call('admin', 'GET', `${path}${path.includes('?') ? '&' : '?'}format=json`))

describe('node tables', () => {
  test('the cluster manager is this node, under both names; nothing is pending', async () => {
    const [manager] = await json('/_cat/cluster_manager')
    expect(Object.keys(manager)).toEqual(['id', 'host', 'ip', 'node'])
    expect(manager.node).toBe((await json('/_cat/nodes?h=name'))[0].name)
    expect(await json('/_cat/master')).toEqual([manager])
    expect((await api.call('admin', 'GET', '/_cat/pending_tasks?v')).text.trim().split(/\s+/)).toEqual([
      'insertOrder',
      'timeInQueue',
      'priority',
      'source',
    ])
    expect(await json('/_cat/fielddata')).toEqual([])
  })

  test('allocation counts the primaries on the node and the replicas it cannot hold', async () => {
    const rows = await json('/_cat/allocation?bytes=b')
    const shards = await json('/_cat/shards?expand_wildcards=all')
    const primaries = shards.filter((s: any) => s.prirep === 'p').length
    const replicas = shards.filter((s: any) => s.prirep === 'r').length
    expect(Number(rows[0].shards)).toBe(primaries)
    expect(Number(rows[0]['disk.total'])).toBeGreaterThanOrEqual(Number(rows[0]['disk.avail']))
    expect(Number(rows[0]['disk.percent'])).toBeLessThanOrEqual(100)
    expect(rows[1]).toMatchObject({ shards: String(replicas), node: 'UNASSIGNED' })
  })

  test('recovery lists each shard of the named indices as done; none is active', async () => {
    const rows = await json('/_cat/recovery/logs-*?h=index,shard,stage,type,target_node')
    expect(rows.map((r: any) => [r.index, r.shard, r.stage, r.type])).toEqual([
      ['logs-a', '0', 'done', 'empty_store'],
      ['logs-b', '0', 'done', 'empty_store'],
      ['logs-b', '1', 'done', 'empty_store'],
    ])
    expect(await json('/_cat/recovery/logs-*?active_only=true')).toEqual([])
    expect((await api.call('admin', 'GET', '/_cat/recovery/nope')).status).toBe(404)
  })

  test('the tables are the cluster monitor permission (indices: the recovery one)', async () => {
    for (const path of ['/_cat/cluster_manager', '/_cat/pending_tasks', '/_cat/allocation', '/_cat/fielddata', '/_cat/recovery/logs-a'])
      expect([path, (await api.call('alice', 'GET', path)).status]).toEqual([path, 403])
  })

  test('heap figures stay within their maximum (JavaScriptCore has no fixed heap size)', async () => {
    const [node] = await json('/_cat/nodes?h=heap.percent,heap.current,heap.max&bytes=b')
    expect(Number(node['heap.percent'])).toBeLessThan(100)
    expect(Number(node['heap.current'])).toBeLessThanOrEqual(Number(node['heap.max']))
    const stats = await ok(api.call('admin', 'GET', '/_nodes/stats/jvm'))
    const mem = (Object.values(stats.nodes)[0] as any).jvm.mem
    expect(mem.heap_used_percent).toBeLessThan(100)
    expect(mem.heap_committed_in_bytes).toBeGreaterThanOrEqual(mem.heap_used_in_bytes)
    expect(mem.heap_max_in_bytes).toBeGreaterThanOrEqual(mem.heap_committed_in_bytes)
  })
})

describe('thread pools and segments', () => {
  test('thread_pool lists OpenSearch pools; completed counts the work of each kind; patterns pick pools', async () => {
    await ok(api.call('admin', 'PUT', '/logs-c/_doc/1?refresh=true', { a: 1 }), 201)
    await ok(api.call('admin', 'GET', '/logs-c/_doc/1'))
    const pools = await json('/_cat/thread_pool?h=name,type,active,queue,rejected,completed')
    const byName = new Map(pools.map((p: any) => [p.name, p]))
    expect([...byName.keys()]).toContain('write')
    expect(Number((byName.get('write') as any).completed)).toBeGreaterThanOrEqual(1)
    expect(Number((byName.get('get') as any).completed)).toBeGreaterThanOrEqual(1)
    expect(pools.every((p: any) => p.active === '0' && p.queue === '0' && p.rejected === '0')).toBe(true)
    const picked = await json('/_cat/thread_pool/se*,write?h=name,queue_size')
    expect(picked).toEqual([
      { name: 'search', queue_size: '1000' },
      { name: 'search_throttled', queue_size: '1000' },
      { name: 'write', queue_size: '10000' },
    ])
  })

  test('segments: one committed segment per index holding documents, with its count', async () => {
    await ok(api.call('admin', 'PUT', '/logs-d/_doc/1?refresh=true', { a: 1 }), 201)
    await ok(api.call('admin', 'PUT', '/logs-d/_doc/2?refresh=true', { a: 2 }), 201)
    const rows = await json('/_cat/segments/logs-*')
    const d = rows.find((r: any) => r.index === 'logs-d')
    expect(d).toMatchObject({ shard: '0', prirep: 'p', segment: '_0', 'docs.count': '2', committed: 'true', searchable: 'true' })
    expect(rows.find((r: any) => r.index === 'logs-b')).toBeUndefined() // empty: no segment
    // An index the caller may not read is refused, as every indices table.
    expect((await api.call('alice', 'GET', '/_cat/segments/logs-*')).status).toBe(403)
  })
})

/**
 * `storage.platform.url` as a list of the platform's nodes: requests stick to one node and move to
 * the next when it cannot be reached. A request is sent again elsewhere only when that cannot apply
 * it twice: nothing was sent (connection refused), or it is a read. A write whose connection broke
 * after it was sent fails as the platform being unavailable, and is not written by another node.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { StoreError } from '../../src/store/errors'
import { openPlatformStore } from '../../src/store/platform'
import type { TestServer } from '../helpers/server'
import { startNode, startPlatform, type PlatformUnderTest } from './cluster-helpers'
import { startRecordingProxy } from './recording-proxy'

/** A URL nothing listens on: connections are refused (nothing is ever sent). */
function deadUrl(): string {
  const s = Bun.serve({ port: 0, fetch: () => new Response() })
  const url = `http://127.0.0.1:${s.port}`
  s.stop(true)
  return url
}

/** A node that takes each request whole and drops the connection without an answer (it may have applied it). */
function breakingNode() {
  const seen: string[] = []
  const server = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket, data) {
        const head = data.toString().split('\r\n')[0]
        if (head.includes(' HTTP/')) seen.push(head.split(' ').slice(0, 2).join(' '))
        socket.end()
      },
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, seen, stop: () => server.stop(true) }
}

let platform: PlatformUnderTest
beforeAll(async () => {
  platform = await startPlatform()
}, 60_000)
afterAll(() => platform?.stop())

describe('the store over a list of nodes', () => {
  test('a refused connection sends any request to the next node, and later requests stay there', async () => {
    const live = startRecordingProxy(platform.url)
    const store = openPlatformStore({ url: [deadUrl(), live.url], username: platform.admin.name, password: platform.admin.password })
    try {
      // A create-only write: safe to send again, since the refused node never saw it.
      const r = await store.index({ index: 'failover-a', id: '1', body: { n: 1 }, op_type: 'create', refresh: true })
      expect(r.result).toBe('created')
      expect(await store.get({ index: 'failover-a', id: '1' })).toMatchObject({ found: true, _source: { n: 1 } })
      expect(live.seen.map((s) => s.method)).toEqual(['PUT', 'GET'])
    } finally {
      await store.close()
      live.stop()
    }
  })

  test('a read whose connection broke goes to the next node; a write is not sent twice', async () => {
    const breaking = breakingNode()
    const live = startRecordingProxy(platform.url)
    const reads = openPlatformStore({ url: [breaking.url, live.url], username: platform.admin.name, password: platform.admin.password })
    const writes = openPlatformStore({ url: [breaking.url, live.url], username: platform.admin.name, password: platform.admin.password })
    try {
      expect(await reads.get({ index: 'failover-a', id: '1' })).toMatchObject({ found: true, _source: { n: 1 } })
      expect(breaking.seen).toEqual(['GET /failover-a/_doc/1'])
      const e = await writes.index({ index: 'failover-a', id: '2', body: { n: 2 }, op_type: 'create' }).catch((e) => e)
      expect(e).toBeInstanceOf(StoreError)
      expect([e.type, e.status]).toEqual(['platform_unavailable_exception', 503])
      expect(breaking.seen).toEqual(['GET /failover-a/_doc/1', 'PUT /failover-a/_doc/2?op_type=create'])
      expect(live.seen.filter((s) => s.method === 'PUT')).toEqual([])
      // The broken node is left behind: the next write goes to the other node at once.
      expect((await writes.index({ index: 'failover-a', id: '3', body: { n: 3 }, refresh: true })).result).toBe('created')
      expect(breaking.seen).toHaveLength(2)
      expect((await reads.get({ index: 'failover-a', id: '2' })).found).toBe(false)
    } finally {
      await reads.close()
      await writes.close()
      live.stop()
      breaking.stop()
    }
  })
})

describe('a node given the platform as a list', () => {
  let node: TestServer
  beforeAll(async () => {
    // The comma-separated form of a list setting, the first node down.
    node = await startNode(platform, { settings: { 'storage.platform.url': `${deadUrl()}, ${platform.url}` } })
  }, 60_000)
  afterAll(() => node?.stop())

  test('serves its own routes and forwards the index API (writes included) to the node that answers', async () => {
    expect(node.server.app.storeKind).toBe('platform')
    const put = await node.request('PUT', '/failover-b/_doc/1?refresh=true', { user: platform.admin, body: { via: 'node' } })
    expect(put.status).toBe(201)
    const got = await platform.request('GET', '/failover-b/_doc/1')
    expect(got.body._source).toEqual({ via: 'node' })
    const version = await node.request('GET', '/_plugins/_content_manager/version/check')
    expect(version.status).not.toBe(503)
  })
})

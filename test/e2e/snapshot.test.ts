// Backup and restore with OpenSearch's snapshot API (issue 17 item 3), against the compiled binary:
// fs repositories inside path.repo, an online snapshot taken while a client keeps writing, restore
// (renamed, and over a deleted index) into the running node, _status, _cat, delete, permissions.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { basicAuth, send, writeSecurityConfig } from '../helpers/app'
import { spawnBinary, type SpawnedServer, requireBinary } from '../helpers/spawn-binary'
import { waitFor } from '../helpers/wait'

const admin = { name: 'admin', password: 'Admin-pass-1', backend_roles: ['admin'] }
const reader = { name: 'reader', password: 'Reader-pass-1', roles: ['snap_reader'] }
const snapper = { name: 'snapper', password: 'Snapper-pass-1', roles: ['snap_admin'] }
let node: SpawnedServer
let repoRoot: string

const call = (method: string, path: string, body?: unknown, user: { name: string; password: string } = admin) =>
  send(node.url, method, path, { authorization: basicAuth(user), body })

beforeAll(async () => {
  requireBinary()
  const dir = mkdtempSync(join(tmpdir(), 'svc-snap-'))
  repoRoot = join(dir, 'backups')
  await writeSecurityConfig(join(dir, 'config'), {
    users: [admin, reader, snapper],
    roles: {
      snap_reader: { cluster_permissions: ['cluster:admin/snapshot/get', 'cluster:admin/repository/get'] },
      // manage_snapshots, but no index rights: may snapshot, may not restore into indices.
      snap_admin: { cluster_permissions: ['manage_snapshots'] },
    },
  })
  const config = join(dir, 'config', 'svc-ext.yml')
  writeFileSync(config, `path.repo: ${repoRoot}\n`)
  node = await spawnBinary({ args: ['serve', '--config', config] })
})
afterAll(() => node?.stop())

describe('snapshot repositories', () => {
  test('fs repositories must be inside path.repo, with OpenSearch error types', async () => {
    const outside = await call('PUT', '/_snapshot/out', { type: 'fs', settings: { location: '/etc/elsewhere' } })
    expect(outside.status).toBe(400)
    expect(outside.body.error.type).toBe('repository_exception')
    expect(outside.body.error.reason).toContain("doesn't match any of the locations specified by path.repo")
    const escape = await call('PUT', '/_snapshot/out', { type: 'fs', settings: { location: '../x' } })
    expect(escape.body.error.type).toBe('repository_exception')
    expect((await call('PUT', '/_snapshot/out', { settings: { location: 'x' } })).body.error.type).toBe(
      'action_request_validation_exception',
    )
    expect((await call('PUT', '/_snapshot/out', { type: 's3', settings: {} })).body.error.reason).toContain(
      'repository type [s3] does not exist',
    )
    expect((await call('GET', '/_snapshot/nope')).status).toBe(404)

    const put = await call('PUT', '/_snapshot/backups', { type: 'fs', settings: { location: 'main' } })
    expect(put.status).toBe(200)
    expect(put.body).toEqual({ acknowledged: true })
    expect((await call('GET', '/_snapshot/backups')).body).toEqual({ backups: { type: 'fs', settings: { location: 'main' } } })
    expect(existsSync(join(repoRoot, 'main'))).toBe(true)
    const cat = await call('GET', '/_cat/repositories?v')
    expect(cat.text).toMatch(/id\s+type\n/)
    expect(cat.text).toMatch(/backups\s+fs/)
  })
})

describe('snapshot and restore', () => {
  test('an online snapshot taken during writes restores a consistent prefix of them, renamed and in place', async () => {
    // A client that writes one document after the other, each acknowledged before the next.
    let acked = -1
    let stop = false
    const writer = (async () => {
      for (let i = 0; !stop; i++) {
        const r = await call('PUT', `/events/_doc/${i}`, { seq: i, msg: `event ${i}`.repeat(20) })
        expect(r.status).toBeLessThan(300)
        acked = i
      }
    })()
    await waitFor(() => acked >= 300, { what: '300 acknowledged writes' })
    const ackedBefore = acked
    const snap = await call('PUT', '/_snapshot/backups/snap-1?wait_for_completion=true', { indices: 'events' })
    expect(snap.status).toBe(200)
    expect(snap.body.snapshot.state).toBe('SUCCESS')
    expect(snap.body.snapshot.indices).toEqual(['events'])
    const ackedAfter = acked
    await waitFor(() => acked > ackedAfter, { what: 'a write after the snapshot' })
    stop = true
    await writer

    const restored = await call('POST', '/_snapshot/backups/snap-1/_restore?wait_for_completion=true', {
      indices: 'events',
      rename_pattern: '(.+)',
      rename_replacement: 'restored-$1',
    })
    expect(restored.status).toBe(200)
    expect(restored.body.snapshot.indices).toEqual(['restored-events'])
    const ids = (
      await call('POST', '/restored-events/_search', { size: 10000, _source: false, query: { match_all: {} } })
    ).body.hits.hits.map((h: { _id: string }) => Number(h._id)) as number[]
    // A point in time: every write acknowledged before the snapshot started, a gap-free prefix.
    ids.sort((a, b) => a - b)
    expect(ids.length).toBeGreaterThan(ackedBefore)
    expect(ids.length).toBeLessThanOrEqual(ackedAfter + 2)
    expect(ids).toEqual(ids.map((_, i) => i))
    const doc = await call('GET', '/restored-events/_doc/7')
    expect(doc.body._source).toEqual({ seq: 7, msg: 'event 7'.repeat(20) })

    // Not over an open index of the same name.
    const clash = await call('POST', '/_snapshot/backups/snap-1/_restore?wait_for_completion=true', { indices: 'events' })
    expect(clash.status).toBe(400)
    expect(clash.body.error.type).toBe('snapshot_restore_exception')
    expect(clash.body.error.reason).toContain('cannot restore index [events] because an open index with same name already exists')

    // Lost index, restored in place.
    expect((await call('DELETE', '/events')).status).toBe(200)
    const back = await call('POST', '/_snapshot/backups/snap-1/_restore?wait_for_completion=true', {})
    expect(back.body.snapshot.indices).toEqual(['events'])
    expect((await call('GET', '/events/_count')).body.count).toBe(ids.length)
  })

  test('GET _all, _status, _cat/snapshots and delete', async () => {
    const all = await call('GET', '/_snapshot/backups/_all')
    expect(all.body.snapshots.map((s: { snapshot: string; state: string }) => [s.snapshot, s.state])).toEqual([['snap-1', 'SUCCESS']])
    const status = await call('GET', '/_snapshot/backups/snap-1/_status')
    expect(status.body.snapshots[0]).toMatchObject({ snapshot: 'snap-1', repository: 'backups', state: 'SUCCESS' })
    expect(status.body.snapshots[0].shards_stats).toMatchObject({ done: 1, failed: 0, total: 1 })
    expect(status.body.snapshots[0].indices.events.shards_stats.done).toBe(1)
    const cat = await call('GET', '/_cat/snapshots/backups?h=id,status,indices')
    expect(cat.text.trim()).toBe('snap-1 SUCCESS 1')

    const dup = await call('PUT', '/_snapshot/backups/snap-1')
    expect(dup.body.error.type).toBe('invalid_snapshot_name_exception')
    expect((await call('PUT', '/_snapshot/backups/Upper')).body.error.reason).toContain('must be lowercase')

    // Without wait_for_completion the snapshot is accepted and completes in the background.
    expect((await call('PUT', '/_snapshot/backups/snap-2')).body).toEqual({ accepted: true })
    const state = await waitFor(
      async () => {
        const s = (await call('GET', '/_snapshot/backups/snap-2')).body.snapshots?.[0]?.state
        return s === 'SUCCESS' ? s : undefined
      },
      { timeoutMs: 5000, what: 'snap-2 completed' },
    )
    expect(state).toBe('SUCCESS')

    expect((await call('DELETE', '/_snapshot/backups/snap-2')).body).toEqual({ acknowledged: true })
    const gone = await call('GET', '/_snapshot/backups/snap-2')
    expect(gone.status).toBe(404)
    expect(gone.body.error.type).toBe('snapshot_missing_exception')
  })

  test('permissions: cluster:admin/snapshot/* and repository/*; a restore also needs rights on the indices it creates', async () => {
    expect((await send(node.url, 'GET', '/_snapshot/backups/_all')).status).toBe(401)
    expect((await call('GET', '/_snapshot/backups/_all', undefined, reader)).status).toBe(200)
    expect((await call('GET', '/_cat/snapshots/backups', undefined, reader)).status).toBe(200)
    const denied = await call('PUT', '/_snapshot/backups/by-reader?wait_for_completion=true', undefined, reader)
    expect(denied.status).toBe(403)
    expect(denied.text).toContain('cluster:admin/snapshot/create')
    expect((await call('PUT', '/_snapshot/other', { type: 'fs', settings: { location: 'o' } }, reader)).status).toBe(403)

    const taken = await call('PUT', '/_snapshot/backups/by-snapper?wait_for_completion=true', { indices: 'events' }, snapper)
    expect(taken.body.snapshot.state).toBe('SUCCESS')
    const restore = await call(
      'POST',
      '/_snapshot/backups/by-snapper/_restore?wait_for_completion=true',
      { rename_pattern: 'events', rename_replacement: 'copy' },
      snapper,
    )
    expect(restore.status).toBe(403)
    expect((await call('HEAD', '/copy')).status).toBe(404)

    // Rights on the new name do not open a system index: restoring its data means reading it.
    const sys = await call('PUT', '/_snapshot/backups/with-system?wait_for_completion=true', { indices: '*' })
    expect(sys.body.snapshot.indices).toContain('.svc-internal-state')
    const leak = await call('POST', '/_snapshot/backups/with-system/_restore?wait_for_completion=true', {
      indices: '.svc-internal-state',
      rename_pattern: '.+',
      rename_replacement: 'leak',
    })
    expect(leak.status).toBe(403)
    expect((await call('HEAD', '/leak')).status).toBe(404)
  })

  test("a lost data directory is rebuilt from a snapshot's store file", async () => {
    const expected = (await call('GET', '/events/_count')).body.count
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-rebuilt-'))
    copyFileSync(join(repoRoot, 'main', 'snap-1', 'store.db'), join(dataDir, 'store.db'))
    const rebuilt = await spawnBinary({ dataDir })
    try {
      const r = await send(rebuilt.url, 'GET', '/events/_count', { authorization: rebuilt.auth })
      expect(r.body.count).toBe(expected)
    } finally {
      await rebuilt.stop()
    }
  })
})

/**
 * Snapshots in platform mode: a node forwards OpenSearch's snapshot API to the platform, which
 * snapshots its own cluster into a repository under its own `path.repo` (the embedded store's
 * snapshot service copies the store file, which platform mode does not have). Registered, taken,
 * listed and restored through the node, with the caller's rights on the platform; the svc-ext
 * content written before the snapshot comes back with the restore.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { TestServer } from '../helpers/server'
import { describeOnOpenSearch, OPENSEARCH_START_MS } from '../helpers/opensearch'
import { startNode, startPlatform, type PlatformUnderTest } from './cluster-helpers'

const REPO = 'plat-repo'
const PEEK = { name: 'peek', password: 'Peek-pass-1-Strong' }

describeOnOpenSearch('snapshots in platform mode, on the real OpenSearch', () => {
  let platform: PlatformUnderTest
  let node: TestServer
  const call = (method: string, path: string, body?: unknown, user?: { name: string; password: string }) =>
    node.request(method, path, { body, user: user ?? platform.admin })

  beforeAll(async () => {
    platform = await startPlatform(
      {
        users: [{ ...PEEK, roles: ['snapshot_peek'] }],
        roles: { snapshot_peek: { cluster_permissions: ['cluster:admin/repository/get', 'cluster:admin/snapshot/get'] } },
      },
      'opensearch',
    )
    node = await startNode(platform)
  }, OPENSEARCH_START_MS)
  afterAll(async () => {
    await call('DELETE', `/_snapshot/${REPO}/snap-1`).catch(() => undefined)
    await call('DELETE', `/_snapshot/${REPO}`).catch(() => undefined)
    await node?.stop()
    await platform?.stop()
  }, 120_000)

  test('a repository outside the platform’s path.repo is the platform’s own refusal', async () => {
    const r = await call('PUT', '/_snapshot/outside', { type: 'fs', settings: { location: '/etc/elsewhere' } })
    // OpenSearch's status for it (the embedded store answers 400): forwarded as it is.
    expect(r.status).toBe(500)
    expect(r.body.error.type).toBe('repository_exception')
    expect(r.body.error.caused_by.reason).toContain("doesn't match any of the locations specified by path.repo")
  })

  test('register, snapshot, list and restore through the node; svc-ext content comes back', async () => {
    expect((await call('PUT', `/_snapshot/${REPO}`, { type: 'fs', settings: { location: `${REPO}-${Date.now()}` } })).status).toBe(200)
    for (let i = 0; i < 3; i++) expect((await call('PUT', `/snap-notes/_doc/${i}?refresh=true`, { n: i })).status).toBe(201)
    const integration = await call('POST', '/_plugins/_content_manager/integrations', {
      resource: { metadata: { title: 'snaplogs', author: 'platform', description: 'snapshot logs' }, category: 'applications' },
    })
    expect(integration.status).toBe(201)
    const taken = await call('PUT', `/_snapshot/${REPO}/snap-1?wait_for_completion=true`, {
      indices: 'snap-notes,svc-threatintel-integrations-*',
      include_global_state: false,
    })
    expect(taken.status).toBe(200)
    expect(taken.body.snapshot.state).toBe('SUCCESS')
    expect(taken.body.snapshot.indices).toContain('snap-notes')

    // Listed for a caller with only the get actions; a restore is refused to them.
    const listed = await call('GET', `/_snapshot/${REPO}/_all`, undefined, PEEK)
    expect(listed.status).toBe(200)
    expect(listed.body.snapshots.map((s: { snapshot: string }) => s.snapshot)).toEqual(['snap-1'])
    expect((await call('POST', `/_snapshot/${REPO}/snap-1/_restore`, { indices: 'snap-notes' }, PEEK)).status).toBe(403)

    expect((await call('DELETE', '/snap-notes')).status).toBe(200)
    const restored = await call('POST', `/_snapshot/${REPO}/snap-1/_restore?wait_for_completion=true`, {
      indices: 'snap-notes,svc-threatintel-integrations-*',
      rename_pattern: '(.+)',
      rename_replacement: 'restored-$1',
      // Beside the live content index: its alias must stay with one write index (OpenSearch refuses two).
      include_aliases: false,
    })
    expect(restored.status).toBe(200)
    expect(restored.body.snapshot.shards.failed).toBe(0)
    const back = await call('POST', '/restored-snap-notes/_count', { query: { match_all: {} } })
    expect(back.body.count).toBe(3)
    const integrations = await call('POST', '/restored-svc-threatintel-integrations-*/_search', {
      query: { term: { 'document.metadata.title': 'snaplogs' } },
    })
    expect(integrations.status).toBe(200)
    expect(integrations.body.hits.total.value).toBe(1)
  }, 180_000)
})

/**
 * Platform mode on a development OpenSearch without the security plugin: the platform
 * authenticates no one, so the node does, with its own security files as in embedded mode, says so
 * in its log, and serves the index API itself over the platform (our rights), never forwarding a
 * request the platform would take from anyone.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { describeOnOpenSearch, OPENSEARCH_START_MS, realOpenSearch, wipeOpenSearch, type RunningOpenSearch } from '../helpers/opensearch'
import { startTestServer, type TestServer } from '../helpers/server'

const READER = { name: 'rita', password: 'Rita-pass-1' } // may read notes-* only

describeOnOpenSearch('a node on an OpenSearch without the security plugin', () => {
  let os: RunningOpenSearch
  let node: TestServer
  const logLines: string[] = []

  beforeAll(async () => {
    os = await realOpenSearch('dev')
    await wipeOpenSearch(os)
    node = await startTestServer({
      settings: { 'storage.platform.url': os.url, 'log.level': 'info' },
      users: [{ ...READER, roles: ['notes_reader'] }],
      roles: { notes_reader: { index_permissions: [{ index_patterns: ['notes-*'], allowed_actions: ['read'] }] } },
      logLines,
    })
  }, OPENSEARCH_START_MS)

  afterAll(async () => {
    await node?.stop()
  })

  test('it says so at start and keeps its data on the platform', async () => {
    expect(node.server.app.storeKind).toBe('platform')
    expect(logLines.some((l) => JSON.parse(l).msg.startsWith('the platform has no security plugin'))).toBe(true)
    const session = await node.request('POST', '/_plugins/_setup/ai_assistant/sessions', { body: { title: 'dev', messages: [] } })
    expect(session.status).toBe(200)
    await os.request('POST', '/svc-ai-assistant-sessions/_refresh')
    const onPlatform = await os.request('POST', '/svc-ai-assistant-sessions/_search', { query: { match: { title: 'dev' } } })
    expect(onPlatform.status).toBe(200)
    expect(onPlatform.body.hits.total.value).toBe(1)
  })

  test('no request passes unauthenticated, plugin route or index API', async () => {
    for (const [method, path] of [
      ['GET', '/'],
      ['GET', '/_cat/indices'],
      ['POST', '/notes-1/_search'],
      ['GET', '/_plugins/_security_analytics/logtype/_search'],
    ]) {
      const r = await node.request(method, path, { user: null })
      expect({ path, status: r.status }).toEqual({ path, status: 401 })
    }
    const wrong = await node.request('GET', '/', { user: { name: READER.name, password: 'nope' } })
    expect(wrong.status).toBe(401)
  })

  test('the index API answers with our index rights, over the platform', async () => {
    const write = await node.request('PUT', '/notes-1/_doc/1?refresh=true', { body: { text: 'hello' } })
    expect(write.status).toBe(201)
    expect((await os.request('GET', '/notes-1/_doc/1')).body._source).toEqual({ text: 'hello' })
    const read = await node.request('POST', '/notes-1/_search', { user: READER, body: { query: { match_all: {} } } })
    expect(read.status).toBe(200)
    expect(read.body.hits.hits.map((h: { _id: string }) => h._id)).toEqual(['1'])
    const refused = await node.request('PUT', '/notes-1/_doc/2', { user: READER, body: { text: 'mine' } })
    expect(refused.status).toBe(403)
    expect(refused.body.error.type).toBe('security_exception')
    // Everyone reads the sessions stream through the built-in role, filtered to their own (DLS).
    const sessions = await node.request('POST', '/svc-ai-assistant-sessions/_search', { user: READER, body: {} })
    expect(sessions.status).toBe(200)
    expect(sessions.body.hits.hits).toEqual([])
    const admins = await node.request('POST', '/svc-ai-assistant-sessions/_search', { body: {} })
    expect(admins.body.hits.hits.length).toBeGreaterThan(0)
  })

  test('the snapshot API is not served (README: differences between the modes), and never forwarded', async () => {
    for (const [method, path] of [
      ['GET', '/_snapshot'],
      ['PUT', '/_snapshot/dev-repo'],
      ['GET', '/_cat/snapshots/dev-repo'],
    ]) {
      const r = await node.request(method, path, { body: method === 'PUT' ? { type: 'fs', settings: { location: 'x' } } : undefined })
      // A client error (no handler, or `_snapshot` taken for an index name), never a 5xx.
      expect({ path, client: r.status >= 400 && r.status < 500 }).toEqual({ path, client: true })
    }
    expect((await os.request('GET', '/_snapshot')).body).toEqual({})
  })
})

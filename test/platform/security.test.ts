/**
 * Platform-mode security over real HTTP: a node authenticates through the platform's authinfo,
 * decides OUR cluster actions with our model applied to the platform's role names, and forwards
 * the index API with the caller's credentials so the platform's index rights and DLS apply.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/http/log'
import { ApiError } from '../../src/http/errors'
import { Policy } from '../../src/security/policy'
import { endpointAt, PlatformSecurity, storeAs, PLATFORM_UNAVAILABLE } from '../../src/security/platform'
import { StoreError } from '../../src/store/errors'
import type { TestServer } from '../helpers/server'
import { forEachPlatform, startNode, type PlatformUnderTest } from './cluster-helpers'
import { basicAuth } from '../helpers/calls'

const ALICE = { name: 'alice', password: 'Alice-pass-1' }
const BOB = { name: 'bob', password: 'Bob-pass-1' }
const CAROL = { name: 'carol', password: 'Carol-pass-1' }
const LOGTYPES = '/_plugins/_security_analytics/logtype/_search'
const SESSIONS = '/_plugins/_setup/ai_assistant/sessions'
const basic = basicAuth

forEachPlatform(
  {
    users: [{ ...ALICE, backend_roles: ['analyst'] }, { ...BOB }, { ...CAROL, roles: ['custom_reader'] }],
    // custom_reader exists on the platform only: its index rights are the platform's.
    roles: { custom_reader: { index_permissions: [{ index_patterns: ['shared*'], allowed_actions: ['read'] }] } },
  },
  (current, kind) => {
    let platform: PlatformUnderTest
    let node: TestServer
    const platformSecurity = () => node.server.app.deps.security as PlatformSecurity

    beforeAll(async () => {
      platform = current()
      // The node knows custom_reader only for OUR cluster actions (roles.yml of the node).
      node = await startNode(platform, {
        roles: { custom_reader: { cluster_permissions: ['cluster:admin/platform/securityanalytics/logtype/search'] } },
      })
      await platform.request('PUT', '/shared-1/_doc/1?refresh=true', { body: { msg: 'hello' } })
    }, 180_000)

    afterAll(async () => {
      await node.stop()
    })

    describe('authentication by the platform', () => {
      test('no or wrong credentials: 401 with WWW-Authenticate; the right ones: the platform’s identity', async () => {
        const none = await node.request('GET', LOGTYPES, { user: null })
        expect(none.status).toBe(401)
        expect(none.headers.get('www-authenticate')).toBe('Basic realm="svc"')
        const wrong = await node.request('GET', LOGTYPES, { user: { name: 'carol', password: 'nope' } })
        expect(wrong.status).toBe(401)
        expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="svc"')
        const who = await node.request('GET', '/_plugins/_security/authinfo', { user: CAROL })
        expect(who.status).toBe(200)
        expect(who.body.user_name).toBe('carol')
        expect(who.body.roles).toContain('custom_reader')
      })

      test('one platform call per Authorization header while cached, also for concurrent first requests', async () => {
        const sec = platformSecurity()
        const user = { name: 'alice', password: ALICE.password }
        const before = sec.stats.platformCalls
        const answers = await Promise.all(Array.from({ length: 8 }, () => node.request('GET', '/_plugins/_security/authinfo', { user })))
        expect(answers.every((a) => a.status === 200)).toBe(true)
        await node.request('GET', '/_plugins/_security/authinfo', { user })
        expect(sec.stats.platformCalls - before).toBe(1)
        // Failures are not cached: each wrong password is asked again.
        const mid = sec.stats.platformCalls
        await node.request('GET', LOGTYPES, { user: { name: 'alice', password: 'bad' } })
        await node.request('GET', LOGTYPES, { user: { name: 'alice', password: 'bad' } })
        expect(sec.stats.platformCalls - mid).toBe(2)
      })

      test('a platform that cannot answer is a 503, never a pass', async () => {
        const dead = Bun.serve({ port: 0, fetch: () => new Response('down', { status: 502 }) })
        const sec = new PlatformSecurity(
          endpointAt(`http://127.0.0.1:${dead.port}`),
          new Policy({ users: {}, roles: {}, mappings: {}, actionGroups: {} }),
          { cacheTtlSeconds: 60, cacheMaxEntries: 10 },
          createLogger({ write: () => {} }),
        )
        const e = await sec.authenticate(new Request('http://x/', { headers: { authorization: basic(ALICE) } })).catch((e) => e)
        dead.stop(true)
        expect(e).toBeInstanceOf(ApiError)
        expect([e.status, e.message]).toEqual([503, PLATFORM_UNAVAILABLE])
      })
    })

    describe('cluster permissions for our actions', () => {
      test('resolved through our roles.yml applied to the platform’s role names', async () => {
        const carol = await node.request('GET', LOGTYPES, { user: CAROL })
        expect(carol.status).toBe(200)
        const bob = await node.request('GET', LOGTYPES, { user: BOB })
        expect(bob.status).toBe(403)
        expect(bob.body.message).toContain('no permissions for [cluster:admin/platform/securityanalytics/logtype/search]')
        // Built-in mappings still apply to platform identities: everyone holds svc_ai_assistant.
        const session = await node.request('POST', SESSIONS, { user: BOB, body: { title: 'mine', messages: [] } })
        expect(session.status).toBe(200)
      })
    })

    describe('the index API is the platform’s', () => {
      test('forwarded with the caller’s credentials: the platform’s rights, statuses and shapes', async () => {
        const carol = await node.request('GET', '/shared-1/_search', { user: CAROL })
        expect(carol.status).toBe(200)
        expect(carol.body.hits.hits.map((h: { _source: unknown }) => h._source)).toEqual([{ msg: 'hello' }])
        const bob = await node.request('GET', '/shared-1/_search', { user: BOB })
        expect(bob.status).toBe(403)
        expect(bob.body.error.type).toBe('security_exception')
        const nobody = await node.request('GET', '/shared-1/_search', { user: null })
        expect(nobody.status).toBe(401)
        // Carol may read but not write, on the platform's word.
        const write = await node.request('PUT', '/shared-1/_doc/2', { user: CAROL, body: { msg: 'x' } })
        expect(write.status).toBe(403)
        const cat = await node.request('GET', '/_cat/indices/shared-*?h=index')
        expect([cat.status, cat.text.trim()]).toEqual([200, 'shared-1'])
        expect(cat.headers.get('content-type')).toStartWith('text/plain')
        const head = await node.request('HEAD', '/shared-1')
        expect([head.status, head.text]).toEqual([200, ''])
      })

      test('NDJSON bodies stream through untouched', async () => {
        const lines = [{ index: { _index: 'shared-2', _id: 'a' } }, { n: 1 }, { index: { _index: 'shared-2', _id: 'b' } }, { n: 2 }]
        const bulk = await node.request('POST', '/_bulk?refresh=true', {
          body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n',
          headers: { 'content-type': 'application/x-ndjson' },
        })
        expect(bulk.status).toBe(200)
        expect(bulk.body.errors).toBe(false)
        expect((await platform.store.count({ index: 'shared-2' })).count).toBe(2)
      })

      test('the platform’s DLS filters sessions on a direct _search through the node', async () => {
        for (const u of [ALICE, BOB])
          expect((await node.request('POST', SESSIONS, { user: u, body: { title: `${u.name}'s`, messages: [] } })).status).toBe(200)
        const r = await node.request('POST', '/svc-ai-assistant-sessions/_search', { user: ALICE, body: { size: 100 } })
        expect(r.status).toBe(200)
        const owners = new Set(r.body.hits.hits.map((h: { _source: { user: string } }) => h._source.user))
        expect([...owners]).toEqual(['alice'])
      })

      test('a system index opens only to an explicit system:admin/system_index grant, never to *', async () => {
        const admin = await platform.request('GET', '/.svc-internal-state/_search')
        expect(admin.status).toBe(403)
        const service = await platform.request('GET', '/.svc-internal-state/_search', { user: platform.serviceAccount })
        expect(service.status).toBe(200)
      })
    })

    describe('storeFor: work done with the caller’s rights', () => {
      test('a store bound to the caller’s credentials: the platform refuses what the caller may not do', async () => {
        const deps = node.server.app.deps
        const carol = await deps.security.authenticate(new Request(node.url + '/', { headers: { authorization: basic(CAROL) } }))
        const asCarol = storeAs(deps, carol)
        expect((await asCarol.get({ index: 'shared-1', id: '1' })).found).toBe(true)
        const denied = await asCarol.index({ index: 'shared-1', id: '3', body: { msg: 'x' } }).catch((e) => e)
        expect(denied).toBeInstanceOf(StoreError)
        expect([denied.status, denied.type]).toEqual([403, 'security_exception'])
        expect((await deps.store.get({ index: 'shared-1', id: '3' })).found).toBe(false)
        // The service store itself still writes with the service account.
        expect((await deps.store.index({ index: 'shared-1', id: '3', body: { msg: 'svc' } })).result).toBe('created')
        // A caller this node did not authenticate carries no credentials: refused, not run as the service.
        expect(() => storeAs(deps, { ...carol })).toThrow('no platform credentials')
      })
    })

    describe('_cluster/settings: our keys here, the platform’s keys there', () => {
      test('a mixed PUT applies ours and forwards the rest; GET shows both', async () => {
        const put = await node.request('PUT', '/_cluster/settings?flat_settings=true', {
          body: { persistent: { 'plugins.content_manager.max_decoders': 17, 'cluster.routing.allocation.enable': 'primaries' } },
        })
        expect(put.status).toBe(200)
        expect(put.body.acknowledged).toBe(true)
        expect(put.body.persistent).toEqual({
          'plugins.content_manager.max_decoders': '17',
          'cluster.routing.allocation.enable': 'primaries',
        })
        expect((await node.server.app.deps.settings.snapshot()).num('plugins.content_manager.max_decoders')).toBe(17)
        // The platform's key reached the platform (its own settings answer has it).
        const there = await platform.request('GET', '/_cluster/settings?flat_settings=true')
        expect(there.body.persistent['cluster.routing.allocation.enable']).toBe('primaries')
        const got = await node.request('GET', '/_cluster/settings?flat_settings=true')
        expect(got.body.persistent).toMatchObject({
          'plugins.content_manager.max_decoders': '17',
          'cluster.routing.allocation.enable': 'primaries',
        })
      })

      test('an invalid value of ours stops the request before anything reaches the platform', async () => {
        const put = await node.request('PUT', '/_cluster/settings', {
          body: { persistent: { plugins: { content_manager: { max_decoders: -1 } }, 'cluster.routing.allocation.enable': 'none' } },
        })
        expect(put.status).toBe(400)
        expect(JSON.stringify(put.body)).toContain('plugins.content_manager.max_decoders')
        const there = await platform.request('GET', '/_cluster/settings?flat_settings=true')
        expect(there.body.persistent['cluster.routing.allocation.enable']).toBe('primaries')
      })

      test('a streamed body without Content-Length is read only up to the limit; a text/plain one not at all', async () => {
        const auth = basicAuth(node.admin)
        const chunk = new TextEncoder().encode(' '.repeat(64 * 1024))
        let sent = 0
        const body = new ReadableStream<Uint8Array>({
          pull(c) {
            // 16 MiB if read to the end; the limit is 1 MiB.
            if (sent++ < 256) c.enqueue(chunk)
            else c.close()
          },
        })
        const r = await fetch(node.url + '/_cluster/settings', {
          method: 'PUT',
          headers: { authorization: auth, 'content-type': 'application/json' },
          body,
        })
        expect(r.status).toBe(413)
        expect(sent).toBeLessThan(256)
        const plain = await fetch(node.url + '/_cluster/settings', {
          method: 'PUT',
          headers: { authorization: auth, 'content-type': 'text/plain' },
          body: '{"persistent": {"plugins.content_manager.max_decoders": 4}}',
        })
        expect(plain.status).toBe(406)
      })

      test('platform-only keys get the platform’s own answer, refusals included; our route still needs our permission', async () => {
        const unknown = await node.request('PUT', '/_cluster/settings', { body: { persistent: { 'cluster.no_such_setting': 1 } } })
        expect(unknown.status).toBe(400)
        expect(unknown.body.error.reason).toContain('cluster.no_such_setting')
        const bob = await node.request('PUT', '/_cluster/settings', {
          user: BOB,
          body: { persistent: { 'plugins.content_manager.max_decoders': 3 } },
        })
        expect(bob.status).toBe(403)
      })
    })
  },
)

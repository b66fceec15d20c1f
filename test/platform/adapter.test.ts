/**
 * What the platform adapter adds to a plain REST mapping: typed errors rebuilt from the
 * platform's bodies, `_pcre` annotations kept off the wire, calls bound to a caller's
 * credentials, and an unreachable platform reported as a 503 store error.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { IllegalArgument, IndexNotFound, SearchContextMissing, StoreError, VersionConflict } from '../../src/store/errors'
import { openPlatformStore, storeErrorFrom, withoutPcre, type PlatformStore } from '../../src/store/platform'
import { startBarePlatform, type BarePlatform } from './bare-platform'
import { startRecordingProxy } from './recording-proxy'
import { basicAuth } from '../helpers/calls'

const basic = (name: string, password: string) => basicAuth({ name, password })
const READER = { name: 'reader', password: 'Reader-pass-1' }

let platform: BarePlatform
let proxy: ReturnType<typeof startRecordingProxy>
let store: PlatformStore
beforeAll(async () => {
  platform = await startBarePlatform([{ ...READER, backend_roles: ['nothing'] }])
  proxy = startRecordingProxy(platform.url)
  store = openPlatformStore({ url: proxy.url, username: platform.admin.name, password: platform.admin.password })
})
afterAll(async () => {
  await store.close()
  proxy.stop()
  await platform.stop()
})

describe('errors from the platform body', () => {
  test('a wrapper exception becomes the class of its cause, with the cause’s reason', () => {
    // As OpenSearch 2.x answers a sort on a text field.
    const e = storeErrorFrom(400, {
      error: {
        root_cause: [
          {
            type: 'illegal_argument_exception',
            reason: 'Text fields are not optimised for operations that require per-document field data',
          },
        ],
        type: 'search_phase_execution_exception',
        reason: 'all shards failed',
        phase: 'query',
        grouped: true,
        failed_shards: [],
        caused_by: {
          type: 'illegal_argument_exception',
          reason: 'Text fields are not optimised for operations that require per-document field data',
        },
      },
      status: 400,
    })
    expect(e).toBeInstanceOf(IllegalArgument)
    expect(e.status).toBe(400)
    expect(e.reason).toStartWith('Text fields are not optimised')
  })

  test('an expired PIT is search_context_missing_exception with 404', () => {
    const e = storeErrorFrom(404, {
      error: {
        root_cause: [{ type: 'search_context_missing_exception', reason: 'No search context found for id [1]' }],
        type: 'search_phase_execution_exception',
        reason: 'all shards failed',
      },
      status: 404,
    })
    expect(e).toBeInstanceOf(SearchContextMissing)
    expect(e.status).toBe(404)
  })

  test('metadata survives; unknown types keep their type; non-JSON answers keep their status', () => {
    const conflict = storeErrorFrom(409, {
      error: {
        root_cause: [],
        type: 'version_conflict_engine_exception',
        reason: '[1]: version conflict',
        index: 'locks',
        shard: '0',
        index_uuid: 'u',
      },
      status: 409,
    })
    expect(conflict).toBeInstanceOf(VersionConflict)
    expect(conflict.metadata).toEqual({ index: 'locks', shard: '0', index_uuid: 'u' })
    expect(conflict.toOpenSearch().type).toBe('version_conflict_engine_exception')
    const odd = storeErrorFrom(429, { error: { type: 'circuit_breaking_exception', reason: '[parent] Data too large' }, status: 429 })
    expect(odd.constructor).toBe(StoreError)
    expect([odd.type, odd.status]).toEqual(['circuit_breaking_exception', 429])
    const html = storeErrorFrom(502, '<html>Bad Gateway</html>')
    expect([html.type, html.status, html.reason]).toEqual(['platform_exception', 502, '<html>Bad Gateway</html>'])
  })
})

describe('on the wire', () => {
  test('_pcre annotations are stripped from searches and counts, nothing else is touched', async () => {
    await store.index({ index: 'logs', id: '1', body: { cmd: 'powershell -enc AAA' }, refresh: true })
    const regexp = { regexp: { 'cmd.keyword': { value: 'power.*', flags: 'NONE', _pcre: { pattern: '^power', flags: 'i' } } } }
    proxy.seen.length = 0
    const r = await store.search({ index: 'logs', body: { query: { bool: { filter: [regexp] } } } })
    expect(r.hits.hits.map((h) => h._id)).toEqual(['1'])
    expect((await store.count({ index: 'logs', body: { query: regexp } })).count).toBe(1)
    const sent = proxy.seen.filter((s) => s.path.startsWith('/logs/_search') || s.path.startsWith('/logs/_count'))
    expect(sent).toHaveLength(2)
    for (const s of sent) {
      expect(s.body).not.toContain('_pcre')
      expect(s.body).toContain('"value":"power.*"')
    }
    const untouched = { query: { term: { a: 1 } } }
    expect(withoutPcre(untouched)).toBe(untouched)
  })

  test('the service account signs its own calls; a caller-bound store signs with the caller’s header and gets the platform’s 403', async () => {
    await store.index({ index: 'private', id: '1', body: { x: 1 }, refresh: true })
    proxy.seen.length = 0
    const header = basic(READER.name, READER.password)
    const asReader = store.asCaller(header)
    const denied = await asReader.search({ index: 'private', body: {} }).catch((e) => e)
    expect(denied).toBeInstanceOf(StoreError)
    expect([denied.type, denied.status]).toEqual(['security_exception', 403])
    expect(proxy.seen.at(-1)!.authorization).toBe(header)
    await store.get({ index: 'private', id: '1' })
    expect(proxy.seen.at(-1)!.authorization).toBe(basic(platform.admin.name, platform.admin.password))
    // The bound store shares the connections: closing it leaves the service store working.
    await asReader.close()
    expect((await store.get({ index: 'private', id: '1' })).found).toBe(true)
  })

  test('index expressions travel percent-encoded and comma-joined; missing indices are typed', async () => {
    await store.createIndex({ index: 'a+b' })
    proxy.seen.length = 0
    expect(await store.resolve(['a+b', 'logs'])).toEqual(['a+b', 'logs'])
    expect(proxy.seen[0].path).toStartWith('/a%2Bb,logs/_settings')
    await expect(store.get({ index: 'nowhere', id: '1' })).rejects.toBeInstanceOf(IndexNotFound)
    await expect(store.delete({ index: 'nowhere', id: '1' })).rejects.toBeInstanceOf(IndexNotFound)
  })
})

test('an unreachable platform is a 503 store error that names no credentials', async () => {
  const port = Bun.serve({ port: 0, fetch: () => new Response() })
  const dead = `http://127.0.0.1:${port.port}`
  port.stop(true)
  const s = openPlatformStore({ url: dead, username: 'svc', password: 'Very-secret-1' })
  const e = await s.get({ index: 'x', id: '1' }).catch((e) => e)
  await s.close()
  expect(e).toBeInstanceOf(StoreError)
  expect([e.type, e.status]).toEqual(['platform_unavailable_exception', 503])
  expect(JSON.stringify({ ...e, message: e.message })).not.toContain('Very-secret-1')
})

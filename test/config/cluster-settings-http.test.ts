// PUT/GET /_cluster/settings for svc-ext's own settings, over HTTP, across restarts and nodes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../helpers/server'

const KEY = 'plugins.security_analytics.max_case_management_bulk_size'

describe('cluster settings API', () => {
  let s: TestServer
  beforeAll(async () => {
    s = await startTestServer()
  })
  afterAll(() => s.stop())

  test("invalid changes are a 400 naming the setting, in OpenSearch's error shape, and change nothing", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ persistent: { 'plugins.setup.timeout': 10 } }, 'not dynamically updateable'],
      [{ persistent: { [KEY]: 101 } }, 'from 0 to 100'],
      [{ persistent: { [KEY]: 'ten' } }, 'from 0 to 100'],
      [{ persistent: { 'plugins.content_manager.telemetry.enabled': 'perhaps' } }, 'true or false'],
      [{ transient: { 'plugins.content_manager.nonexistent': 1 } }, 'not recognized'],
      [{ persistent: { 'no.such.platform.key': 1 } }, 'not recognized'],
      [{ transient: { 'search.max_buckets': -1 } }, 'from 0 to'],
      [{ persistent: { 'point_in_time.max_keep_alive': 'forever' } }, 'must be'],
    ]
    for (const [body, words] of cases) {
      const r = await s.request('PUT', '/_cluster/settings', { body })
      expect(r.status).toBe(400)
      expect(r.body.status).toBe(400)
      expect(r.body.error.type).toBe('illegal_argument_exception')
      const key = Object.keys(Object.values(body)[0] as object)[0]
      expect(r.body.error.reason).toContain(`[${key}]`)
      expect(r.body.error.reason).toContain(words)
    }
    const current = await s.request('GET', '/_cluster/settings?flat_settings=true')
    expect(current.body.persistent).toEqual({})
    expect(current.body.transient).toEqual({})
  })

  test("OpenSearch's search limits are dynamic: a transient search.max_buckets governs the next aggregation", async () => {
    const docs = Array.from({ length: 20 }, (_, i) => `{"index":{}}\n{"k":"k${i}"}\n`).join('')
    expect(
      (await s.request('POST', '/buckets/_bulk?refresh=true', { body: docs, headers: { 'content-type': 'application/x-ndjson' } })).status,
    ).toBe(200)
    const aggs = { size: 0, aggs: { k: { terms: { field: 'k.keyword', size: 20 } } } }
    expect((await s.request('POST', '/buckets/_search', { body: aggs })).status).toBe(200)
    const put = await s.request('PUT', '/_cluster/settings', { body: { transient: { 'search.max_buckets': 10 } } })
    expect(put.status).toBe(200)
    expect(put.body.transient.search.max_buckets).toBe('10')
    // The store reads the limit without waiting on the settings cache: within its 1 s refresh.
    let r = await s.request('POST', '/buckets/_search', { body: aggs })
    for (let i = 0; i < 30 && r.status === 200; i++) {
      await Bun.sleep(100)
      r = await s.request('POST', '/buckets/_search', { body: aggs })
    }
    expect(r.body.error.type).toBe('too_many_buckets_exception')
    expect(r.body.error.reason).toContain('Must be less than or equal to: [10]')
    expect((await s.request('PUT', '/_cluster/settings', { body: { transient: { 'search.max_buckets': null } } })).status).toBe(200)
  })

  test('malformed bodies are a 400, never a 5xx', async () => {
    for (const body of ['{', '[]', '{"persistent": 3}', '{"persistent": [1]}']) {
      const r = await s.request('PUT', '/_cluster/settings', { body })
      expect(r.status).toBe(400)
    }
  })

  test('a valid change answers acknowledged with the applied values and is visible with include_defaults', async () => {
    const put = await s.request('PUT', '/_cluster/settings', { body: { persistent: { [KEY]: 20 } } })
    expect(put.status).toBe(200)
    expect(put.body.acknowledged).toBe(true)
    const flat = await s.request('GET', '/_cluster/settings?flat_settings=true&include_defaults=true')
    // OpenSearch answers setting values as strings.
    expect(flat.body.persistent[KEY]).toBe('20')
    expect(String(flat.body.defaults['plugins.setup.timeout'])).toBe('30')
    const nested = await s.request('GET', '/_cluster/settings')
    expect(nested.body.persistent.plugins.security_analytics.max_case_management_bulk_size).toBe('20')
    await s.request('PUT', '/_cluster/settings', { body: { persistent: { [KEY]: null } } })
  })

  test('only the admin may change cluster settings', async () => {
    const other = await startTestServer({ users: [{ name: 'reader', password: 'Reader-pass-1' }] })
    try {
      const r = await other.request('PUT', '/_cluster/settings', {
        body: { persistent: { [KEY]: 5 } },
        user: { name: 'reader', password: 'Reader-pass-1' },
      })
      expect(r.status).toBe(403)
    } finally {
      await other.stop()
    }
  })
})

describe('persistence', () => {
  test('persistent values survive a restart and are seen by a second node sharing the store', async () => {
    const a = await startTestServer()
    const dataDir = a.dataDir
    try {
      expect((await a.request('PUT', '/_cluster/settings', { body: { persistent: { [KEY]: 42 } } })).status).toBe(200)
      // A second node over the same data (the embedded store file) sees the value.
      const b = await startTestServer({ dataDir })
      try {
        const seen = await b.request('GET', '/_cluster/settings?flat_settings=true')
        expect(seen.body.persistent[KEY]).toBe('42')
        // And the value governs behaviour there: 43 findings are over the limit of 42.
        const findings = Array.from({ length: 43 }, (_, i) => ({
          _id: `f${i}`,
          _index: '.ds-svc-findings-v5-security-000001',
          case: { status: 'active' },
        }))
        const r = await b.request('PUT', '/_plugins/_security_analytics/findings/_update', { body: { findings } })
        expect(r.status).toBe(400)
        expect(r.body.message).toContain('42')
      } finally {
        await b.stop({ keepData: true })
      }
    } finally {
      await a.stop({ keepData: true })
    }
    const c = await startTestServer({ dataDir })
    try {
      const after = await c.request('GET', '/_cluster/settings?flat_settings=true')
      expect(after.body.persistent[KEY]).toBe('42')
    } finally {
      await c.stop()
    }
  })
})

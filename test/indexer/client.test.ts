// The official OpenSearch JavaScript client, used as an application uses it, against the
// embedded node over real HTTP: its helpers (bulk, scrollSearch, msearch) and the everyday calls
// of issue 16. A call the node answered in the wrong shape fails here through the client.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Client } from '@opensearch-project/opensearch'
import { PASSWORD, startIndexApi, type TestServer } from './helpers'

let api: TestServer
let client: Client

const N = 230

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  client = new Client({ node: api.url, auth: { username: 'admin', password: PASSWORD } })
  await client.indices.create({
    index: 'app-logs',
    body: { mappings: { properties: { at: { type: 'date' }, level: { type: 'keyword' }, n: { type: 'long' }, msg: { type: 'text' } } } },
  })
})

afterAll(async () => {
  await client?.close()
  await api?.stop()
})

describe('helpers', () => {
  test('bulk indexes every document', async () => {
    const levels = ['info', 'warn', 'error']
    const docs = Array.from({ length: N }, (_, i) => ({
      at: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString(),
      level: levels[i % 3],
      n: i,
      msg: `event number ${i}`,
    }))
    const stats = await client.helpers.bulk({
      datasource: docs,
      onDocument: (d: { n: number }) => ({ index: { _index: 'app-logs', _id: String(d.n) } }),
      refresh: 'true',
    } as never)
    expect(stats.successful).toBe(N)
    expect(stats.failed).toBe(0)
    expect((await client.count({ index: 'app-logs' })).body.count).toBe(N)
  })

  test('scrollSearch walks every document once and clears its context', async () => {
    const seen = new Set<string>()
    for await (const page of client.helpers.scrollSearch({ index: 'app-logs', size: 50, body: { query: { match_all: {} } } } as never)) {
      for (const hit of (page as any).body.hits.hits) seen.add(hit._id)
    }
    expect(seen.size).toBe(N)
    const docs: unknown[] = []
    for await (const d of client.helpers.scrollDocuments({
      index: 'app-logs',
      size: 100,
      body: { query: { term: { level: 'warn' } } },
    } as never))
      docs.push(d)
    expect(docs).toHaveLength(Math.floor(N / 3) + (N % 3 > 1 ? 1 : 0))
  })

  test('msearch helper answers each search', async () => {
    const m = client.helpers.msearch({ operations: 3, flushInterval: 20 })
    const [a, b] = await Promise.all([
      m.search({ index: 'app-logs' }, { query: { term: { level: 'error' } }, size: 1 }),
      m.search({ index: 'app-logs' }, { query: { range: { n: { lt: 10 } } }, size: 0 }),
    ])
    expect((a.body as any).hits.total.value).toBe(Math.floor(N / 3) + (N % 3 > 2 ? 1 : 0))
    expect((b.body as any).hits.total.value).toBe(10)
    m.stop()
  })
})

describe('everyday calls', () => {
  test('mget, msearch, scroll/clearScroll, explain', async () => {
    const mget = await client.mget({ index: 'app-logs', body: { ids: ['1', '2', 'nope'] } })
    expect(mget.body.docs.map((d: any) => d.found)).toEqual([true, true, false])
    const ms = await client.msearch({ body: [{ index: 'app-logs' }, { query: { term: { n: 5 } } }] })
    expect((ms.body.responses[0] as any).hits.hits[0]._id).toBe('5')
    const first: any = await client.search({ index: 'app-logs', scroll: '1m', size: 100, body: { sort: [{ n: 'desc' }] } } as never)
    expect(first.body.hits.hits[0]._source.n).toBe(N - 1)
    const next = await client.scroll({ body: { scroll_id: first.body._scroll_id, scroll: '1m' } })
    expect(next.body.hits.hits[0]._source.n).toBe(N - 101)
    const cleared = await client.clearScroll({ body: { scroll_id: first.body._scroll_id } })
    expect(cleared.body.num_freed).toBe(1)
    const ex = await client.explain({ index: 'app-logs', id: '7', body: { query: { term: { level: 'warn' } } } })
    expect(ex.body.matched).toBe(true)
  })

  test('aggregations a dashboard charts', async () => {
    const r: any = await client.search({
      index: 'app-logs',
      body: {
        size: 0,
        aggs: {
          per_day: {
            date_histogram: { field: 'at', calendar_interval: 'day' },
            aggs: { levels: { terms: { field: 'level' } }, p: { percentiles: { field: 'n', percents: [50] } } },
          },
          st: { stats: { field: 'n' } },
          r: { range: { field: 'n', ranges: [{ to: 100 }, { from: 100 }] } },
          f: { filters: { filters: { errors: { term: { level: 'error' } } } } },
          top: { top_hits: { size: 1, sort: [{ n: 'desc' }] } },
          comp: { composite: { size: 5, sources: [{ level: { terms: { field: 'level' } } }] } },
        },
      },
    } as never)
    const a = r.body.aggregations as any
    expect(a.per_day.buckets).toHaveLength(Math.ceil(N / 24))
    expect(a.per_day.buckets[0].doc_count).toBe(24)
    expect(a.st.count).toBe(N)
    expect(a.r.buckets.map((b: any) => b.doc_count)).toEqual([100, N - 100])
    expect(a.top.hits.hits[0]._id).toBe(String(N - 1))
    expect(a.comp.buckets.map((b: any) => b.key.level)).toEqual(['error', 'info', 'warn'])
  })

  test('introspection', async () => {
    const caps = await client.fieldCaps({ index: 'app-logs', fields: 'level,n' })
    expect(caps.body.fields.level.keyword.aggregatable).toBe(true)
    const none = await client.fieldCaps({ index: 'app-*', fields: '*', body: { index_filter: { term: { level: 'nope' } } } } as never)
    expect((none.body as any).indices).toEqual([])
    const some = await client.fieldCaps({ index: 'app-*', fields: 'level', body: { index_filter: { term: { level: 'warn' } } } } as never)
    expect((some.body as any).indices).toEqual(['app-logs'])
    const fm = await client.indices.getFieldMapping({ index: 'app-logs', fields: 'msg' })
    expect(fm.body['app-logs'].mappings.msg.mapping.msg.type).toBe('text')
    const resolved = await client.indices.resolveIndex({ name: 'app-*' })
    expect(resolved.body.indices.map((i: any) => i.name)).toEqual(['app-logs'])
    const count = await client.cat.count({ index: 'app-logs', format: 'json' })
    expect(Number((count.body as any)[0].count)).toBe(N)
    expect((await client.cat.health({ format: 'json' })).body).toHaveLength(1)
    expect((await client.cat.shards({ index: 'app-logs', format: 'json' })).body.length).toBeGreaterThan(0)
    expect((await client.cat.templates({ format: 'json' })).statusCode).toBe(200)
    expect((await client.cat.plugins({ format: 'json' })).statusCode).toBe(200)
    const nodes = await client.nodes.info()
    expect(Object.keys(nodes.body.nodes)).toHaveLength(1)
    const nstats = await client.nodes.stats({ metric: ['indices'] })
    expect((Object.values(nstats.body.nodes)[0] as any).indices.docs.count).toBeGreaterThanOrEqual(N)
    const cstats = await client.cluster.stats()
    expect(cstats.body.indices!.docs!.count).toBeGreaterThanOrEqual(N)
    const state = await client.cluster.state({ metric: ['metadata'], index: 'app-logs' })
    expect(state.body.metadata.indices['app-logs'].mappings).toBeDefined()
    const istats = await client.indices.stats({ index: 'app-logs' })
    expect(istats.body.indices!['app-logs']).toBeDefined()
  })

  test('query_string, writes by query, reindex and tasks', async () => {
    const q = await client.search({ index: 'app-logs', q: 'level:error AND n:<30' } as never)
    expect((q.body as any).hits.total.value).toBe(10)
    const sq = await client.search({
      index: 'app-logs',
      body: { query: { simple_query_string: { query: '"number 7"', fields: ['msg'] } } },
    } as never)
    expect((sq.body as any).hits.hits.map((h: any) => h._id)).toEqual(['7'])
    const ubq = await client.updateByQuery({
      index: 'app-logs',
      refresh: true,
      body: { query: { term: { level: 'warn' } }, script: { source: 'ctx._source.seen = params.v', params: { v: true } } },
    } as never)
    expect((ubq.body as any).updated).toBe(Math.floor(N / 3) + (N % 3 > 1 ? 1 : 0))
    const re = await client.reindex({
      refresh: true,
      body: { source: { index: 'app-logs', query: { exists: { field: 'seen' } } }, dest: { index: 'app-warn' } },
    } as never)
    expect((re.body as any).created).toBe((ubq.body as any).updated)
    const task = await client.deleteByQuery({
      index: 'app-warn',
      wait_for_completion: false,
      refresh: true,
      body: { query: { range: { n: { lt: 100 } } } },
    } as never)
    const id = (task.body as any).task as string
    let t: any
    for (let i = 0; i < 50; i++) {
      t = (await client.tasks.get({ task_id: id })).body
      if (t.completed) break
      await Bun.sleep(20)
    }
    expect(t.response.deleted).toBe(33)
  })

  test('an auto-id write to a data stream', async () => {
    await client.indices.putIndexTemplate({ name: 'ds-tpl', body: { index_patterns: ['metrics-*'], data_stream: {}, priority: 10 } })
    const res = await client.index({ index: 'metrics-app', body: { '@timestamp': new Date().toISOString(), v: 1 } })
    expect(res.body.result).toBe('created')
  })
})

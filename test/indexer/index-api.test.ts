// What the OpenSearch YAML suite cannot cover: authorization on concrete indices, document-level
// security on every read path, hidden indices, and the error shapes of malformed input.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

const ROLES = `
_meta: { type: roles, config_version: 2 }
logs_reader:
  index_permissions:
    - index_patterns: ["logs-*"]
      allowed_actions: ["read", "indices:monitor/stats", "indices:admin/aliases/get"]
    - index_patterns: ["shared"]
      allowed_actions: ["read"]
      dls: '{"term": {"owner": "\${user.name}"}}'
logs_writer:
  index_permissions:
    - index_patterns: ["logs-*"]
      allowed_actions: ["write", "create_index"]
`

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({
    roles: ROLES,
    users: {
      admin: { roles: ['all_access'] },
      alice: { roles: ['logs_reader'] },
      bob: { roles: ['logs_reader'] },
      writer: { roles: ['logs_writer'] },
    },
  })
  await ok(api.call('admin', 'PUT', '/shared', { mappings: { properties: { owner: { type: 'keyword' }, n: { type: 'long' } } } }))
  await ok(api.call('admin', 'PUT', '/logs-a', { mappings: { properties: { owner: { type: 'keyword' } } } }))
  await ok(api.call('admin', 'PUT', '/secret', {}))
  await ok(
    api.call(
      'admin',
      'POST',
      '/_bulk?refresh=true',
      [
        { index: { _index: 'shared', _id: 's1' } },
        { owner: 'alice', n: 1 },
        { index: { _index: 'shared', _id: 's2' } },
        { owner: 'alice', n: 2 },
        { index: { _index: 'shared', _id: 's3' } },
        { owner: 'bob', n: 3 },
        { index: { _index: 'logs-a', _id: 'l1' } },
        { owner: 'bob' },
        { index: { _index: 'logs-a', _id: 'l2' } },
        { owner: 'carol' },
        { index: { _index: 'secret', _id: 'x1' } },
        { owner: 'alice' },
      ]
        .map((l) => JSON.stringify(l) + '\n')
        .join(''),
    ),
  )
  await ok(
    api.call('admin', 'POST', '/_aliases', {
      actions: [
        { add: { index: 'logs-a', alias: 'plain-alias' } },
        { add: { index: 'secret', alias: 'logs-evil' } },
        { add: { index: 'logs-a', alias: 'mixed' } },
        { add: { index: 'secret', alias: 'mixed' } },
      ],
    }),
  )
})

afterAll(async () => {
  await api?.stop()
})

const ids = (body: any) => body.hits.hits.map((h: any) => h._id).sort()

describe('document-level security', () => {
  test('_search and _count see only the caller’s documents', async () => {
    expect(ids(await ok(api.call('alice', 'GET', '/shared/_search')))).toEqual(['s1', 's2'])
    expect(ids(await ok(api.call('bob', 'POST', '/shared/_search', { query: { range: { n: { gte: 0 } } } })))).toEqual(['s3'])
    expect((await ok(api.call('alice', 'GET', '/shared/_count'))).count).toBe(2)
    expect((await ok(api.call('alice', 'POST', '/shared/_count', { query: { term: { owner: 'bob' } } }))).count).toBe(0)
    expect((await ok(api.call('admin', 'GET', '/shared/_count'))).count).toBe(3)
  })

  test('aggregations run over the filtered documents only', async () => {
    const body = await ok(api.call('alice', 'POST', '/shared/_search', { size: 0, aggs: { owners: { terms: { field: 'owner' } } } }))
    expect(body.aggregations.owners.buckets).toEqual([{ key: 'alice', doc_count: 2 }])
  })

  test('GET _doc of another user’s document answers as missing', async () => {
    expect((await ok(api.call('alice', 'GET', '/shared/_doc/s1')))._source.owner).toBe('alice')
    const other = await api.call('alice', 'GET', '/shared/_doc/s3')
    expect(other.status).toBe(404)
    expect(other.body.found).toBe(false)
    expect((await api.call('alice', 'GET', '/shared/_source/s3')).status).toBe(404)
    expect((await api.call('alice', 'HEAD', '/shared/_doc/s3')).status).toBe(404)
    // The filter is tested on the whole document even when the caller hides fields from the answer.
    expect((await api.call('alice', 'GET', '/shared/_doc/s3?_source=n')).status).toBe(404)
    expect((await ok(api.call('alice', 'GET', '/shared/_doc/s2?_source=n')))._source).toEqual({ n: 2 })
  })

  test('searches with a point in time keep the filter', async () => {
    const pit = await ok(api.call('alice', 'POST', '/shared/_search/point_in_time?keep_alive=1m'))
    const body = await ok(api.call('alice', 'POST', '/_search', { pit: { id: pit.pit_id }, sort: [{ n: 'asc' }] }))
    expect(ids(body)).toEqual(['s1', 's2'])
    await ok(api.call('alice', 'DELETE', '/_search/point_in_time', { pit_id: [pit.pit_id] }))
  })

  test('a search over indices with different filters scopes each filter to its index', async () => {
    expect(ids(await ok(api.call('alice', 'GET', '/logs-a,shared/_search')))).toEqual(['l1', 'l2', 's1', 's2'])
  })
})

describe('index permissions on concrete indices', () => {
  test('wildcards and aliases are resolved before authorization', async () => {
    expect((await ok(api.call('alice', 'GET', '/logs-a/_search'))).hits.hits.length).toBe(2)
    // An alias whose name the role does not cover, over an index it does: allowed.
    expect(ids(await ok(api.call('alice', 'GET', '/plain-alias/_search')))).toEqual(['l1', 'l2'])
    // An alias whose name matches the role's pattern, over an index it does not: refused.
    // `logs-*` also expands to the alias `logs-evil`, hence to `secret`: refused as a whole.
    for (const path of [
      '/logs-*/_search',
      '/logs-evil/_search',
      '/secret/_search',
      '/mixed/_search',
      '/*/_search',
      '/_search',
      '/secret/_doc/x1',
    ]) {
      const res = await api.call('alice', 'GET', path)
      expect(res.status, path).toBe(403)
      expect(res.body.error.type).toBe('security_exception')
      expect(res.body.error.reason).toContain('alice')
    }
  })

  test('bulk authorizes every item on its own index', async () => {
    const lines = [
      { index: { _index: 'logs-b', _id: 'w1' } },
      { owner: 'w' },
      { index: { _index: 'secret', _id: 'w2' } },
      { owner: 'w' },
      { delete: { _index: 'logs-a', _id: 'l1' } },
    ]
    const body = await ok(api.call('writer', 'POST', '/_bulk', lines.map((l) => JSON.stringify(l) + '\n').join('')))
    expect(body.errors).toBe(true)
    expect(body.items[0].index.status).toBe(201)
    expect(body.items[1].index.status).toBe(403)
    expect(body.items[1].index.error.type).toBe('security_exception')
    // `write` includes delete; the item reaches the store.
    expect(body.items[2].delete.status).toBe(200)
    expect((await api.call('admin', 'GET', '/secret/_doc/w2')).status).toBe(404)
    await ok(api.call('admin', 'PUT', '/logs-a/_doc/l1?refresh=true', { owner: 'bob' }), 201)
  })

  test('writers cannot read; readers cannot write or delete indices', async () => {
    expect((await api.call('writer', 'GET', '/logs-a/_search')).status).toBe(403)
    expect((await api.call('alice', 'PUT', '/logs-a/_doc/z', { a: 1 })).status).toBe(403)
    expect((await api.call('alice', 'DELETE', '/logs-a')).status).toBe(403)
    expect(
      (await api.call('alice', 'PUT', '/_cluster/settings', { transient: { 'cluster.routing.allocation.enable': 'none' } })).status,
    ).toBe(403)
  })

  test('no credentials: 401 with a Basic challenge', async () => {
    const res = await api.call(undefined, 'GET', '/shared/_search')
    expect(res.status).toBe(401)
    expect(res.headers.get('www-authenticate')).toContain('Basic')
  })
})

describe('hidden indices', () => {
  beforeAll(async () => {
    await ok(api.call('admin', 'PUT', '/.hidden-one', { settings: { index: { hidden: true } } }))
    await ok(api.call('admin', 'PUT', '/.hidden-one/_doc/h1?refresh=true', { owner: 'h' }), 201)
  })

  test('wildcards skip hidden indices unless expand_wildcards asks for them', async () => {
    const plain = await ok(api.call('admin', 'GET', '/*/_search?size=100'))
    expect(plain.hits.hits.some((h: any) => h._index === '.hidden-one')).toBe(false)
    const all = await ok(api.call('admin', 'GET', '/*/_search?size=100&expand_wildcards=all'))
    expect(all.hits.hits.some((h: any) => h._index === '.hidden-one')).toBe(true)
    const cat = await ok(api.call('admin', 'GET', '/_cat/indices?format=json'))
    expect(cat.map((r: any) => r.index)).not.toContain('.hidden-one')
    const catAll = await ok(api.call('admin', 'GET', '/_cat/indices?format=json&expand_wildcards=all'))
    expect(catAll.map((r: any) => r.index)).toContain('.hidden-one')
    // Named explicitly, a hidden index is always reachable.
    expect((await ok(api.call('admin', 'GET', '/.hidden-one/_count'))).count).toBe(1)
  })
})

describe('errors in OpenSearch’s shape', () => {
  test('typed store errors keep their type, status and metadata', async () => {
    const missing = await api.call('admin', 'GET', '/nope/_doc/1')
    expect(missing.status).toBe(404)
    expect(missing.body.status).toBe(404)
    expect(missing.body.error.type).toBe('index_not_found_exception')
    expect(missing.body.error.root_cause[0].type).toBe('index_not_found_exception')
    expect(missing.body.error.index).toBe('nope')

    const exists = await api.call('admin', 'PUT', '/shared', {})
    expect(exists.status).toBe(400)
    expect(exists.body.error.type).toBe('resource_already_exists_exception')

    const conflict = await api.call('admin', 'PUT', '/shared/_doc/s1?if_seq_no=9999&if_primary_term=1', { owner: 'alice' })
    expect(conflict.status).toBe(409)
    expect(conflict.body.error.type).toBe('version_conflict_engine_exception')

    const create = await api.call('admin', 'PUT', '/shared/_create/s1', { owner: 'alice' })
    expect(create.status).toBe(409)
  })

  test('malformed input is a 400, never a 5xx', async () => {
    const cases: Array<[string, string, unknown, string?]> = [
      ['POST', '/shared/_search', '{"query": ', 'parse_exception'],
      ['POST', '/shared/_search', '[1, 2]'],
      ['POST', '/shared/_search', { query: { no_such_query: {} } }],
      ['POST', '/shared/_search', { query: 'text' }],
      ['POST', '/shared/_search', { match: { owner: 'x' } }, 'parsing_exception'],
      ['POST', '/shared/_search', { size: -1 }],
      ['POST', '/shared/_search', { from: 'x' }],
      ['GET', '/shared/_search?size=abc', undefined],
      ['GET', '/shared/_search?track_total_hits=-2', undefined],
      ['PUT', '/shared/_doc/1?refresh=maybe', { a: 1 }],
      ['PUT', '/shared/_doc/1?if_seq_no=x&if_primary_term=1', { a: 1 }],
      ['PUT', '/shared/_doc/1', '{"a": '],
      ['PUT', '/shared/_doc/1', '"just a string"'],
      ['PUT', '/shared/_doc/' + 'x'.repeat(600), { a: 1 }],
      ['POST', '/shared/_update/s1', { dac: {} }, 'x_content_parse_exception'],
      ['POST', '/shared/_update/s1', { doc: 5 }],
      ['POST', '/_bulk', '{"index": {"_index": "shared"}}\n{"a": \n'],
      ['POST', '/_bulk', '{"frobnicate": {"_index": "shared"}}\n{}\n'],
      ['POST', '/_bulk', 'not json at all\n'],
      ['POST', '/_bulk', '{"index": {"_index": "shared"}}\n'],
      ['POST', '/_bulk', '{"index": {"_index": "shared", "bogus": 1}}\n{}\n'],
      ['POST', '/_bulk', ''],
      ['POST', '/_aliases', { actions: [{ explode: {} }] }],
      ['POST', '/_aliases', { actions: 'no' }],
      ['PUT', '/bad-index-body', { settings: 5 }],
      ['PUT', '/bad-index-body', { unknown_key: {} }],
      ['PUT', '/_index_template/t1', { index_patterns: 5 }],
      ['PUT', '/_cluster/settings', { persistent: { 'no.such.setting': 1 } }],
      ['PUT', '/_cluster/settings', { nonsense: {} }],
      ['GET', '/_cat/indices?format=xml', undefined],
      ['GET', '/_cat/indices?s=nocolumn', undefined],
      ['GET', '/_cluster/health?level=galaxy', undefined],
      ['GET', '/shared/_search?expand_wildcards=sideways', undefined],
      ['POST', '/shared/_count', { query: { term: {} } }],
      ['DELETE', '/_search/point_in_time', { pit_id: 7 }],
    ]
    for (const [method, path, body, type] of cases) {
      const res = await api.call('admin', method, path, body)
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400)
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}: ${res.text}`).toBeLessThan(500)
      expect(res.body.error?.type, `${method} ${path}`).toBeString()
      expect(res.body.status).toBe(res.status)
      if (type) expect(res.body.error.type, `${method} ${path}`).toBe(type)
    }
  })

  test('bulk errors name the offending line', async () => {
    const res = await api.call('admin', 'POST', '/_bulk', '{"index": {"_index": "shared"}}\n{"a": 1}\n{}\n')
    expect(res.status).toBe(400)
    expect(res.body.error.reason).toBe('Malformed action/metadata line [3], expected FIELD_NAME but found [END_OBJECT]')
  })
})

describe('cluster routes', () => {
  test('GET / claims the OpenSearch version and names our product', async () => {
    const body = await ok(api.call('admin', 'GET', '/'))
    expect(body.version.number).toBe('3.6.0')
    expect(body.version.distribution).toBe('svc-ext')
    expect(body.svc_version).toMatch(/^\d+\.\d+\.\d+/)
    expect(body.cluster_name).toBe('test-cluster')
    expect((await api.call('admin', 'HEAD', '/')).status).toBe(200)
  })

  test('cluster settings: put, read flat and nested, reset', async () => {
    const put = await ok(
      api.call('admin', 'PUT', '/_cluster/settings?flat_settings=true', { transient: { 'cluster.routing.allocation.enable': 'none' } }),
    )
    expect(put.transient).toEqual({ 'cluster.routing.allocation.enable': 'none' })
    expect((await ok(api.call('admin', 'GET', '/_cluster/settings'))).transient).toEqual({
      cluster: { routing: { allocation: { enable: 'none' } } },
    })
    await ok(api.call('admin', 'PUT', '/_cluster/settings', { transient: { 'cluster.*': null } }))
    expect((await ok(api.call('admin', 'GET', '/_cluster/settings?flat_settings=true'))).transient).toEqual({})
  })

  test('health waits for a status it can reach and times out with 408 otherwise', async () => {
    await ok(api.call('admin', 'PUT', '/replicated', { settings: { number_of_replicas: 1 } }))
    const yellow = await ok(api.call('admin', 'GET', '/_cluster/health/replicated?wait_for_status=yellow'))
    expect(yellow.status).toBe('yellow')
    const t0 = Date.now()
    const timeout = await api.call('admin', 'GET', '/_cluster/health/replicated?wait_for_status=green&timeout=300ms')
    expect(timeout.status).toBe(408)
    expect(timeout.body.timed_out).toBe(true)
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250)
  })
})

describe('conformance details over HTTP', () => {
  test('a PIT opened through another node is authorized on the indices it was opened on', async () => {
    // Opened on the Store directly: this server's routes never saw it being created.
    const mine = await api.store.createPit({ index: 'logs-a', keep_alive: '1m' })
    const theirs = await api.store.createPit({ index: 'secret', keep_alive: '1m' })
    const body = await ok(api.call('alice', 'POST', '/_search', { pit: { id: mine.pit_id }, sort: [{ _id: 'asc' }] }))
    expect(ids(body)).toEqual(['l1', 'l2'])
    const refused = await api.call('alice', 'POST', '/_search', { pit: { id: theirs.pit_id } })
    expect(refused.status).toBe(403)
    expect((await api.call('alice', 'DELETE', '/_search/point_in_time', { pit_id: theirs.pit_id })).status).toBe(403)
    await ok(api.call('alice', 'DELETE', '/_search/point_in_time', { pit_id: mine.pit_id }))
    const listed = await ok(api.call('admin', 'GET', '/_search/point_in_time/_all'))
    expect(listed.pits.map((p: any) => [p.pit_id, p.indices])).toEqual([[theirs.pit_id, ['secret']]])
    await ok(api.call('admin', 'DELETE', '/_search/point_in_time/_all'))
  })

  test('GET _doc with stored_fields; _update with _source filters in the URL', async () => {
    await ok(api.call('admin', 'PUT', '/stored', { mappings: { properties: { count: { type: 'integer', store: true } } } }))
    await ok(api.call('admin', 'PUT', '/stored/_doc/1', { count: 1, other: 'x' }), 201)
    const got = await ok(api.call('admin', 'GET', '/stored/_doc/1?stored_fields=count'))
    expect(got.fields).toEqual({ count: [1] })
    expect(got._source).toBeUndefined()
    expect((await ok(api.call('admin', 'GET', '/stored/_doc/1?stored_fields=count&_source=true')))._source).toEqual({
      count: 1,
      other: 'x',
    })
    const updated = await ok(api.call('admin', 'POST', '/stored/_update/1?_source_includes=other', { doc: { other: 'y' } }))
    expect(updated.get._source).toEqual({ other: 'y' })
    expect((await ok(api.call('admin', 'POST', '/stored/_update/1?_source=count', { doc: { other: 'z' } }))).get._source).toEqual({
      count: 1,
    })
  })

  test('closing and opening indices: 400 index_closed_exception in between, close rows in _cat', async () => {
    await ok(api.call('admin', 'PUT', '/closable', { settings: { number_of_shards: 3, number_of_replicas: 0 } }))
    await ok(api.call('admin', 'PUT', '/closable/_doc/1?refresh=true', { a: 1 }), 201)
    expect((await api.call('alice', 'POST', '/closable/_close')).status).toBe(403)
    expect(await ok(api.call('admin', 'POST', '/closable/_close'))).toEqual({
      acknowledged: true,
      shards_acknowledged: true,
      indices: { closable: { closed: true } },
    })
    for (const [method, path] of [
      ['GET', '/closable/_doc/1'],
      ['GET', '/closable/_search'],
      ['PUT', '/closable/_doc/2'],
    ] as const) {
      const res = await api.call('admin', method, path, method === 'PUT' ? { a: 2 } : undefined)
      expect(res.status, path).toBe(400)
      expect(res.body.error.type).toBe('index_closed_exception')
      expect(res.body.error.index).toBe('closable')
    }
    // Text rows of closed indices end in the blanks of their empty statistics, like OpenSearch's.
    expect((await api.call('admin', 'GET', '/_cat/indices/closable')).text).toMatch(/^green close closable [\w-]{22} 3 0    \n$/)
    await ok(api.call('admin', 'POST', '/closable/_open'))
    expect((await ok(api.call('admin', 'GET', '/closable/_doc/1')))._source).toEqual({ a: 1 })
    expect((await api.call('admin', 'GET', '/_cat/indices/closable?h=status')).text).toBe('open\n')
  })

  test('_forcemerge and _cache/clear answer their shards (forcemerge flushes: it counts as one); unknown indices are a 404, strangers a 403', async () => {
    const before = await ok(api.call('admin', 'GET', '/shared/_stats/flush'))
    const merged = await ok(api.call('admin', 'POST', '/shared/_forcemerge?max_num_segments=1'))
    expect(merged._shards).toMatchObject({ failed: 0, successful: 1 })
    const after = await ok(api.call('admin', 'GET', '/shared/_stats/flush'))
    expect(after.indices.shared.primaries.flush.total).toBe(before.indices.shared.primaries.flush.total + 1)
    expect((await ok(api.call('admin', 'POST', '/shared/_cache/clear?request=true')))._shards.failed).toBe(0)
    expect((await api.call('admin', 'POST', '/nope/_forcemerge')).status).toBe(404)
    expect((await api.call('admin', 'POST', '/shared/_forcemerge?max_num_segments=x')).status).toBe(400)
    expect((await api.call('alice', 'POST', '/secret/_forcemerge')).status).toBe(403)
    expect((await api.call('alice', 'POST', '/secret/_cache/clear')).status).toBe(403)
  })

  test('indices stats: docs, store and flush per index and in total; unknown metrics are a 400', async () => {
    await ok(api.call('admin', 'POST', '/shared/_flush'))
    const stats = await ok(api.call('admin', 'GET', '/shared,logs-a/_stats'))
    expect(stats.indices.shared.primaries.docs.count).toBe(3)
    expect(stats.indices.shared.primaries.flush.total).toBeGreaterThanOrEqual(1)
    expect(stats.indices.shared.uuid).toMatch(/^[\w-]{22}$/)
    expect(stats._all.primaries.docs.count).toBe(3 + stats.indices['logs-a'].primaries.docs.count)
    expect(stats._all.total.store.size_in_bytes).toBe(
      stats.indices.shared.total.store.size_in_bytes + stats.indices['logs-a'].total.store.size_in_bytes,
    )
    const docsOnly = await ok(api.call('admin', 'GET', '/shared/_stats/docs'))
    expect(Object.keys(docsOnly.indices.shared.primaries)).toEqual(['docs'])
    expect((await api.call('admin', 'GET', '/shared/_stats/bogus')).status).toBe(400)
    expect((await api.call('alice', 'GET', '/secret/_stats')).status).toBe(403)
  })

  test('_cat columns asked for twice (by alias and by name) are shown twice', async () => {
    const text = (await api.call('admin', 'GET', '/_cat/indices/shared?h=i,cd,creation.date,dc')).text
    const [index, cd, creation, docs] = text.trim().split(/\s+/)
    expect(index).toBe('shared')
    expect(cd).toMatch(/^\d{13}$/)
    expect(creation).toBe(cd)
    expect(docs).toBe('3')
    const sized = await ok(api.call('admin', 'GET', '/_cat/indices/shared?format=json&h=index,store.size&bytes=b'))
    expect(Number(sized[0]['store.size'])).toBeGreaterThan(0)
  })
})

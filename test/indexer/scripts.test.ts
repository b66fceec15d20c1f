// Painless compound assignments in `_update_by_query` and scripted `_update`, over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const src = async (id: string, index = 'nums') => (await ok(api.call('admin', 'GET', `/${index}/_doc/${id}`)))._source

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(api.call('admin', 'PUT', '/nums', { mappings: { properties: { n: { type: 'long' }, s: { type: 'keyword' } } } }))
  await ok(api.call('admin', 'PUT', '/nums/_doc/1?refresh=true', { n: 5, s: 'a', x: 7.5 }), 201)
})
afterAll(async () => {
  await api?.stop()
})

describe('compound assignment', () => {
  test('+=, -=, *=, /=, %=, ++ and -- in _update_by_query', async () => {
    await ok(api.call('admin', 'POST', '/nums/_update_by_query?refresh=true', { script: { source: 'ctx._source.n += 10' } }))
    expect((await src('1')).n).toBe(15)
    await ok(
      api.call('admin', 'POST', '/nums/_update_by_query?refresh=true', {
        script: {
          source: 'ctx._source.n -= params.d; ctx._source.n *= 3; ctx._source.n /= 4; ctx._source.s += "b"; ctx._source.x %= 2',
          params: { d: 3 },
        },
      }),
    )
    const s = await src('1')
    expect(s.n).toBe(9) // (15 - 3) * 3 / 4, integer division
    expect(s.s).toBe('ab')
    expect(s.x).toBe(1.5)
    await ok(
      api.call('admin', 'POST', '/nums/_update_by_query?refresh=true', { script: 'ctx._source.n++; ++ctx._source.n; ctx._source.n--' }),
    )
    expect((await src('1')).n).toBe(10)
  })

  test('scripted _update: += on the stored document, upsert, missing document', async () => {
    const r = await ok(api.call('admin', 'POST', '/nums/_update/1', { script: { source: 'ctx._source.n += params.k', params: { k: 5 } } }))
    expect(r.result).toBe('updated')
    expect((await src('1')).n).toBe(15)
    await ok(api.call('admin', 'POST', '/nums/_update/2', { script: 'ctx._source.n += 1', upsert: { n: 1 } }), 201)
    expect((await src('2')).n).toBe(1)
    await ok(api.call('admin', 'POST', '/nums/_update/2', { script: 'ctx._source.n += 1', upsert: { n: 1 } }))
    expect((await src('2')).n).toBe(2)
    // scripted_upsert: the missing document's upsert goes through the script (OpenSearch 3.4: created, n = 5).
    await ok(api.call('admin', 'POST', '/nums/_update/up', { scripted_upsert: true, script: 'ctx._source.n = 5', upsert: {} }), 201)
    expect((await src('up')).n).toBe(5)
    const missing = await api.call('admin', 'POST', '/nums/_update/nope', { script: 'ctx._source.n += 1' })
    expect(missing.status).toBe(404)
    expect(missing.body.error.type).toBe('document_missing_exception')
  })

  test('list.add(value) appends; on a missing or non-list field it is a runtime error', async () => {
    await ok(api.call('admin', 'PUT', '/nums/_doc/3?refresh=true', { tags: ['a'] }), 201)
    await ok(
      api.call('admin', 'POST', '/nums/_update/3', {
        script: { source: 'ctx._source.tags.add(params.t); ctx._source.tags.add("c")', params: { t: 'b' } },
      }),
    )
    expect((await src('3')).tags).toEqual(['a', 'b', 'c'])
    const missing = await api.call('admin', 'POST', '/nums/_update/3', { script: 'ctx._source.nope.add(1)' })
    expect(missing.status).toBe(400)
    expect(missing.body.error.caused_by.caused_by.type).toBe('null_pointer_exception')
  })

  test('arithmetic on a missing field and bad syntax answer 400 script_exception (under failed to execute script, for an update)', async () => {
    const npe = await api.call('admin', 'POST', '/nums/_update/1', { script: 'ctx._source.missing += 1' })
    expect(npe.status).toBe(400)
    expect([npe.body.error.type, npe.body.error.reason]).toEqual(['illegal_argument_exception', 'failed to execute script'])
    expect(npe.body.error.root_cause).toEqual([{ type: 'illegal_argument_exception', reason: 'failed to execute script' }])
    expect(npe.body.error.caused_by.type).toBe('script_exception')
    expect(npe.body.error.caused_by.caused_by.type).toBe('null_pointer_exception')
    const bad = await api.call('admin', 'POST', '/nums/_update_by_query', { script: 'ctx._source.n ^= 1' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.type).toBe('script_exception')
  })

  test('_bulk update items with a script run as _update runs them, in order with the items around them', async () => {
    const lines = [
      { index: { _index: 'bulked', _id: '1' } },
      { n: 1, tags: ['a'] },
      { update: { _index: 'bulked', _id: '1' } },
      { script: { source: 'ctx._source.n += params.k', params: { k: 5 } } },
      { update: { _index: 'bulked', _id: '1', _source: true } },
      { script: "ctx._source.tags.add('b')" },
      { update: { _index: 'bulked', _id: '2' } },
      { script: 'ctx._source.n = 1', upsert: { n: 0 } },
      { update: { _index: 'bulked', _id: '3' } },
      { script: 'ctx._source.n = 7', upsert: {}, scripted_upsert: true },
      { update: { _index: 'bulked', _id: 'nope' } },
      { script: 'ctx._source.n = 1' },
      { update: { _index: 'bulked', _id: '1' } },
      { script: 'ctx._source.tags += 2' },
      { update: { _index: 'bulked', _id: '1', if_seq_no: 0, if_primary_term: 1 } },
      { script: 'ctx._source.n = 9' },
      { index: { _index: 'bulked', _id: '4' } },
      { n: 4 },
    ]
    const r = await api.call('admin', 'POST', '/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
    expect(r.status).toBe(200)
    const items = r.body.items.map((i: any) => Object.values(i)[0])
    // As OpenSearch 3.4 answered the same bulk.
    expect(items.map((i: any) => [i.status, i.result ?? i.error.type])).toEqual([
      [201, 'created'],
      [200, 'updated'],
      [200, 'updated'],
      [201, 'created'],
      [201, 'created'],
      [404, 'document_missing_exception'],
      [400, 'illegal_argument_exception'],
      [409, 'version_conflict_engine_exception'],
      [201, 'created'],
    ])
    expect(items[2].get._source).toEqual({ n: 6, tags: ['a', 'b'] })
    expect(items[6].error.caused_by.caused_by.type).toBe('class_cast_exception')
    const docs = await api.call('admin', 'POST', '/bulked/_search', { sort: ['_id'] })
    expect(docs.body.hits.hits.map((h: any) => [h._id, h._source])).toEqual([
      ['1', { n: 6, tags: ['a', 'b'] }],
      ['2', { n: 0 }],
      ['3', { n: 7 }],
      ['4', { n: 4 }],
    ])
    const both = await api.call(
      'admin',
      'POST',
      '/_bulk',
      '{"update":{"_index":"bulked","_id":"1"}}\n{"script":"ctx._source.n = 1","doc":{"a":1}}\n',
    )
    expect([both.status, both.body.error.reason]).toEqual([400, "Validation Failed: 1: can't provide both script and doc;"])
  })

  test('if/else with conditions, blocks and ctx.op: the counter idiom, noop, delete', async () => {
    await ok(api.call('admin', 'PUT', '/flow/_doc/1?refresh=true', { tags: ['x'], s: 'text' }), 201)
    const counter = { script: 'if (ctx._source.count == null) { ctx._source.count = 1 } else { ctx._source.count += 1 }' }
    await ok(api.call('admin', 'POST', '/flow/_update/1', counter))
    await ok(api.call('admin', 'POST', '/flow/_update/1', counter))
    const doc = await ok(api.call('admin', 'GET', '/flow/_doc/1'))
    expect(doc._source.count).toBe(2)
    const same = await ok(
      api.call('admin', 'POST', '/flow/_update/1', { script: "if (ctx._source.tags.contains('x')) { ctx.op = 'noop' }" }),
    )
    expect([same.result, same._version]).toEqual(['noop', doc._version])
    const branches = await ok(
      api.call('admin', 'POST', '/flow/_update/1', {
        script: {
          source:
            "if (params.n > 5 && !ctx._source.tags.isEmpty() || ctx._source['s'] == 'nope') ctx._source.big = true; else ctx._source.big = false",
          params: { n: 6 },
        },
      }),
    )
    expect(branches.result).toBe('updated')
    expect((await src('1', 'flow')).big).toBe(true)
    const gone = await ok(api.call('admin', 'POST', '/flow/_update/1', { script: "ctx.op = 'delete'" }))
    expect(gone.result).toBe('deleted')
    expect((await api.call('admin', 'GET', '/flow/_doc/1')).status).toBe(404)
  })

  test('update_by_query counts the documents a script leaves alone as noops', async () => {
    const lines = [1, 2, 3, 4].flatMap((n) => [{ index: { _index: 'flowq', _id: String(n) } }, { n }])
    await ok(api.call('admin', 'POST', '/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join('')))
    const r = await ok(
      api.call('admin', 'POST', '/flowq/_update_by_query?refresh=true', {
        script: "if (ctx._source.n < 3) { ctx.op = 'noop' } else if (ctx._source.n == 4) { ctx.op = 'delete' } else { ctx._source.n = 0 }",
      }),
    )
    expect([r.total, r.updated, r.noops, r.deleted]).toEqual([4, 1, 2, 1])
    const left = await ok(api.call('admin', 'POST', '/flowq/_search', { sort: ['_id'] }))
    expect(left.hits.hits.map((h: any) => [h._id, h._source.n])).toEqual([
      ['1', 1],
      ['2', 2],
      ['3', 0],
    ])
  })

  test('conditions fail as Painless fails: ordering a string, an unknown ctx.op, an unclosed block', async () => {
    await ok(api.call('admin', 'PUT', '/flow/_doc/2?refresh=true', { s: 'text' }), 201)
    const order = await api.call('admin', 'POST', '/flow/_update/2', { script: 'if (ctx._source.s < 1) { ctx._source.x = 1 }' })
    expect([order.status, order.body.error.caused_by.caused_by.type]).toEqual([400, 'class_cast_exception'])
    const op = await api.call('admin', 'POST', '/flow/_update/2', { script: "ctx.op = 'bogus'" })
    expect([op.status, op.body.error.type]).toEqual([400, 'illegal_argument_exception'])
    const open = await api.call('admin', 'POST', '/flow/_update/2', { script: 'if (ctx._source.s == null) { ctx._source.x = 1' })
    expect([open.status, open.body.error.caused_by.type, open.body.error.caused_by.reason]).toEqual([
      400,
      'script_exception',
      'compile error',
    ])
    const loop = await api.call('admin', 'POST', '/flow/_update_by_query', { script: 'while (true) {}' })
    expect([loop.status, loop.body.error.type]).toEqual([400, 'script_exception'])
  })
})

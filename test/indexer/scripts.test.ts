// Painless compound assignments in `_update_by_query` and scripted `_update`, over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const src = async (id: string) => (await ok(api.call('admin', 'GET', `/nums/_doc/${id}`)))._source

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
    expect(missing.body.error.caused_by.type).toBe('null_pointer_exception')
  })

  test('arithmetic on a missing field and bad syntax answer 400 script_exception', async () => {
    const npe = await api.call('admin', 'POST', '/nums/_update/1', { script: 'ctx._source.missing += 1' })
    expect(npe.status).toBe(400)
    expect(npe.body.error.type).toBe('script_exception')
    expect(npe.body.error.caused_by.type).toBe('null_pointer_exception')
    const bad = await api.call('admin', 'POST', '/nums/_update_by_query', { script: 'ctx._source.n ^= 1' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.type).toBe('script_exception')
  })
})

// `_rollover` of aliases and data streams over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
})
afterAll(async () => {
  await api?.stop()
})

describe('alias rollover', () => {
  test('conditions, dry_run, the alias moved, the new index named after the old', async () => {
    await ok(api.call('admin', 'PUT', '/app-000001', { aliases: { app: {} } }))
    await ok(api.call('admin', 'PUT', '/app-000001/_doc/1?refresh=true', { a: 1 }), 201)
    const notYet = await ok(api.call('admin', 'POST', '/app/_rollover', { conditions: { max_docs: 2, max_age: '1d' } }))
    expect(notYet).toEqual({
      acknowledged: false,
      shards_acknowledged: false,
      old_index: 'app-000001',
      new_index: 'app-000002',
      rolled_over: false,
      dry_run: false,
      conditions: { '[max_docs: 2]': false, '[max_age: 1d]': false },
    })
    const dry = await ok(api.call('admin', 'POST', '/app/_rollover?dry_run=true', { conditions: { max_docs: 1 } }))
    expect(dry.rolled_over).toBe(false)
    expect(dry.dry_run).toBe(true)
    expect(dry.conditions).toEqual({ '[max_docs: 1]': true })
    expect((await api.call('admin', 'HEAD', '/app-000002')).status).toBe(404)
    const done = await ok(
      api.call('admin', 'POST', '/app/_rollover', { conditions: { max_docs: 1 }, mappings: { properties: { b: { type: 'keyword' } } } }),
    )
    expect(done).toMatchObject({ acknowledged: true, rolled_over: true, old_index: 'app-000001', new_index: 'app-000002' })
    const aliases = await ok(api.call('admin', 'GET', '/_alias/app'))
    expect(Object.keys(aliases)).toEqual(['app-000002'])
    const mapping = await ok(api.call('admin', 'GET', '/app-000002/_mapping'))
    expect(mapping['app-000002'].mappings.properties.b).toEqual({ type: 'keyword' })
  })

  test('a write alias stays on the old index as not the write index; explicit new name', async () => {
    await ok(api.call('admin', 'PUT', '/w1', { aliases: { w: { is_write_index: true } } }))
    const r = await ok(api.call('admin', 'POST', '/w/_rollover/w-next'))
    expect(r).toMatchObject({ rolled_over: true, old_index: 'w1', new_index: 'w-next', conditions: {} })
    const aliases = await ok(api.call('admin', 'GET', '/_alias/w'))
    expect(aliases.w1.aliases.w.is_write_index).toBe(false)
    expect(aliases['w-next'].aliases.w.is_write_index).toBe(true)
  })

  test('refusals: missing target, concrete index, existing or invalid new index, bad conditions', async () => {
    const missing = await api.call('admin', 'POST', '/nope/_rollover')
    expect(missing.status).toBe(400)
    expect(missing.body.error.reason).toBe('rollover target [nope] does not exist')
    const concrete = await api.call('admin', 'POST', '/app-000001/_rollover')
    expect(concrete.status).toBe(400)
    await ok(api.call('admin', 'PUT', '/app-000003'))
    const exists = await api.call('admin', 'POST', '/app/_rollover?dry_run=true')
    expect(exists.status).toBe(400)
    expect(exists.body.error.type).toBe('resource_already_exists_exception')
    const invalid = await api.call('admin', 'POST', '/app/_rollover/Bad|Name')
    expect(invalid.status).toBe(400)
    expect(invalid.body.error.type).toBe('invalid_index_name_exception')
    const bad = await api.call('admin', 'POST', '/app/_rollover', { conditions: { max_size: 'lots' } })
    expect(bad.status).toBe(400)
    const unknown = await api.call('admin', 'POST', '/app/_rollover', { conditions: { min_docs: 1 } })
    expect(unknown.status).toBe(400)
  })
})

describe('data stream rollover', () => {
  test('the next generation becomes the write index', async () => {
    await ok(api.call('admin', 'PUT', '/_index_template/events', { index_patterns: ['events-*'], data_stream: {} }))
    await ok(api.call('admin', 'PUT', '/_data_stream/events-x'))
    await ok(api.call('admin', 'POST', '/events-x/_doc?refresh=true', { '@timestamp': '2026-01-01T00:00:00Z' }), 201)
    const r = await ok(api.call('admin', 'POST', '/events-x/_rollover', { conditions: { max_docs: 1 } }))
    expect(r).toMatchObject({ rolled_over: true, old_index: '.ds-events-x-000001', new_index: '.ds-events-x-000002' })
    const ds = await ok(api.call('admin', 'GET', '/_data_stream/events-x'))
    expect(ds.data_streams[0].generation).toBe(2)
    expect(ds.data_streams[0].indices.map((i: any) => i.index_name)).toEqual(['.ds-events-x-000001', '.ds-events-x-000002'])
    const doc = await ok(api.call('admin', 'POST', '/events-x/_doc', { '@timestamp': '2026-01-02T00:00:00Z' }), 201)
    expect(doc._index).toBe('.ds-events-x-000002')
    const named = await api.call('admin', 'POST', '/events-x/_rollover/other')
    expect(named.status).toBe(400)
  })
})

// _update_by_query, _delete_by_query, _reindex and tasks over real HTTP, with the caller's DLS
// deciding which documents are touched.
import { beforeEach, afterEach, describe, expect, test } from 'bun:test'
import { ndjson, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const ROLES = `
_meta: { type: roles, config_version: 2 }
own_docs:
  cluster_permissions: ["cluster:monitor/task/get", "indices:data/write/reindex"]
  index_permissions:
    - index_patterns: ["items", "copy-*"]
      allowed_actions: ["read", "write", "create_index"]
      dls: '{"term": {"owner": "\${user.name}"}}'
reader:
  index_permissions:
    - index_patterns: ["items"]
      allowed_actions: ["read"]
`

async function source(id: string) {
  return (await ok(api.call('admin', 'GET', `/items/_doc/${id}`)))._source
}

beforeEach(async () => {
  api = await startIndexApi({
    roles: ROLES,
    users: { admin: { roles: ['all_access'] }, alice: { roles: ['own_docs'] }, rita: { roles: ['reader'] } },
  })
  await ok(
    api.call('admin', 'PUT', '/items', {
      mappings: { properties: { owner: { type: 'keyword' }, n: { type: 'long' }, tag: { type: 'keyword' } } },
    }),
  )
  const lines: unknown[] = []
  for (let i = 0; i < 12; i++) lines.push({ index: { _id: `i${i}` } }, { owner: i % 3 === 0 ? 'alice' : 'bob', n: i, tag: 'old', junk: 1 })
  await ok(api.call('admin', 'POST', '/items/_bulk?refresh=true', ndjson(lines)))
})

// Every test writes by query, so each starts from the same twelve documents on a server of its own.
afterEach(async () => {
  await api?.stop()
})

describe('_update_by_query', () => {
  test('assigns literals and params, removes fields, in batches; only matching documents', async () => {
    const r = await ok(
      api.call('admin', 'POST', '/items/_update_by_query?refresh=true&scroll_size=5', {
        query: { range: { n: { gte: 6 } } },
        script: { source: "ctx._source.tag = params.t; ctx._source.meta.by = 'script'; ctx._source.remove('junk')", params: { t: 'new' } },
      }),
    )
    expect(r).toMatchObject({ total: 6, updated: 6, batches: 2, version_conflicts: 0, failures: [] })
    expect(await source('i7')).toEqual({ owner: 'bob', n: 7, tag: 'new', meta: { by: 'script' } })
    expect(await source('i2')).toEqual({ owner: 'bob', n: 2, tag: 'old', junk: 1 })
  })

  test('other scripts answer a script_exception and change nothing', async () => {
    for (const script of [
      'ctx._source.n <<= 1',
      'ctx._source.tag = ctx._source.owner',
      "while (true) { ctx.op = 'delete' }",
      'if (ctx._source.n.foo()) {}',
    ]) {
      const r = await api.call('admin', 'POST', '/items/_update_by_query', { script: { source: script } })
      expect(r.status, script).toBe(400)
      expect(r.body.error.type).toBe('script_exception')
    }
    expect((await source('i1')).tag).toBe('old')
  })

  test('DLS: a caller updates only the documents it can read; a reader may not write', async () => {
    const r = await ok(api.call('alice', 'POST', '/items/_update_by_query?refresh=true', { script: "ctx._source.tag = 'mine'" }))
    expect(r.updated).toBe(4)
    const tagged = await ok(api.call('admin', 'POST', '/items/_count', { query: { term: { tag: 'mine' } } }))
    expect(tagged.count).toBe(4)
    expect((await source('i1')).tag).toBe('old')
    expect((await api.call('rita', 'POST', '/items/_update_by_query', {})).status).toBe(403)
  })
})

describe('_delete_by_query', () => {
  test('deletes the matches, honours max_docs and DLS', async () => {
    expect(
      await ok(api.call('admin', 'POST', '/items/_delete_by_query?refresh=true&max_docs=2', { query: { term: { owner: 'bob' } } })),
    ).toMatchObject({ deleted: 2, total: 2 })
    expect((await ok(api.call('admin', 'GET', '/items/_count'))).count).toBe(10)
    expect(await ok(api.call('alice', 'POST', '/items/_delete_by_query?refresh=true', { query: { match_all: {} } }))).toMatchObject({
      deleted: 4,
    })
    expect((await ok(api.call('admin', 'GET', '/items/_count'))).count).toBe(6)
  })
})

describe('_reindex', () => {
  test('copies the source query to the destination; op_type create conflicts abort or proceed', async () => {
    const r = await ok(
      api.call('admin', 'POST', '/_reindex?refresh=true', {
        source: { index: 'items', query: { term: { owner: 'alice' } } },
        dest: { index: 'copy-a' },
      }),
    )
    expect(r).toMatchObject({ total: 4, created: 4, updated: 0 })
    const again = await api.call('admin', 'POST', '/_reindex', { source: { index: 'items' }, dest: { index: 'copy-a', op_type: 'create' } })
    // The batch that meets the conflicts is written (bulk is not atomic), then the request stops.
    expect(again.status).toBe(409)
    expect(again.body).toMatchObject({ created: 8, version_conflicts: 4 })
    expect(again.body.failures[0]).toMatchObject({ status: 409, cause: { type: 'version_conflict_engine_exception' } })
    const small = await api.call('admin', 'POST', '/_reindex', {
      source: { index: 'items', size: 2 },
      dest: { index: 'copy-a', op_type: 'create' },
    })
    expect(small.body).toMatchObject({ batches: 1, version_conflicts: 2 })
    const proceed = await ok(
      api.call('admin', 'POST', '/_reindex?refresh=true', {
        conflicts: 'proceed',
        source: { index: 'items', size: 5 },
        dest: { index: 'copy-a', op_type: 'create' },
      }),
    )
    expect(proceed).toMatchObject({ total: 12, created: 0, version_conflicts: 12, batches: 3, failures: [] })
    expect((await api.call('admin', 'POST', '/_reindex', { source: { index: 'items' }, dest: { index: 'items' } })).status).toBe(400)
    expect(
      (await api.call('admin', 'POST', '/_reindex', { source: { index: 'items', remote: { host: 'http://x' } }, dest: { index: 'y' } }))
        .status,
    ).toBe(400)
  })

  test('DLS on the source; the destination needs write permission', async () => {
    expect(
      await ok(api.call('alice', 'POST', '/_reindex?refresh=true', { source: { index: 'items' }, dest: { index: 'copy-alice' } })),
    ).toMatchObject({ created: 4 })
    expect((await api.call('alice', 'POST', '/_reindex', { source: { index: 'items' }, dest: { index: 'elsewhere' } })).status).toBe(403)
    expect((await api.call('rita', 'POST', '/_reindex', { source: { index: 'items' }, dest: { index: 'copy-r' } })).status).toBe(403)
  })
})

describe('tasks', () => {
  test('wait_for_completion=false answers a task readable by its owner only', async () => {
    const { task } = await ok(
      api.call('alice', 'POST', '/items/_update_by_query?wait_for_completion=false&refresh=true', { script: "ctx._source.tag = 'later'" }),
    )
    expect(task).toMatch(/^[\w-]+:\d+$/)
    let t: any
    for (let i = 0; i < 50; i++) {
      t = await ok(api.call('alice', 'GET', `/_tasks/${task}`))
      if (t.completed) break
      await Bun.sleep(20)
    }
    expect(t.completed).toBe(true)
    expect(t.response).toMatchObject({ updated: 4, total: 4 })
    expect(t.task.action).toBe('indices:data/write/update/byquery')
    expect((await api.call('admin', 'GET', `/_tasks/${task}`)).status).toBe(404)
    expect((await api.call('admin', 'GET', '/_tasks/nope:1')).status).toBe(404)
  })
})

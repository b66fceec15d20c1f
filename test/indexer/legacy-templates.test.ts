// Legacy (v1) index templates over HTTP: CRUD with OpenSearch's answers, every matching template
// applied by ascending order under the request, composable templates taking precedence, _cat/templates.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

const ROLES = `
_meta: { type: roles, config_version: 2 }
index_templates_only:
  cluster_permissions: ["cluster_manage_index_templates"]
monitor_only:
  cluster_permissions: ["cluster_monitor"]
`

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({
    roles: ROLES,
    users: { admin: { roles: ['all_access'] }, templater: { roles: ['index_templates_only'] }, watcher: { roles: ['monitor_only'] } },
  })
})
afterAll(() => api.stop())

const put = (name: string, body: unknown, query = '') => api.call('admin', 'PUT', `/_template/${name}${query}`, body)

describe('legacy template CRUD', () => {
  test('put, get (nested or flat settings), head, wildcards and lists, delete', async () => {
    await ok(
      put('lt-crud', {
        index_patterns: 'crud-*',
        order: 3,
        version: 7,
        settings: { number_of_shards: 1 },
        aliases: { a: { routing: 'r', is_write_index: true } },
      }),
    )
    const shown = {
      order: 3,
      version: 7,
      index_patterns: ['crud-*'],
      settings: { index: { number_of_shards: '1' } },
      mappings: {},
      aliases: { a: { index_routing: 'r', search_routing: 'r' } },
    }
    expect(await ok(api.call('admin', 'GET', '/_template/lt-crud'))).toEqual({ 'lt-crud': shown })
    expect(await ok(api.call('admin', 'GET', '/_template/lt-c*,lt-none?flat_settings=true'))).toEqual({
      'lt-crud': { ...shown, settings: { 'index.number_of_shards': '1' } },
    })
    expect((await api.call('admin', 'HEAD', '/_template/lt-c*')).status).toBe(200)
    expect((await api.call('admin', 'HEAD', '/_template/lt-none')).status).toBe(404)
    const missing = await api.call('admin', 'GET', '/_template/lt-none')
    expect([missing.status, missing.body]).toEqual([404, {}])
    await ok(api.call('admin', 'DELETE', '/_template/lt-crud'))
    const again = await api.call('admin', 'DELETE', '/_template/lt-crud')
    expect([again.status, again.body.error.type]).toEqual([404, 'index_template_missing_exception'])
  })

  test('create=true refuses an existing name; the order parameter applies unless the body gives one', async () => {
    await ok(put('lt-order', { index_patterns: 'ord-*' }, '?order=5'))
    expect((await ok(api.call('admin', 'GET', '/_template/lt-order')))['lt-order'].order).toBe(5)
    await ok(put('lt-order', { index_patterns: 'ord-*', order: 2 }, '?order=5'))
    expect((await ok(api.call('admin', 'GET', '/_template/lt-order')))['lt-order'].order).toBe(2)
    const dup = await put('lt-order', { index_patterns: 'ord-*' }, '?create=true')
    expect([dup.status, dup.body.error.reason]).toEqual([400, 'index_template [lt-order] already exists'])
  })

  test('invalid templates are 400 with OpenSearch reasons', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{}, 'action_request_validation_exception', 'Validation Failed: 1: index patterns are missing;'],
      [{ index_patterns: 'x-*', bogus: 1 }, 'parse_exception', 'unknown key [bogus] in the template '],
      [{ index_patterns: 'x-*', order: 'x' }, 'number_format_exception', 'For input string: "x"'],
      [
        { index_patterns: 'x-*', mappings: { _doc: { properties: {} } } },
        'illegal_argument_exception',
        'The mapping definition cannot be nested under a type',
      ],
      [
        { index_patterns: ['*'], settings: { 'index.hidden': true } },
        'invalid_index_template_exception',
        'index_template [lt-bad] invalid, cause [Validation Failed: 1: global templates may not specify the setting index.hidden;]',
      ],
      [
        { index_patterns: ['x y', '_z'] },
        'invalid_index_template_exception',
        "index_template [lt-bad] invalid, cause [Validation Failed: 1: index_patterns [x y] must not contain a space;2: index_pattern [x y] must not contain the following characters [ , \", *, \\, <, |, ,, >, /, ?];3: index_pattern [_z] must not start with '_';]",
      ],
      [
        { index_patterns: ['same'], aliases: { same: {} } },
        'illegal_argument_exception',
        'alias [same] cannot be the same as any pattern in [same]',
      ],
    ]
    for (const [body, type, reason] of cases) {
      const r = await put('lt-bad', body)
      expect([r.status, r.body.error.type, r.body.error.reason]).toEqual([400, type, reason])
    }
  })
})

describe('legacy templates on index creation', () => {
  test('every matching template applies by ascending order, the request last; aliases take {index}', async () => {
    await ok(
      put('lt-low', {
        index_patterns: ['app-*'],
        order: 0,
        settings: { number_of_shards: 3, number_of_replicas: 0 },
        mappings: {
          properties: { a: { type: 'text', store: true }, b: { type: 'long' }, o: { properties: { y: { type: 'long' } } } },
        },
      }),
    )
    await ok(
      put('lt-high', {
        index_patterns: ['app-x*'],
        order: 1,
        settings: { number_of_shards: 1, 'index.refresh_interval': '5s' },
        mappings: { properties: { a: { type: 'keyword' }, o: { properties: { x: { type: 'long' } } } } },
        aliases: { '{index}-alias': {}, everyone: {} },
      }),
    )
    await ok(
      api.call('admin', 'PUT', '/app-x1', { settings: { number_of_replicas: 1 }, mappings: { properties: { c: { type: 'long' } } } }),
    )
    const got = (await ok(api.call('admin', 'GET', '/app-x1')))['app-x1']
    expect(got.settings.index).toMatchObject({ number_of_shards: '1', number_of_replicas: '1', refresh_interval: '5s' })
    // mergeDefaults: the higher order wins key by key at every depth.
    expect(got.mappings.properties).toEqual({
      a: { type: 'keyword', store: true },
      b: { type: 'long' },
      c: { type: 'long' },
      o: { properties: { x: { type: 'long' }, y: { type: 'long' } } },
    })
    expect(Object.keys(got.aliases).sort()).toEqual(['app-x1-alias', 'everyone'])
    // Only the matching ones: app-y1 takes lt-low alone, also when a write creates it.
    await ok(api.call('admin', 'PUT', '/app-y1/_doc/1', { b: 1 }), 201)
    const y = (await ok(api.call('admin', 'GET', '/app-y1')))['app-y1']
    expect(y.settings.index.number_of_shards).toBe('3')
    expect(y.aliases).toEqual({})
  })

  test('a matching composable template takes precedence over every legacy one', async () => {
    await ok(
      put('lt-global', {
        index_patterns: ['prec-*'],
        order: 99,
        settings: { 'index.priority': 1 },
        mappings: { properties: { legacy: { type: 'keyword' } } },
      }),
    )
    await ok(
      api.call('admin', 'PUT', '/_index_template/it-prec', {
        index_patterns: ['prec-v2*'],
        template: { settings: { 'index.priority': 2 } },
      }),
    )
    await ok(api.call('admin', 'PUT', '/prec-v2a'))
    const v2 = (await ok(api.call('admin', 'GET', '/prec-v2a')))['prec-v2a']
    expect([v2.settings.index.priority, v2.mappings]).toEqual(['2', {}])
    await ok(api.call('admin', 'PUT', '/prec-v1a'))
    const v1 = (await ok(api.call('admin', 'GET', '/prec-v1a')))['prec-v1a']
    expect([v1.settings.index.priority, v1.mappings]).toEqual(['1', { properties: { legacy: { type: 'keyword' } } }])
  })

  test('a hidden index skips global templates', async () => {
    await ok(put('lt-star', { index_patterns: ['*'], order: 5, settings: { 'index.priority': 42 } }))
    await ok(api.call('admin', 'PUT', '/hid-1', { settings: { 'index.hidden': true } }))
    await ok(api.call('admin', 'PUT', '/vis-1'))
    const hidden = (await ok(api.call('admin', 'GET', '/hid-1')))['hid-1']
    const visible = (await ok(api.call('admin', 'GET', '/vis-1')))['vis-1']
    expect([hidden.settings.index.priority, visible.settings.index.priority]).toEqual([undefined, '42'])
    await ok(api.call('admin', 'DELETE', '/_template/lt-star'))
  })
})

describe('_cat/templates', () => {
  test('legacy templates first with their order, composable ones with priority and composed_of', async () => {
    await ok(put('cat-legacy', { index_patterns: ['cl-*', 'cm-*'], order: 4, version: 9 }))
    await ok(api.call('admin', 'PUT', '/_component_template/cat-part', { template: {} }))
    await ok(api.call('admin', 'PUT', '/_index_template/cat-v2', { index_patterns: ['cv-*'], priority: 12, composed_of: ['cat-part'] }))
    const text = await api.call('admin', 'GET', '/_cat/templates/cat-*?v')
    expect(text.text).toBe(
      'name       index_patterns order version composed_of\n' +
        'cat-legacy [cl-*, cm-*]   4     9       \n' +
        'cat-v2     [cv-*]         12            [cat-part]\n',
    )
    expect(await ok(api.call('admin', 'GET', '/_cat/templates/cat-*?format=json&h=name,order,c'))).toEqual([
      { name: 'cat-legacy', order: '4', c: '' },
      { name: 'cat-v2', order: '12', c: '[cat-part]' },
    ])
    const help = await api.call('admin', 'GET', '/_cat/templates?help')
    expect(help.text.split('\n').map((l) => l.split(' ')[0])).toEqual(['name', 'index_patterns', 'order', 'version', 'composed_of', ''])
  })
})

describe('authorization', () => {
  test('legacy templates need indices:admin/template/*: granted by cluster_manage_index_templates, not by cluster_monitor', async () => {
    await ok(api.call('templater', 'PUT', '/_template/lt-auth', { index_patterns: ['auth-*'] }))
    await ok(api.call('templater', 'GET', '/_template/lt-auth'))
    for (const [method, action] of [
      ['PUT', 'put'],
      ['GET', 'get'],
      ['DELETE', 'delete'],
    ] as const) {
      const denied = await api.call('watcher', method, '/_template/lt-auth', method === 'PUT' ? { index_patterns: ['auth-*'] } : undefined)
      expect([denied.status, denied.body.error.reason.includes(`indices:admin/template/${action}`)]).toEqual([403, true])
    }
    await ok(api.call('templater', 'DELETE', '/_template/lt-auth'))
  })
})

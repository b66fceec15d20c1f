// Component templates over HTTP: CRUD with OpenSearch's 400/404 answers, composition into the
// indices an index template creates (component < index template < request), and authorization.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

const ROLES = `
_meta: { type: roles, config_version: 2 }
index_templates_only:
  cluster_permissions: ["cluster_manage_index_templates"]
component_templates:
  cluster_permissions: ["cluster:admin/component_template/*"]
`

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({
    roles: ROLES,
    users: {
      admin: { roles: ['all_access'] },
      templater: { roles: ['index_templates_only'] },
      composer: { roles: ['component_templates'] },
    },
  })
})
afterAll(() => api.stop())

const put = (name: string, body: unknown, query = '') => api.call('admin', 'PUT', `/_component_template/${name}${query}`, body)

describe('component template CRUD', () => {
  test('put, get (settings normalized), head, wildcards, delete', async () => {
    await ok(
      put('ct-crud', {
        template: {
          settings: { number_of_shards: 1, 'index.number_of_replicas': 0 },
          mappings: { properties: { f: { type: 'keyword' } } },
          aliases: { al: { routing: 'r' } },
        },
        version: 2,
        _meta: { owner: 'me' },
      }),
    )
    expect(await ok(api.call('admin', 'GET', '/_component_template/ct-crud'))).toEqual({
      component_templates: [
        {
          name: 'ct-crud',
          component_template: {
            template: {
              settings: { index: { number_of_shards: '1', number_of_replicas: '0' } },
              mappings: { properties: { f: { type: 'keyword' } } },
              aliases: { al: { index_routing: 'r', search_routing: 'r' } },
            },
            version: 2,
            _meta: { owner: 'me' },
          },
        },
      ],
    })
    expect((await api.call('admin', 'HEAD', '/_component_template/ct-crud')).status).toBe(200)
    expect((await api.call('admin', 'HEAD', '/_component_template/ct-none')).status).toBe(404)
    const names = await ok(api.call('admin', 'GET', '/_component_template/ct-c*'))
    expect(names.component_templates.map((t: { name: string }) => t.name)).toEqual(['ct-crud'])
    await ok(api.call('admin', 'DELETE', '/_component_template/ct-crud'))
    const gone = await api.call('admin', 'GET', '/_component_template/ct-crud')
    expect(gone.status).toBe(404)
    expect(gone.body.error).toMatchObject({
      type: 'resource_not_found_exception',
      reason: 'component template matching [ct-crud] not found',
    })
  })

  test('a pattern that matches none answers 404 with the empty list; a missing delete 404s', async () => {
    const none = await api.call('admin', 'GET', '/_component_template/nothing-*')
    expect([none.status, none.body]).toEqual([404, { component_templates: [] }])
    const del = await api.call('admin', 'DELETE', '/_component_template/nothing')
    expect([del.status, del.body.error.type, del.body.error.reason]).toEqual([
      404,
      'index_template_missing_exception',
      'index_template [nothing] missing',
    ])
  })

  test('create=true refuses an existing name; invalid bodies are 400', async () => {
    await ok(put('ct-once', { template: {} }))
    const again = await put('ct-once', { template: {} }, '?create=true')
    expect([again.status, again.body.error.reason]).toEqual([400, 'component template [ct-once] already exists'])
    const cases: Array<[unknown, string, string]> = [
      [{}, 'illegal_argument_exception', 'Required [template]'],
      [{ template: {}, bogus: 1 }, 'x_content_parse_exception', '[component_template] unknown field [bogus]'],
      [
        { template: { mappings: { properties: { f: { type: 'nope' } } } } },
        'mapper_parsing_exception',
        'Failed to parse mapping [_doc]: No handler for type [nope] declared on field [f]',
      ],
      [
        { template: { settings: { number_of_shards: 0 } } },
        'illegal_argument_exception',
        'Failed to parse value [0] for setting [index.number_of_shards] must be >= 1',
      ],
    ]
    for (const [body, type, reason] of cases) {
      const r = await put('ct-bad', body)
      expect([r.status, r.body.error.type, r.body.error.reason]).toEqual([400, type, reason])
    }
    const upper = await put('CT', { template: {} })
    expect(upper.body.error.reason).toBe('index_template [CT] invalid, cause [Validation Failed: 1: name must be lower cased;]')
    expect((await api.call('admin', 'GET', '/_component_template/ct-bad')).status).toBe(404)
  })
})

describe('index templates composed of component templates', () => {
  test('a missing component template is a 400 naming the missing ones', async () => {
    await ok(put('ct-exists', { template: {} }))
    const r = await api.call('admin', 'PUT', '/_index_template/it-missing', {
      index_patterns: ['miss-*'],
      composed_of: ['ct-exists', 'ct-a', 'ct-b'],
    })
    expect([r.status, r.body.error.type, r.body.error.reason]).toEqual([
      400,
      'invalid_index_template_exception',
      'index_template [it-missing] invalid, cause [index template [it-missing] specifies component templates [ct-a, ct-b] that do not exist]',
    ])
  })

  test('component templates apply in order, then the index template, then the request', async () => {
    await ok(
      put('ct-low', {
        template: {
          settings: { number_of_replicas: 1, 'index.priority': 1, 'index.refresh_interval': '7s' },
          mappings: { properties: { f1: { type: 'text' }, shared: { type: 'text' }, obj: { properties: { a: { type: 'long' } } } } },
          aliases: { common: { is_write_index: false }, '{index}-own': {} },
        },
      }),
    )
    await ok(
      put('ct-high', {
        template: {
          settings: { 'index.number_of_replicas': 0, 'index.priority': 2 },
          mappings: { properties: { f2: { type: 'keyword' }, shared: { type: 'keyword' }, obj: { properties: { b: { type: 'long' } } } } },
          aliases: { common: { is_write_index: true } },
        },
      }),
    )
    await ok(
      api.call('admin', 'PUT', '/_index_template/it-compose', {
        index_patterns: ['comp-*'],
        priority: 10,
        composed_of: ['ct-low', 'ct-high'],
        template: {
          settings: { 'index.number_of_shards': 2, 'index.priority': 3 },
          mappings: { properties: { f3: { type: 'integer' }, shared: { type: 'long' } } },
          aliases: { common: { filter: { match_all: {} } } },
        },
      }),
    )
    await ok(
      api.call('admin', 'PUT', '/comp-1', {
        settings: { 'index.priority': 17 },
        mappings: { properties: { mine: { type: 'keyword' }, obj: { properties: { c: { type: 'keyword' } } } } },
        aliases: { other: {} },
      }),
    )
    const got = (await ok(api.call('admin', 'GET', '/comp-1')))['comp-1']
    expect(got.settings.index).toMatchObject({ number_of_shards: '2', number_of_replicas: '0', priority: '17', refresh_interval: '7s' })
    expect(got.mappings.properties).toEqual({
      f1: { type: 'text' },
      f2: { type: 'keyword' },
      f3: { type: 'integer' },
      shared: { type: 'long' },
      mine: { type: 'keyword' },
      obj: { properties: { a: { type: 'long' }, b: { type: 'long' }, c: { type: 'keyword' } } },
    })
    expect(got.aliases).toEqual({ other: {}, common: { filter: { match_all: {} } }, 'comp-1-own': {} })
    // An index a write creates composes the same way.
    await ok(api.call('admin', 'PUT', '/comp-auto/_doc/1?refresh=true', { mine: 'x' }), 201)
    const auto = (await ok(api.call('admin', 'GET', '/comp-auto')))['comp-auto']
    expect(auto.settings.index.priority).toBe('3')
    expect(Object.keys(auto.aliases).sort()).toEqual(['common', 'comp-auto-own'])
  })

  test('parts that cannot merge are refused when the index template or a component template is put', async () => {
    await ok(put('ct-object', { template: { mappings: { properties: { o: { properties: { x: { type: 'long' } } } } } } }))
    const leaf = await api.call('admin', 'PUT', '/_index_template/it-clash', {
      index_patterns: ['clash-*'],
      composed_of: ['ct-object'],
      template: { mappings: { properties: { o: { type: 'keyword' } } } },
    })
    expect(leaf.status).toBe(400)
    expect(leaf.body.error.reason).toBe(
      'composable template [it-clash] template after composition with component templates [ct-object] is invalid',
    )
    expect(leaf.body.error.caused_by.caused_by.reason).toBe("can't merge a non object mapping [o] with an object mapping")
    await ok(
      api.call('admin', 'PUT', '/_index_template/it-clash', {
        index_patterns: ['clash-*'],
        composed_of: ['ct-object'],
        template: { mappings: { properties: { o: { properties: { y: { type: 'long' } } } } } },
      }),
    )
    const nested = await put('ct-object', { template: { mappings: { properties: { o: { type: 'nested' } } } } })
    expect([nested.status, nested.body.error.reason]).toEqual([
      400,
      'updating component template [ct-object] results in invalid composable template [it-clash] after templates are merged',
    ])
    expect(nested.body.error.caused_by.caused_by.reason).toBe('cannot change object mapping from nested to non-nested')
  })

  test('a component template in use cannot be deleted; once unused it can', async () => {
    await ok(put('ct-used', { template: { settings: { 'index.priority': 4 } } }))
    await ok(api.call('admin', 'PUT', '/_index_template/it-user', { index_patterns: ['used-*'], composed_of: ['ct-used'] }))
    const refused = await api.call('admin', 'DELETE', '/_component_template/ct-used')
    expect([refused.status, refused.body.error.reason]).toEqual([
      400,
      'component templates [ct-used] cannot be removed as they are still in use by index templates [it-user]',
    ])
    await ok(api.call('admin', 'DELETE', '/_index_template/it-user'))
    await ok(api.call('admin', 'DELETE', '/_component_template/ct-used'))
  })

  test('simulate_index answers what a new index would take', async () => {
    await ok(put('ct-sim', { template: { settings: { 'index.priority': 9 }, mappings: { properties: { s: { type: 'keyword' } } } } }))
    await ok(
      api.call('admin', 'PUT', '/_index_template/it-sim', {
        index_patterns: ['sim-*'],
        composed_of: ['ct-sim'],
        template: { aliases: { sa: {} } },
      }),
    )
    expect(await ok(api.call('admin', 'POST', '/_index_template/_simulate_index/sim-1'))).toEqual({
      template: { settings: { index: { priority: '9' } }, mappings: { properties: { s: { type: 'keyword' } } }, aliases: { sa: {} } },
      overlapping: [],
    })
    expect(await ok(api.call('admin', 'POST', '/_index_template/_simulate_index/no-template-matches'))).toEqual({})
  })
})

describe('authorization', () => {
  test('component templates need cluster:admin/component_template/*, which cluster_manage_index_templates does not grant', async () => {
    for (const [method, path, body] of [
      ['PUT', '/_component_template/ct-auth', { template: {} }],
      ['GET', '/_component_template/ct-auth', undefined],
      ['DELETE', '/_component_template/ct-auth', undefined],
    ] as const) {
      const denied = await api.call('templater', method, path, body)
      expect(denied.status).toBe(403)
      expect(denied.body.error.reason).toContain(
        `cluster:admin/component_template/${method === 'PUT' ? 'put' : method === 'GET' ? 'get' : 'delete'}`,
      )
    }
    await ok(api.call('composer', 'PUT', '/_component_template/ct-auth', { template: {} }))
    await ok(api.call('composer', 'GET', '/_component_template/ct-auth'))
    await ok(api.call('composer', 'DELETE', '/_component_template/ct-auth'))
    expect((await api.call('composer', 'PUT', '/_index_template/it-auth', { index_patterns: ['auth-*'] })).status).toBe(403)
  })
})

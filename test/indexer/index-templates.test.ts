// Composable index templates over HTTP: the answers OpenSearch 3.4 gives for their GET, PUT and
// DELETE (kept settings, empty patterns, refused bodies).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
})
afterAll(() => api.stop())

test('a template comes back with its settings normalized and nested (flat_settings or not) and composed_of listed', async () => {
  await ok(
    api.call('admin', 'PUT', '/_index_template/kept', {
      index_patterns: 'kept-*',
      template: { settings: { number_of_shards: 1, 'index.number_of_replicas': 0 }, aliases: { r: { routing: 'x' } } },
    }),
  )
  const expected = {
    index_templates: [
      {
        name: 'kept',
        index_template: {
          index_patterns: ['kept-*'],
          template: {
            settings: { index: { number_of_shards: '1', number_of_replicas: '0' } },
            aliases: { r: { index_routing: 'x', search_routing: 'x' } },
          },
          composed_of: [],
        },
      },
    ],
  }
  expect(await ok(api.call('admin', 'GET', '/_index_template/kept'))).toEqual(expected)
  expect(await ok(api.call('admin', 'GET', '/_index_template/kept?flat_settings=true'))).toEqual(expected)
})

test('a pattern that matches none: GET answers 404 with the empty list, DELETE 404s', async () => {
  const get = await api.call('admin', 'GET', '/_index_template/none-*')
  expect([get.status, get.body]).toEqual([404, { index_templates: [] }])
  const del = await api.call('admin', 'DELETE', '/_index_template/none-*')
  expect([del.status, del.body.error.type, del.body.error.reason]).toEqual([
    404,
    'index_template_missing_exception',
    'index_template [none-*] missing',
  ])
})

test('bodies OpenSearch refuses are refused with its reasons', async () => {
  const cases: Array<[unknown, string, string]> = [
    [{}, 'illegal_argument_exception', 'Required [index_patterns]'],
    [
      { index_patterns: ['*'], priority: 99, template: { settings: { 'index.hidden': true } } },
      'action_request_validation_exception',
      'Validation Failed: 1: global composable templates may not specify the setting index.hidden;',
    ],
    [
      { index_patterns: ['bad-*'], template: { settings: { number_of_shards: 'x' } } },
      'invalid_index_template_exception',
      'index_template [bad] invalid, cause [Validation Failed: 1: Failed to parse value [x] for setting [index.number_of_shards];]',
    ],
    [
      { index_patterns: ['bad-*'], template: { mappings: { properties: { f: { type: 'nope' } } } } },
      'illegal_argument_exception',
      'composable template [bad] template after composition is invalid',
    ],
  ]
  for (const [body, type, reason] of cases) {
    const r = await api.call('admin', 'PUT', '/_index_template/bad', body)
    expect([r.status, r.body.error.type, r.body.error.reason]).toEqual([400, type, reason])
  }
  const names = await api.call('admin', 'PUT', '/_index_template/Bad%20Name', { index_patterns: ['a b', 'c:d'] })
  expect(names.body.error.reason).toBe(
    'index_template [Bad Name] invalid, cause [Validation Failed: 1: name must not contain a space;2: name must be lower cased;' +
      '3: index_patterns [a b] must not contain a space;4: index_pattern [a b] must not contain the following characters [ , ", *, \\, <, |, ,, >, /, ?];' +
      "5: index_pattern [c:d] must not contain a ':';]",
  )
})

// `_analyze`, `_validate/query`, `_search/template` and `_render/template` over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(
    api.call('admin', 'PUT', '/docs', {
      mappings: { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' } } },
    }),
  )
  const lines = [
    { index: { _id: '1' } },
    { title: 'Quick brown fox', tag: 'animal', n: 1 },
    { index: { _id: '2' } },
    { title: 'Lazy dog', tag: 'animal', n: 2 },
    { index: { _id: '3' } },
    { title: 'Red car', tag: 'thing', n: 3 },
  ]
  await ok(api.call('admin', 'POST', '/docs/_bulk?refresh=true', lines.map((l) => JSON.stringify(l)).join('\n') + '\n'))
})
afterAll(async () => {
  await api?.stop()
})

describe('_analyze', () => {
  test('standard analyzer by default, tokens in OpenSearch shape', async () => {
    const r = await ok(api.call('admin', 'POST', '/_analyze', { text: 'The Quick 42 foxes' }))
    expect(r).toEqual({
      tokens: [
        { token: 'the', start_offset: 0, end_offset: 3, type: '<ALPHANUM>', position: 0 },
        { token: 'quick', start_offset: 4, end_offset: 9, type: '<ALPHANUM>', position: 1 },
        { token: '42', start_offset: 10, end_offset: 12, type: '<NUM>', position: 2 },
        { token: 'foxes', start_offset: 13, end_offset: 18, type: '<ALPHANUM>', position: 3 },
      ],
    })
  })

  test('analyzers, tokenizer + filters, arrays of text, field of an index', async () => {
    const kw = await ok(api.call('admin', 'GET', '/_analyze?analyzer=keyword&text=Hello%20World'))
    expect(kw.tokens).toEqual([{ token: 'Hello World', start_offset: 0, end_offset: 11, type: 'word', position: 0 }])
    const ws = await ok(
      api.call('admin', 'POST', '/_analyze', { tokenizer: 'whitespace', filter: ['lowercase', 'stop'], text: ['The Cat', 'a DOG'] }),
    )
    expect(ws.tokens.map((t: any) => [t.token, t.start_offset, t.position])).toEqual([
      ['cat', 4, 1],
      ['dog', 10, 3],
    ])
    const field = await ok(api.call('admin', 'POST', '/docs/_analyze', { field: 'tag', text: 'Mixed Case' }))
    expect(field.tokens.map((t: any) => t.token)).toEqual(['Mixed Case'])
    const text = await ok(api.call('admin', 'POST', '/docs/_analyze', { field: 'title', text: 'Mixed Case' }))
    expect(text.tokens.map((t: any) => t.token)).toEqual(['mixed', 'case'])
  })

  test("an index's own analyzers, tokenizers and filters", async () => {
    await ok(
      api.call('admin', 'PUT', '/custom', {
        settings: {
          analysis: {
            analyzer: {
              ws_lower: { type: 'custom', tokenizer: 'whitespace', filter: ['lowercase', 'no_the'] },
              std_stop: { type: 'standard', stopwords: ['a'] },
            },
            filter: { no_the: { type: 'stop', stopwords: ['the'] } },
          },
        },
        mappings: { properties: { body: { type: 'text', analyzer: 'ws_lower' } } },
      }),
    )
    const named = await ok(api.call('admin', 'POST', '/custom/_analyze', { analyzer: 'ws_lower', text: 'The Dog-House' }))
    expect(named.tokens.map((t: any) => [t.token, t.position])).toEqual([['dog-house', 1]])
    const field = await ok(api.call('admin', 'POST', '/custom/_analyze', { field: 'body', text: 'The Dog-House' }))
    expect(field.tokens.map((t: any) => t.token)).toEqual(['dog-house'])
    const std = await ok(api.call('admin', 'POST', '/custom/_analyze', { analyzer: 'std_stop', text: 'A Cat' }))
    expect(std.tokens.map((t: any) => t.token)).toEqual(['cat'])
    const filter = await ok(api.call('admin', 'POST', '/custom/_analyze', { tokenizer: 'whitespace', filter: ['no_the'], text: 'the end' }))
    expect(filter.tokens.map((t: any) => t.token)).toEqual(['end'])
    expect((await api.call('admin', 'POST', '/_analyze', { analyzer: 'ws_lower', text: 'x' })).status).toBe(400)
  })

  test('unknown analyzer, missing text: 400', async () => {
    const bad = await api.call('admin', 'POST', '/_analyze', { analyzer: 'nope', text: 'x' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.type).toBe('illegal_argument_exception')
    expect(bad.body.error.reason).toBe('failed to find global analyzer [nope]')
    const none = await api.call('admin', 'POST', '/_analyze', { analyzer: 'standard' })
    expect(none.status).toBe(400)
    expect(none.body.error.type).toBe('action_request_validation_exception')
  })
})

describe('_validate/query', () => {
  test('valid and invalid queries, explain, q=', async () => {
    expect(await ok(api.call('admin', 'POST', '/docs/_validate/query', { query: { match: { title: 'fox' } } }))).toEqual({
      _shards: { total: 1, successful: 1, failed: 0 },
      valid: true,
    })
    const ex = await ok(api.call('admin', 'POST', '/docs/_validate/query?explain=true', { query: { match: { title: 'Brown Fox' } } }))
    expect(ex.explanations).toEqual([{ index: 'docs', valid: true, explanation: 'title:brown title:fox' }])
    expect(await ok(api.call('admin', 'POST', '/docs/_validate/query', { query: { match_alll: {} } }))).toEqual({ valid: false })
    const err = await ok(api.call('admin', 'POST', '/docs/_validate/query?explain=true', { query: { match_alll: {} } }))
    expect(err.valid).toBe(false)
    expect(typeof err.error).toBe('string')
    expect((await ok(api.call('admin', 'GET', '/docs/_validate/query?q=tag:animal'))).valid).toBe(true)
    const qs = await ok(api.call('admin', 'GET', '/docs/_validate/query?explain=true&q=tag:animal'))
    expect(qs.explanations[0].explanation).toBe('tag:animal')
    const missing = await api.call('admin', 'GET', '/nope/_validate/query')
    expect(missing.status).toBe(404)
  })
})

describe('search templates', () => {
  test('inline source with params runs the search', async () => {
    const r = await ok(
      api.call('admin', 'POST', '/docs/_search/template', {
        source: { query: { term: { tag: '{{t}}' } }, size: '{{s}}', sort: [{ n: 'asc' }] },
        params: { t: 'animal', s: 1 },
      }),
    )
    expect(r.hits.total.value).toBe(2)
    expect(r.hits.hits.map((h: any) => h._id)).toEqual(['1'])
    const str = await ok(
      api.call('admin', 'POST', '/docs/_search/template', {
        source: '{"query": {"terms": {"tag": {{#toJson}}tags{{/toJson}} }}{{#sorted}}, "sort": [{"n": "desc"}]{{/sorted}} }',
        params: { tags: ['thing', 'animal'], sorted: true },
      }),
    )
    expect(str.hits.hits.map((h: any) => h._id)).toEqual(['3', '2', '1'])
  })

  test('_render/template answers the rendered body; bad templates are 400; stored ids 404', async () => {
    const r = await ok(
      api.call('admin', 'POST', '/_render/template', { source: { query: { match: { title: '{{q}}' } } }, params: { q: 'say "hi"' } }),
    )
    expect(r).toEqual({ template_output: { query: { match: { title: 'say "hi"' } } } })
    const bad = await api.call('admin', 'POST', '/_render/template', { source: '{"query": {{q}} }', params: { q: 'x' } })
    expect(bad.status).toBe(400)
    const stored = await api.call('admin', 'POST', '/docs/_search/template', { id: 'mine', params: {} })
    expect(stored.status).toBe(404)
    expect(stored.body.error.type).toBe('resource_not_found_exception')
  })
})

describe('stored scripts', () => {
  test('a stored mustache template runs by id; get, delete', async () => {
    const put = await ok(
      api.call('admin', 'PUT', '/_scripts/by-tag', { script: { lang: 'mustache', source: { query: { term: { tag: '{{t}}' } } } } }),
    )
    expect(put).toEqual({ acknowledged: true })
    const got = await ok(api.call('admin', 'GET', '/_scripts/by-tag'))
    expect(got).toEqual({ _id: 'by-tag', found: true, script: { lang: 'mustache', source: '{"query":{"term":{"tag":"{{t}}"}}}' } })
    const r = await ok(api.call('admin', 'POST', '/docs/_search/template', { id: 'by-tag', params: { t: 'thing' } }))
    expect(r.hits.hits.map((h: any) => h._id)).toEqual(['3'])
    const rendered = await ok(api.call('admin', 'POST', '/_render/template/by-tag', { params: { t: 'x' } }))
    expect(rendered).toEqual({ template_output: { query: { term: { tag: 'x' } } } })
    expect(await ok(api.call('admin', 'DELETE', '/_scripts/by-tag'))).toEqual({ acknowledged: true })
    expect((await api.call('admin', 'GET', '/_scripts/by-tag')).status).toBe(404)
    expect((await api.call('admin', 'DELETE', '/_scripts/by-tag')).status).toBe(404)
  })

  test('a stored painless script runs by id in _update_by_query and _update; bad scripts refused when stored', async () => {
    await ok(api.call('admin', 'PUT', '/_scripts/bump', { script: { lang: 'painless', source: 'ctx._source.n += params.by' } }))
    await ok(
      api.call('admin', 'POST', '/docs/_update_by_query?refresh=true', {
        query: { term: { tag: 'thing' } },
        script: { id: 'bump', params: { by: 10 } },
      }),
    )
    expect((await ok(api.call('admin', 'GET', '/docs/_doc/3')))._source.n).toBe(13)
    await ok(api.call('admin', 'POST', '/docs/_update/3', { script: { id: 'bump', params: { by: 1 } } }))
    expect((await ok(api.call('admin', 'GET', '/docs/_doc/3')))._source.n).toBe(14)
    const bad = await api.call('admin', 'PUT', '/_scripts/bad', { script: { lang: 'painless', source: 'while (true) {}' } })
    expect(bad.status).toBe(400)
    expect(bad.body.error.type).toBe('script_exception')
    const lang = await api.call('admin', 'PUT', '/_scripts/bad', { script: { lang: 'expression', source: '1' } })
    expect(lang.status).toBe(400)
    const missing = await api.call('admin', 'POST', '/docs/_update_by_query', { script: { id: 'nope' } })
    expect(missing.status).toBe(400)
    expect(missing.body.error.type).toBe('resource_not_found_exception')
    // The scripts' index is a system index: not readable through the index API.
    expect((await api.call('admin', 'GET', '/.svc-scripts/_doc/bump')).status).toBe(403)
  })
})

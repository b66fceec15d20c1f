// Malformed input to the search features, templates, _analyze, _validate/query, _rollover, geo,
// more_like_this and scripts: every case answers OpenSearch's error shape with a 4xx, never a 500.
import { expect, test } from 'bun:test'
import { startIndexApi } from './helpers'

test('bad input answers 4xx in OpenSearch error shape', async () => {
  const api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/t', {
    mappings: { properties: { m: { type: 'text' }, k: { type: 'keyword' }, g: { type: 'geo_point' }, n: { type: 'long' } } },
    aliases: { ta: {} },
  })
  await api.call('admin', 'PUT', '/t/_doc/1?refresh=true', { m: 'hello world', k: 'a', g: '1,2', n: 1 })
  const cases: Array<[string, string, unknown]> = [
    ['POST', '/t/_search', { highlight: { fields: [1] } }],
    ['POST', '/t/_search', { highlight: { fields: { m: {} }, pre_tags: 5 } }],
    ['POST', '/t/_search', { highlight: { fields: { m: {} }, fragment_size: 'x' } }],
    ['POST', '/t/_search', { query: { match: { m: 'hello' } }, highlight: { fields: { m: {} }, highlight_query: 'x' } }],
    ['POST', '/t/_search', { query: { match: { m: 'hello' } }, highlight: { fields: { m: { matched_fields: 5 } } } }],
    ['POST', '/t/_search', { query: { match: { m: 'hello' } }, highlight: { fields: { m: { pre_tags: [] } } } }],
    ['POST', '/t/_search', { query: { match: { m: 'hello' } }, highlight: { fields: { m: { number_of_fragments: -1 } } } }],
    ['POST', '/t/_search', { query: { regexp: { k: '[' } }, highlight: { fields: { '*': {} } } }],
    ['POST', '/t/_search', { collapse: { field: 5 } }],
    ['POST', '/t/_search', { collapse: { field: 'k', inner_hits: 'x' } }],
    ['POST', '/t/_search', { collapse: { field: 'k', inner_hits: { size: -1 } } }],
    ['POST', '/t/_search', { collapse: { field: 'k', inner_hits: { sort: 5 } } }],
    ['POST', '/t/_search', { collapse: { field: 'nope' } }],
    ['POST', '/t/_search', { collapse: { field: 'k' }, from: 20000 }],
    ['POST', '/t/_search', { collapse: { field: 'k' }, size: 'x' }],
    ['POST', '/t/_search', { docvalue_fields: [5] }],
    ['POST', '/t/_search', { script_fields: [] }],
    ['POST', '/_analyze', { text: 5 }],
    ['POST', '/_analyze', { text: 'x', tokenizer: {} }],
    ['POST', '/_analyze', { text: 'x', filter: [{ type: 'nope' }] }],
    ['POST', '/_analyze', { text: 'x', analyzer: 5 }],
    ['POST', '/_analyze', { text: 'x', char_filter: ['html_strip'] }],
    ['POST', '/t/_analyze', { text: 'x', field: 5 }],
    ['POST', '/nope/_analyze', { text: 'x' }],
    ['POST', '/t/_validate/query', { foo: 1 }],
    ['POST', '/_search/template', { source: 5 }],
    ['POST', '/_search/template', { source: '{{#a}}', params: {} }],
    ['POST', '/_search/template', { source: '{}', params: [] }],
    ['POST', '/_search/template', { source: '{"query": {"match_all": {}}, "foo": 1}' }],
    ['POST', '/_render/template', {}],
    ['POST', '/ta/_rollover', { conditions: [] }],
    ['POST', '/ta/_rollover', { conditions: { max_age: 'x' } }],
    ['POST', '/ta/_rollover', { conditions: { max_docs: 'x' } }],
    ['POST', '/ta/_rollover', { settings: 5 }],
    ['POST', '/ta/_rollover', { mappings: { properties: { x: { type: 'nope' } } } }],
    ['POST', '/t/_search', { query: { geo_distance: { distance: {}, g: '1,2' } } }],
    ['POST', '/t/_search', { query: { geo_distance: { distance: '1km', g: [] } } }],
    ['POST', '/t/_search', { query: { geo_distance: 5 } }],
    ['POST', '/t/_search', { query: { geo_bounding_box: { g: 5 } } }],
    ['POST', '/t/_search', { query: { geo_bounding_box: { g: { wkt: 'BBOX (a, b, c, d)' } } } }],
    ['POST', '/t/_search', { query: { more_like_this: { like: [5] } } }],
    ['POST', '/t/_search', { query: { more_like_this: { like: 'x', fields: 5, min_term_freq: 1, min_doc_freq: 1 } } }],
    ['POST', '/t/_search', { query: { more_like_this: { like: 'x', min_term_freq: 'x' } } }],
    ['POST', '/t/_search', { query: { more_like_this: { like: 'hello', min_term_freq: 1, min_doc_freq: 1, minimum_should_match: 'x' } } }],
    ['POST', '/t/_search', { query: { more_like_this: { like: { _index: 'nope', _id: '1' } } } }],
    ['POST', '/t/_search', { query: { more_like_this: 5 } }],
    ['PUT', '/_scripts/x', { script: 5 }],
    ['PUT', '/_scripts/x', { script: { lang: 'mustache', source: 5 } }],
    ['POST', '/t/_update/1', { script: 5 }],
    ['POST', '/t/_update/1', { script: { source: 'ctx._source.n /= 0' } }],
    ['POST', '/t/_update/1', { script: { source: 'ctx._source.k -= 1' } }],
    ['POST', '/t/_update/1', { script: { id: 5 } }],
  ]
  const bad: string[] = []
  for (const [m, p, b] of cases) {
    const r = await api.call('admin', m, p, b)
    if (r.status < 400 || r.status >= 500 || typeof r.body?.error?.type !== 'string')
      bad.push(`${m} ${p} ${JSON.stringify(b)} -> ${r.status} ${r.text.slice(0, 200)}`)
  }
  await api.stop()
  expect(bad).toEqual([])
})

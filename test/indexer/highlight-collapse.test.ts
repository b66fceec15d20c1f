// Search `highlight` and `collapse` over real HTTP, in OpenSearch's shapes.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { indexDocs, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const search = (body: unknown, index = 'logs') => ok(api.call('admin', 'POST', `/${index}/_search`, body))
const byId = (res: any) => Object.fromEntries(res.hits.hits.map((h: any) => [h._id, h]))

const LONG =
  'The first sentence says nothing. The second sentence mentions a fox among many other words that pad it. A third one is quiet. The fourth sentence has the fox again.'

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(
    api.call('admin', 'PUT', '/logs', {
      mappings: {
        properties: {
          message: { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } },
          host: { type: 'keyword' },
          tags: { type: 'keyword' },
          n: { type: 'long' },
          body: { type: 'text' },
        },
      },
    }),
  )
  const docs = [
    { _id: '1', message: 'Failed password for root from 10.0.0.1', host: 'web-1', tags: ['auth', 'ssh'], n: 1 },
    { _id: '2', message: 'Accepted password for alice', host: 'web-1', tags: ['auth'], n: 2 },
    { _id: '3', message: 'The quick brown fox is brown.', host: 'web-2', n: 3, body: LONG },
    { _id: '4', message: 'disk quota exceeded', host: 'db-1', n: 4 },
    { _id: '5', message: 'brown bears and quick foxes', host: 'db-1', n: 5 },
  ]
  await indexDocs(api, 'logs', docs)
})
afterAll(async () => {
  await api?.stop()
})

describe('highlight', () => {
  test("Discover's request: query_string, every field, its tags, whole values", async () => {
    const res = await search({
      sort: [{ n: { order: 'desc', unmapped_type: 'boolean' } }],
      size: 500,
      version: true,
      stored_fields: ['*'],
      script_fields: {},
      docvalue_fields: [{ field: 'n', format: 'use_field_mapping' }],
      _source: { excludes: [] },
      query: { bool: { filter: [{ query_string: { query: 'password AND host:web-1', analyze_wildcard: true } }] } },
      highlight: {
        pre_tags: ['@opensearch-dashboards-highlighted-field@'],
        post_tags: ['@/opensearch-dashboards-highlighted-field@'],
        fields: { '*': {} },
        fragment_size: 2147483647,
      },
    })
    const h = byId(res)
    expect(Object.keys(h).sort()).toEqual(['1', '2'])
    expect(h['1'].fields).toEqual({ n: [1] })
    expect(h['1']._source.host).toBe('web-1')
    expect(h['1'].highlight).toEqual({
      message: [
        'Failed @opensearch-dashboards-highlighted-field@password@/opensearch-dashboards-highlighted-field@ for root from 10.0.0.1',
      ],
      host: ['@opensearch-dashboards-highlighted-field@web-1@/opensearch-dashboards-highlighted-field@'],
    })
  })

  test('match, term, multi_match and phrase queries; require_field_match', async () => {
    const m = byId(await search({ query: { match: { message: 'quick fox' } }, highlight: { fields: { message: {} } } }))
    expect(m['3'].highlight).toEqual({ message: ['The <em>quick</em> brown <em>fox</em> is brown.'] })
    expect(m['5'].highlight).toEqual({ message: ['brown bears and <em>quick</em> foxes'] })
    const p = byId(await search({ query: { match_phrase: { message: 'quick brown' } }, highlight: { fields: { message: {} } } }))
    expect(Object.keys(p)).toEqual(['3'])
    expect(p['3'].highlight.message).toEqual(['The <em>quick</em> <em>brown</em> fox is brown.'])
    const sloppy = byId(
      await search({ query: { match_phrase: { message: { query: 'quick fox', slop: 2 } } }, highlight: { fields: { message: {} } } }),
    )
    expect(sloppy['3'].highlight.message).toEqual(['The <em>quick</em> brown <em>fox</em> is brown.'])
    const fuzzy = byId(
      await search({ query: { match: { message: { query: 'pasword', fuzziness: 'AUTO' } } }, highlight: { fields: { message: {} } } }),
    )
    expect(fuzzy['2'].highlight.message).toEqual(['Accepted <em>password</em> for alice'])
    const t = byId(await search({ query: { term: { host: 'db-1' } }, highlight: { fields: { host: {}, message: {} } } }))
    expect(t['4'].highlight).toEqual({ host: ['<em>db-1</em>'] })
    const loose = byId(
      await search({ query: { term: { host: 'db-1' } }, highlight: { require_field_match: false, fields: { message: {} } } }),
    )
    expect(loose['4'].highlight).toBeUndefined()
    const mm = byId(
      await search({ query: { multi_match: { query: 'brown', fields: ['message*'] } }, highlight: { fields: { 'message*': {} } } }),
    )
    expect(mm['3'].highlight).toEqual({ message: ['The quick <em>brown</em> fox is <em>brown</em>.'] })
  })

  test('highlight_query, fragments and number_of_fragments', async () => {
    const hq = byId(
      await search({
        query: { term: { host: 'web-2' } },
        highlight: { highlight_query: { match: { message: 'fox' } }, fields: { message: {} } },
      }),
    )
    expect(hq['3'].highlight).toEqual({ message: ['The quick brown <em>fox</em> is brown.'] })
    const frags = byId(await search({ query: { match: { body: 'fox' } }, highlight: { fields: { body: { fragment_size: 40 } } } }))
    expect(frags['3'].highlight.body).toEqual([
      'The second sentence mentions a <em>fox</em> among',
      'The fourth sentence has the <em>fox</em> again.',
    ])
    const one = byId(
      await search({ query: { match: { body: 'fox' } }, highlight: { fields: { body: { fragment_size: 40, number_of_fragments: 1 } } } }),
    )
    expect(one['3'].highlight.body).toHaveLength(1)
    const unsplit = byId(await search({ query: { match: { body: 'fox' } }, highlight: { fields: { body: { fragment_size: 0 } } } }))
    expect(unsplit['3'].highlight.body).toEqual([
      'The second sentence mentions a <em>fox</em> among many other words that pad it.',
      'The fourth sentence has the <em>fox</em> again.',
    ])
    const plain = byId(
      await search({ query: { match: { body: 'fox' } }, highlight: { type: 'plain', fields: { body: { fragment_size: 0 } } } }),
    )
    expect(plain['3'].highlight.body).toEqual([LONG.replaceAll('fox', '<em>fox</em>')])
    const whole = byId(await search({ query: { match: { body: 'fox' } }, highlight: { fields: { body: { number_of_fragments: 0 } } } }))
    expect(whole['3'].highlight.body).toEqual([LONG.replaceAll('fox', '<em>fox</em>')])
  })

  test("passages as OpenSearch's bounded sentence scanner cuts them (its own unit cases)", async () => {
    await ok(api.call('admin', 'PUT', '/passages', { mappings: { properties: { text: { type: 'text' } } } }))
    const texts = {
      long: 'The quick brown fox in a long sentence with another quick brown fox. Another sentence with brown fox.',
      short: 'A short sentence. Followed by a bigger sentence that should be truncated. And a last short sentence.',
      group: 'Two words. Followed by many words in a big sentence. One. Two. Three. And more words.',
      repeat: 'Fun  fun fun  fun  fun  fun  fun  fun  fun  fun',
    }
    const lines = Object.entries(texts).flatMap(([id, text]) => [JSON.stringify({ index: { _id: id } }), JSON.stringify({ text })])
    await ok(api.call('admin', 'POST', '/passages/_bulk?refresh=true', lines.join('\n') + '\n'))
    const passages = async (id: string, words: string[], size: number) => {
      const r = await search(
        {
          query: {
            bool: { filter: { ids: { values: [id] } }, should: words.map((w) => ({ term: { text: w } })), minimum_should_match: 1 },
          },
          highlight: { fields: { text: { fragment_size: size, number_of_fragments: 10 } } },
        },
        'passages',
      )
      return r.hits.hits[0].highlight.text
    }
    expect(await passages('long', ['quick', 'brown', 'fox'], 10)).toEqual([
      'The <em>quick</em> <em>brown</em>',
      '<em>fox</em> in a long',
      'with another <em>quick</em>',
      '<em>brown</em> <em>fox</em>.',
      'sentence with <em>brown</em>',
      '<em>fox</em>.',
    ])
    expect(await passages('short', ['sentence'], 20)).toEqual([
      'A short <em>sentence</em>.',
      'Followed by a bigger <em>sentence</em>',
      'And a last short <em>sentence</em>',
    ])
    expect(await passages('group', ['one', 'two', 'three', 'words'], 20)).toEqual([
      '<em>Two</em> <em>words</em>.',
      'Followed by many <em>words</em>',
      '<em>One</em>. <em>Two</em>. <em>Three</em>.',
      'And more <em>words</em>.',
    ])
    expect(await passages('repeat', ['fun'], 10)).toEqual([
      '<em>Fun</em>  <em>fun</em> <em>fun</em>',
      '<em>fun</em>  <em>fun</em>',
      '<em>fun</em>  <em>fun</em>  <em>fun</em>',
      '<em>fun</em>  <em>fun</em>',
    ])
  })

  test('no_match_size: the start of the value up to the word boundary after it', async () => {
    const r = await search({ query: { term: { host: 'db-1' } }, highlight: { fields: { message: { no_match_size: 6 } } } })
    expect(byId(r)['4'].highlight).toEqual({ message: ['disk quota'] })
  })

  test('scroll pages carry highlight, with the source filter kept', async () => {
    const first = await ok(
      api.call('admin', 'POST', '/logs/_search?scroll=1m', {
        size: 1,
        sort: [{ n: 'asc' }],
        _source: false,
        query: { match: { message: 'password' } },
        highlight: { fields: { message: {} } },
      }),
    )
    expect(first.hits.hits[0]._source).toBeUndefined()
    expect(first.hits.hits[0].highlight).toEqual({ message: ['Failed <em>password</em> for root from 10.0.0.1'] })
    const next = await ok(api.call('admin', 'POST', '/_search/scroll', { scroll: '1m', scroll_id: first._scroll_id }))
    expect(next.hits.hits[0].highlight).toEqual({ message: ['Accepted <em>password</em> for alice'] })
    await ok(api.call('admin', 'DELETE', '/_search/scroll', { scroll_id: first._scroll_id }))
  })

  test('_msearch answers highlight and collapse per search', async () => {
    const lines = [
      { index: 'logs' },
      { query: { match: { message: 'disk' } }, highlight: { fields: { message: {} } } },
      { index: 'logs' },
      { collapse: { field: 'host' }, sort: [{ n: 'asc' }], size: 1 },
    ]
    const r = await ok(api.call('admin', 'POST', '/_msearch', lines.map((l) => JSON.stringify(l)).join('\n') + '\n'))
    expect(r.responses[0].hits.hits[0].highlight).toEqual({ message: ['<em>disk</em> quota exceeded'] })
    expect(r.responses[1].hits.hits.map((h: any) => h.fields.host)).toEqual([['web-1']])
  })

  test('keeps the _source filter, and answers 400 for bad input', async () => {
    const res = await search({ _source: false, query: { match: { message: 'disk' } }, highlight: { fields: { message: {} } } })
    expect(res.hits.hits[0]._source).toBeUndefined()
    expect(res.hits.hits[0].highlight).toEqual({ message: ['<em>disk</em> quota exceeded'] })
    for (const bad of [{ fields: {} }, { fields: { message: {} }, type: 'nope' }, { fields: { message: { bogus: 1 } } }, 'x']) {
      const r = await api.call('admin', 'POST', '/logs/_search', { query: { match_all: {} }, highlight: bad })
      expect(r.status).toBe(400)
      expect(typeof r.body.error.type).toBe('string')
    }
    const numeric = await api.call('admin', 'POST', '/logs/_search', { query: { term: { n: 1 } }, highlight: { fields: { n: {} } } })
    expect(numeric.status).toBe(400)
    expect(numeric.body.error.type).toBe('illegal_argument_exception')
  })
})

test('stored_fields _none_ still highlights its hits, which carry neither _id nor _source (as OpenSearch 3.4)', async () => {
  const res = await search({ stored_fields: '_none_', query: { match: { message: 'disk' } }, highlight: { fields: { message: {} } } })
  expect(res.hits.hits).toEqual([{ _index: 'logs', _score: expect.any(Number), highlight: { message: ['<em>disk</em> quota exceeded'] } }])
  const r = await api.call('admin', 'POST', '/logs/_search', {
    stored_fields: '_none_',
    _source: true,
    query: { match: { message: 'disk' } },
    highlight: { fields: { message: {} } },
  })
  expect(r.status).toBe(400)
  expect(r.body.error.root_cause[0]).toEqual({
    type: 'search_exception',
    reason: '[stored_fields] cannot be disabled if [_source] is requested',
  })
})

describe('docvalue_fields', () => {
  test('keyword values sorted and unique, numbers, formats; text fields refused', async () => {
    const res = await search({
      query: { ids: { values: ['1'] } },
      docvalue_fields: ['tags', 'message.keyword', { field: 'n', format: '#.00' }],
    })
    expect(res.hits.hits[0].fields).toEqual({
      tags: ['auth', 'ssh'],
      'message.keyword': ['Failed password for root from 10.0.0.1'],
      n: ['1.00'],
    })
    const url = await ok(api.call('admin', 'GET', '/logs/_search?q=_id:2&docvalue_fields=host'))
    expect(url.hits.hits[0].fields).toEqual({ host: ['web-1'] })
    const text = await api.call('admin', 'POST', '/logs/_search', { docvalue_fields: ['message'] })
    expect(text.status).toBe(400)
    expect(text.body.error.type).toBe('illegal_argument_exception')
    const scripts = await api.call('admin', 'POST', '/logs/_search', { script_fields: { x: { script: 'doc.n' } } })
    expect(scripts.status).toBe(400)
  })
})

describe('fields and post_filter (shapes of OpenSearch 3.4)', () => {
  test('fields: source values through the mapping, in source order, with wildcards and date formats', async () => {
    await ok(
      api.call('admin', 'PUT', '/fetched', {
        mappings: {
          properties: {
            k: { type: 'keyword', ignore_above: 5 },
            n: { type: 'integer' },
            d: { type: 'date' },
            t: { type: 'text', fields: { raw: { type: 'keyword' } } },
            b: { type: 'boolean' },
          },
        },
      }),
    )
    await indexDocs(api, 'fetched', [
      { _id: '1', k: ['zz', 'aa', 'toolong'], n: '7', d: '2024-04-01T10:00:00Z', t: 'Hello World', b: 'true' },
    ])
    const res = await search({ _source: false, fields: ['k', 'n', { field: 'd', format: 'yyyy-MM-dd' }, 't*', 'b', 'missing'] }, 'fetched')
    expect(res.hits.hits[0]._source).toBeUndefined()
    expect(res.hits.hits[0].fields).toEqual({
      k: ['zz', 'aa'],
      n: [7],
      d: ['2024-04-01'],
      t: ['Hello World'],
      't.raw': ['Hello World'],
      b: [true],
    })
    // docvalue_fields render dates in a requested pattern too (they gave the ISO form before).
    const dv = await search({ _source: false, docvalue_fields: [{ field: 'd', format: 'yyyy-MM-dd HH:mm' }] }, 'fetched')
    expect(dv.hits.hits[0].fields).toEqual({ d: ['2024-04-01 10:00'] })
    const bad = await api.call('admin', 'POST', '/fetched/_search', { fields: 'k' })
    expect(bad.status).toBe(400)
    const format = await api.call('admin', 'POST', '/fetched/_search', { fields: [{ field: 'k', format: 'yyyy' }] })
    expect([format.status, format.body.error.reason]).toEqual([400, "Field [k] of type [keyword] doesn't support formats."])
    await ok(api.call('admin', 'PUT', '/sourceless', { mappings: { _source: { enabled: false }, properties: { k: { type: 'keyword' } } } }))
    await indexDocs(api, 'sourceless', [{ _id: '1', k: 'a' }])
    const none = await api.call('admin', 'POST', '/sourceless/_search', { fields: ['k'] })
    // As OpenSearch 3.4 answered: each shard's refusal under search_phase_execution_exception.
    expect([none.status, none.body.error.type, none.body.error.root_cause[0]]).toEqual([
      400,
      'search_phase_execution_exception',
      {
        type: 'illegal_argument_exception',
        reason: 'Unable to retrieve the requested [fields] since _source is disabled in the mappings for index [sourceless]',
      },
    ])
  })

  test('post_filter narrows the hits and their total, not the aggregations', async () => {
    const res = await search({
      post_filter: { term: { host: 'web-1' } },
      aggs: { hosts: { terms: { field: 'host' } } },
      sort: [{ n: 'asc' }],
    })
    expect(res.hits.total).toEqual({ value: 2, relation: 'eq' })
    expect(res.hits.hits.map((h: any) => h._id)).toEqual(['1', '2'])
    expect(res.aggregations.hosts.buckets.map((b: any) => [b.key, b.doc_count])).toEqual([
      ['db-1', 2],
      ['web-1', 2],
      ['web-2', 1],
    ])
    const scored = await search({ query: { match: { message: 'password' } }, post_filter: { term: { n: 2 } } })
    const plain = await search({ query: { match: { message: 'password' } } })
    expect(scored.hits.hits.map((h: any) => [h._id, h._score])).toEqual(
      plain.hits.hits.filter((h: any) => h._id === '2').map((h: any) => [h._id, h._score]),
    )
  })
})

describe('collapse', () => {
  test('the top hit of each group, from/size counting groups, total counting hits', async () => {
    const res = await search({ collapse: { field: 'host' }, sort: [{ n: 'desc' }] })
    expect(res.hits.total).toEqual({ value: 5, relation: 'eq' })
    expect(res.hits.hits.map((h: any) => [h._id, h.fields.host[0]])).toEqual([
      ['5', 'db-1'],
      ['3', 'web-2'],
      ['2', 'web-1'],
    ])
    const page = await search({ collapse: { field: 'host' }, sort: [{ n: 'desc' }], from: 1, size: 1 })
    expect(page.hits.hits.map((h: any) => h._id)).toEqual(['3'])
  })

  test('an index with a small result window: pages up to it, then answers the groups found', async () => {
    await ok(
      api.call('admin', 'PUT', '/small', {
        settings: { 'index.max_result_window': 12 },
        mappings: { properties: { g: { type: 'keyword' } } },
      }),
    )
    const lines = Array.from({ length: 30 }, (_, i) => [
      JSON.stringify({ index: { _id: `s${i}` } }),
      JSON.stringify({ g: i < 25 ? 'a' : `b${i}`, n: i }),
    ])
    await ok(api.call('admin', 'POST', '/small/_bulk?refresh=true', lines.flat().join('\n') + '\n'))
    const res = await ok(api.call('admin', 'POST', '/small/_search', { collapse: { field: 'g' }, size: 3, sort: [{ n: 'asc' }] }))
    // The first 12 hits hold one group only: that is all a 12-hit window can show.
    expect(res.hits.hits.map((h: any) => h.fields.g[0])).toEqual(['a'])
    const tooBig = await api.call('admin', 'POST', '/small/_search', { collapse: { field: 'g' }, size: 13 })
    expect(tooBig.status).toBe(400)
  })

  test('inner_hits per group', async () => {
    const res = await search({
      collapse: { field: 'host', inner_hits: { name: 'same_host', size: 5, sort: [{ n: 'asc' }], _source: ['n'] } },
      sort: [{ n: 'desc' }],
    })
    const web1 = res.hits.hits.find((h: any) => h.fields.host[0] === 'web-1')
    expect(web1.inner_hits.same_host.hits.total).toEqual({ value: 2, relation: 'eq' })
    // The top level's _source filter is the top level's: inner hits keep their own (here the whole source).
    const filtered = await search({ _source: false, collapse: { field: 'host', inner_hits: { name: 'x' } }, sort: [{ n: 'desc' }] })
    expect(filtered.hits.hits[0]._source).toBeUndefined()
    expect(filtered.hits.hits[0].inner_hits.x.hits.hits[0]._source.host).toBe('db-1')
    expect(web1.inner_hits.same_host.hits.hits.map((h: any) => [h._id, h._source])).toEqual([
      ['1', { n: 1 }],
      ['2', { n: 2 }],
    ])
  })

  test('in a point in time, inner hits read the same point in time', async () => {
    const pit = await ok(api.call('admin', 'POST', '/logs/_search/point_in_time?keep_alive=1m'))
    await ok(api.call('admin', 'PUT', '/logs/_doc/6?refresh=true', { message: 'late', host: 'web-1', n: 6 }), 201)
    const res = await ok(
      api.call('admin', 'POST', '/_search', {
        pit: { id: pit.pit_id },
        collapse: { field: 'host', inner_hits: { name: 'all', size: 10 } },
        sort: [{ n: 'desc' }],
      }),
    )
    const web1 = res.hits.hits.find((h: any) => h.fields.host[0] === 'web-1')
    expect(web1._id).toBe('2')
    expect(web1.inner_hits.all.hits.hits.map((h: any) => h._id).sort()).toEqual(['1', '2'])
    await ok(api.call('admin', 'DELETE', '/logs/_doc/6?refresh=true'))
    await ok(api.call('admin', 'DELETE', '/_search/point_in_time', { pit_id: pit.pit_id }))
  })

  test('refused on text fields, with scroll, with rescore', async () => {
    const text = await api.call('admin', 'POST', '/logs/_search', { collapse: { field: 'message' } })
    expect(text.status).toBe(400)
    expect(text.body.error.reason).toContain('only keywords and numbers are accepted')
    const scroll = await api.call('admin', 'POST', '/logs/_search?scroll=1m', { collapse: { field: 'host' } })
    expect(scroll.status).toBe(400)
    expect(scroll.body.error.reason).toContain('cannot use `collapse` in a scroll context')
    const missing = await api.call('admin', 'POST', '/logs/_search', { collapse: {} })
    expect(missing.status).toBe(400)
  })
})

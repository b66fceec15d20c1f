// geo_distance, geo_bounding_box and more_like_this queries over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { indexDocs, ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const ids = (res: any) => res.hits.hits.map((h: any) => h._id).sort()

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await ok(api.call('admin', 'PUT', '/places', { mappings: { properties: { loc: { type: 'geo_point' }, name: { type: 'keyword' } } } }))
  // Paris, Versailles (~17 km), Lyon (~390 km), New York; four ways of writing a point, and a geohash.
  const docs = [
    { _id: 'paris', name: 'paris', loc: { lat: 48.8566, lon: 2.3522 } },
    { _id: 'versailles', name: 'versailles', loc: '48.8049,2.1204' },
    { _id: 'lyon', name: 'lyon', loc: [4.8357, 45.764] },
    { _id: 'nyc', name: 'nyc', loc: 'POINT (-74.006 40.7128)' },
    { _id: 'hash', name: 'hash', loc: 'u09tvw0f' },
  ]
  await indexDocs(api, 'places', docs)
})
afterAll(async () => {
  await api?.stop()
})

describe('geo_distance', () => {
  test('arc distance with units, every point format', async () => {
    const near = await ok(
      api.call('admin', 'POST', '/places/_search', { query: { geo_distance: { distance: '20km', loc: { lat: 48.8566, lon: 2.3522 } } } }),
    )
    expect(ids(near)).toEqual(['hash', 'paris', 'versailles'])
    const close = await ok(
      api.call('admin', 'POST', '/places/_search', { query: { geo_distance: { distance: '5mi', loc: '48.8566,2.3522' } } }),
    )
    expect(ids(close)).toEqual(['hash', 'paris'])
    const wide = await ok(
      api.call('admin', 'POST', '/places/_search', {
        query: { bool: { filter: { geo_distance: { distance: 400000, distance_type: 'plane', loc: [2.3522, 48.8566] } } } },
      }),
    )
    expect(ids(wide)).toEqual(['hash', 'lyon', 'paris', 'versailles'])
  })

  test('bad input: 400 in OpenSearch shape', async () => {
    const noDistance = await api.call('admin', 'POST', '/places/_search', { query: { geo_distance: { loc: { lat: 1, lon: 2 } } } })
    expect(noDistance.status).toBe(400)
    expect(noDistance.body.error.type).toBe('parsing_exception')
    const unit = await api.call('admin', 'POST', '/places/_search', {
      query: { geo_distance: { distance: '3parsecs', loc: { lat: 1, lon: 2 } } },
    })
    expect(unit.status).toBe(400)
    const lat = await api.call('admin', 'POST', '/places/_search', {
      query: { geo_distance: { distance: '1km', loc: { lat: 91, lon: 2 } } },
    })
    expect(lat.status).toBe(400)
    const notGeo = await api.call('admin', 'POST', '/places/_search', {
      query: { geo_distance: { distance: '1km', name: { lat: 1, lon: 2 } } },
    })
    expect(notGeo.status).toBe(400)
    expect(notGeo.body.error.type).toBe('query_shard_exception')
    const unmapped = await ok(
      api.call('admin', 'POST', '/places/_search', { query: { geo_distance: { distance: '1km', nope: '1,2', ignore_unmapped: true } } }),
    )
    expect(unmapped.hits.hits).toEqual([])
  })
})

describe('geo_point mapping', () => {
  test('a value that is no point is refused as OpenSearch does, unless ignore_malformed', async () => {
    const bad = await api.call('admin', 'PUT', '/places/_doc/bad', { loc: 'somewhere' })
    expect(bad.status).toBe(400)
    expect(bad.body.error.type).toBe('mapper_parsing_exception')
    await ok(api.call('admin', 'PUT', '/places/_doc/many', { loc: [{ lat: 1, lon: 2 }, '3,4', [5, 6]] }), 201)
    await ok(api.call('admin', 'DELETE', '/places/_doc/many'))
    await ok(api.call('admin', 'PUT', '/loose', { mappings: { properties: { loc: { type: 'geo_point', ignore_malformed: true } } } }))
    await ok(api.call('admin', 'PUT', '/loose/_doc/1', { loc: 'somewhere' }), 201)
  })
})

describe('geo_bounding_box', () => {
  test('corners, explicit edges and WKT', async () => {
    const france = { top_left: { lat: 51, lon: -5 }, bottom_right: { lat: 42, lon: 8 } }
    expect(ids(await ok(api.call('admin', 'POST', '/places/_search', { query: { geo_bounding_box: { loc: france } } })))).toEqual([
      'hash',
      'lyon',
      'paris',
      'versailles',
    ])
    const edges = { top: 50, left: -80, bottom: 40, right: -70 }
    expect(ids(await ok(api.call('admin', 'POST', '/places/_search', { query: { geo_bounding_box: { loc: edges } } })))).toEqual(['nyc'])
    const wkt = { wkt: 'BBOX (4, 5, 46, 45)' }
    expect(ids(await ok(api.call('admin', 'POST', '/places/_search', { query: { geo_bounding_box: { loc: wkt } } })))).toEqual(['lyon'])
  })
})

describe('more_like_this', () => {
  beforeAll(async () => {
    await ok(
      api.call('admin', 'PUT', '/articles', {
        mappings: { properties: { title: { type: 'text' }, tag: { type: 'keyword' }, n: { type: 'long' } } },
      }),
    )
    const docs = [
      { _id: 'a1', title: 'ssh brute force attack on linux servers', tag: 'ssh' },
      { _id: 'a2', title: 'ssh brute force detected from many addresses', tag: 'ssh' },
      { _id: 'a3', title: 'brute force against web login forms', tag: 'web' },
      { _id: 'a4', title: 'disk full on database server', tag: 'ops' },
      { _id: 'a5', title: 'memory leak in database process', tag: 'ops' },
      { _id: 'a6', title: 'linux kernel update available', tag: 'ops' },
    ]
    await indexDocs(api, 'articles', docs)
  })

  test('like text: terms chosen by tf-idf, minimum_should_match', async () => {
    const r = await ok(
      api.call('admin', 'POST', '/articles/_search', {
        query: { more_like_this: { fields: ['title'], like: 'ssh brute force', min_term_freq: 1, min_doc_freq: 1 } },
      }),
    )
    expect(ids(r)).toEqual(['a1', 'a2', 'a3'])
    const strict = await ok(
      api.call('admin', 'POST', '/articles/_search', {
        query: {
          more_like_this: { fields: ['title'], like: 'ssh brute force', min_term_freq: 1, min_doc_freq: 1, minimum_should_match: '100%' },
        },
      }),
    )
    expect(ids(strict)).toEqual(['a1', 'a2'])
    // The defaults (min_term_freq 2, min_doc_freq 5) leave nothing to look for in a short text: no hits, as OpenSearch.
    const defaults = await ok(
      api.call('admin', 'POST', '/articles/_search', { query: { more_like_this: { fields: ['title'], like: 'ssh brute force' } } }),
    )
    expect(defaults.hits.hits).toEqual([])
  })

  test('like documents: their terms, the documents themselves left out unless include', async () => {
    const r = await ok(
      api.call('admin', 'POST', '/articles/_search', {
        query: {
          more_like_this: {
            fields: ['title', 'tag'],
            like: [{ _index: 'articles', _id: 'a1' }],
            min_term_freq: 1,
            min_doc_freq: 1,
          },
        },
      }),
    )
    // 8 terms (7 title words, one tag): 30% = 2 of them at least
    expect(ids(r)).toEqual(['a2', 'a3'])
    const inc = await ok(
      api.call('admin', 'POST', '/articles/_search', {
        query: { more_like_this: { fields: ['title'], like: [{ _id: 'a4' }], min_term_freq: 1, min_doc_freq: 1, include: true } },
      }),
    )
    expect(ids(inc)).toContain('a4')
    expect(ids(inc)).toContain('a5')
    const count = await ok(
      api.call('admin', 'POST', '/articles/_count', {
        query: { more_like_this: { fields: ['title'], like: 'database', min_term_freq: 1, min_doc_freq: 1 } },
      }),
    )
    expect(count.count).toBe(2)
  })

  test('an index with a small result window samples what it allows', async () => {
    await ok(api.call('admin', 'PUT', '/articles/_settings', { index: { max_result_window: 2 } }))
    try {
      const r = await ok(
        api.call('admin', 'POST', '/articles/_search', {
          size: 2,
          query: { more_like_this: { fields: ['title'], like: 'brute force', min_term_freq: 1, min_doc_freq: 1 } },
        }),
      )
      expect(r.hits.total.value).toBe(3)
    } finally {
      await ok(api.call('admin', 'PUT', '/articles/_settings', { index: { max_result_window: 10000 } }))
    }
  })

  test('bad input answers 400', async () => {
    const noLike = await api.call('admin', 'POST', '/articles/_search', { query: { more_like_this: { fields: ['title'] } } })
    expect(noLike.status).toBe(400)
    expect(noLike.body.error.type).toBe('illegal_argument_exception')
    const unknown = await api.call('admin', 'POST', '/articles/_search', { query: { more_like_this: { like: 'x', bogus: 1 } } })
    expect(unknown.status).toBe(400)
    expect(unknown.body.error.type).toBe('parsing_exception')
    const numeric = await api.call('admin', 'POST', '/articles/_search', { query: { more_like_this: { like: 'x', fields: ['n'] } } })
    expect(numeric.status).toBe(400)
  })
})

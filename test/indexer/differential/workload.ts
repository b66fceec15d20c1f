/**
 * A seeded workload of index API calls, the same for both targets. A call may be built from the
 * target's own earlier answers (search_after, PIT, scroll, composite paging, `if_seq_no`), so each
 * side pages and conditions on what it answered itself.
 */
import { document, MAPPING, sentence } from './documents'
import { aggregations, composite, query, scoredQuery, sortClause } from './queries'
import { Random } from './random'

export interface Request {
  method: string
  path: string
  body?: unknown
  /** Lines of an NDJSON body (_bulk). */
  ndjson?: unknown[]
}

export interface Answer {
  status: number
  body: any
}

export interface Op {
  name: string
  /** A fixed request, or one made from this target's earlier answers (the last one first). */
  request: Request | ((history: Answer[]) => Request)
}

type Json = Record<string, unknown>

const last = (h: Answer[], back = 1) => h[h.length - back]?.body ?? {}

/** A search page whose sort values carry into the next page's `search_after`. */
function after(h: Answer[]): unknown[] | undefined {
  const hits = last(h).hits?.hits ?? []
  return hits.length > 0 ? hits[hits.length - 1].sort : undefined
}

function setup(index: string, r: Random, docs: Json[]): Op[] {
  const lines = docs.flatMap((d, i) => [{ index: { _index: index, _id: `d${i}` } }, d])
  return [
    {
      name: 'create index',
      request: { method: 'PUT', path: `/${index}`, body: { settings: { number_of_replicas: 0 }, mappings: MAPPING } },
    },
    { name: 'create existing index', request: { method: 'PUT', path: `/${index}`, body: {} } },
    { name: 'bulk load', request: { method: 'POST', path: '/_bulk?refresh=true', ndjson: lines } },
    { name: 'mapping after dynamic fields', request: { method: 'GET', path: `/${index}/_mapping` } },
    { name: 'get by id', request: { method: 'GET', path: `/${index}/_doc/d${r.int(0, docs.length - 1)}` } },
    { name: 'get missing id', request: { method: 'GET', path: `/${index}/_doc/nope` } },
    { name: 'count all', request: { method: 'GET', path: `/${index}/_count` } },
  ]
}

function mixedBulk(index: string, r: Random, docs: Json[]): Op {
  const n = docs.length
  const lines: unknown[] = [
    { index: { _index: index, _id: 'x1' } },
    document(r, n + 1),
    { index: { _index: index, _id: 'bad-long' } },
    { seq: n + 2, n_long: 'not a number' },
    { create: { _index: index, _id: 'd0' } },
    { seq: n + 3 },
    { update: { _index: index, _id: 'missing' } },
    { doc: { kw: 'z' } },
    { update: { _index: index, _id: `d${r.int(1, n - 1)}` } },
    { doc: { kw: 'updated', n_int: 5 } },
    { delete: { _index: index, _id: 'never-was' } },
    { delete: { _index: index, _id: `d${n - 1}` } },
    { index: { _index: index, _id: 'bad-date' } },
    { seq: n + 4, ts: 'yesterday-ish' },
    { index: { _index: index, _id: 'bad-byte' } },
    { seq: n + 5, n_byte: 300 },
    { index: { _index: index, _id: 'bad-ip' } },
    { seq: n + 6, addr: '999.1.1.1' },
    { index: { _index: index, _id: 'bad-bool' } },
    { seq: n + 7, flag: 'maybe' },
  ]
  return { name: 'bulk with mixed failures', request: { method: 'POST', path: '/_bulk?refresh=true', ndjson: lines } }
}

function conditionalUpdates(index: string, r: Random): Op[] {
  const id = `d${r.int(1, 10)}`
  const cond = (h: Answer[], back: number) => `if_seq_no=${last(h, back)._seq_no}&if_primary_term=${last(h, back)._primary_term}`
  return [
    { name: 'get before conditional update', request: { method: 'GET', path: `/${index}/_doc/${id}` } },
    {
      name: 'update with current if_seq_no',
      request: (h) => ({ method: 'POST', path: `/${index}/_update/${id}?refresh=true&${cond(h, 1)}`, body: { doc: { kw: 'cas' } } }),
    },
    {
      name: 'index with stale if_seq_no',
      request: (h) => ({ method: 'PUT', path: `/${index}/_doc/${id}?refresh=true&${cond(h, 2)}`, body: { seq: 0 } }),
    },
    { name: 'get after conditional update', request: { method: 'GET', path: `/${index}/_doc/${id}` } },
  ]
}

function paging(index: string, r: Random, docs: Json[]): Op[] {
  const q = query(r, docs)
  // Keyword sorts: a missing number's sort value (2^63 - 1) does not survive a JavaScript round trip.
  const sort = sortClause(r, true)
  const size = r.int(2, 6)
  const page = (h: Answer[]) => ({ size, sort, query: q, search_after: after(h) })
  const comp = composite(r)
  const compPage = (h: Answer[]) => ({
    size: 0,
    aggs: { c: { composite: { ...(comp.composite as Json), after: last(h).aggregations?.c?.after_key } } },
  })
  const pit = (h: Answer[]) => ({ size, sort, pit: { id: last(h).pit_id ?? last(h).pit?.id, keep_alive: '1m' }, search_after: after(h) })
  const scrollId = (h: Answer[]) => last(h)._scroll_id
  return [
    { name: 'search_after page 1', request: { method: 'POST', path: `/${index}/_search`, body: { size, sort, query: q } } },
    { name: 'search_after page 2', request: (h) => ({ method: 'POST', path: `/${index}/_search`, body: page(h) }) },
    { name: 'search_after page 3', request: (h) => ({ method: 'POST', path: `/${index}/_search`, body: page(h) }) },
    { name: 'composite page 1', request: { method: 'POST', path: `/${index}/_search`, body: { size: 0, aggs: { c: comp } } } },
    { name: 'composite page 2', request: (h) => ({ method: 'POST', path: `/${index}/_search`, body: compPage(h) }) },
    { name: 'composite page 3', request: (h) => ({ method: 'POST', path: `/${index}/_search`, body: compPage(h) }) },
    { name: 'open PIT', request: { method: 'POST', path: `/${index}/_search/point_in_time?keep_alive=1m` } },
    { name: 'PIT page 1', request: (h) => ({ method: 'POST', path: '/_search', body: pit(h) }) },
    { name: 'PIT page 2', request: (h) => ({ method: 'POST', path: '/_search', body: pit(h) }) },
    { name: 'close PIT', request: (h) => ({ method: 'DELETE', path: '/_search/point_in_time', body: { pit_id: [last(h).pit_id] } }) },
    { name: 'scroll open', request: { method: 'POST', path: `/${index}/_search?scroll=1m`, body: { size, sort: [{ seq: 'asc' }] } } },
    { name: 'scroll next', request: (h) => ({ method: 'POST', path: '/_search/scroll', body: { scroll: '1m', scroll_id: scrollId(h) } }) },
    { name: 'scroll next', request: (h) => ({ method: 'POST', path: '/_search/scroll', body: { scroll: '1m', scroll_id: scrollId(h) } }) },
    { name: 'scroll clear', request: (h) => ({ method: 'DELETE', path: '/_search/scroll', body: { scroll_id: scrollId(h) } }) },
  ]
}

function errors(index: string): Op[] {
  const search = (name: string, body: unknown, path = `/${index}/_search`): Op => ({ name, request: { method: 'POST', path, body } })
  return [
    search('search a missing index', {}, '/diff-missing/_search'),
    search('unknown query', { query: { nope: {} } }),
    search('term on two fields', { query: { term: { kw: 'a', tags: 'b' } } }),
    search('unknown aggregation', { aggs: { a: { nope: { field: 'kw' } } } }),
    search('terms on a text field', { aggs: { a: { terms: { field: 'msg' } } } }),
    search('date_histogram without interval', { aggs: { a: { date_histogram: { field: 'ts' } } } }),
    search('size over the window', { from: 9995, size: 10 }),
    search('negative size', { size: -2 }),
    search('unknown top-level key', { querry: {} }),
    search('sort on a text field', { sort: [{ msg: 'asc' }] }),
    { name: 'get from a missing index', request: { method: 'GET', path: '/diff-missing/_doc/1' } },
    { name: 'delete a missing doc', request: { method: 'DELETE', path: `/${index}/_doc/nope?refresh=true` } },
    { name: 'index a wrongly typed value', request: { method: 'PUT', path: `/${index}/_doc/w?refresh=true`, body: { n_int: 'x' } } },
    { name: 'update a missing doc', request: { method: 'POST', path: `/${index}/_update/nope`, body: { doc: { a: 1 } } } },
  ]
}

/**
 * Random searches. Scored ones only before any update: OpenSearch keeps a replaced document in its
 * BM25 statistics until segments merge, so scores after updates legitimately differ.
 */
function searches(index: string, r: Random, docs: Json[], count: number, scored: boolean): Op[] {
  const ops: Op[] = []
  for (let i = 0; i < count; i++) {
    const kind = r.int(0, 3)
    if (kind === 0 && scored) {
      const body: Json = { size: 100, query: r.chance(0.3) ? { match: { msg: sentence(r, 1, 3) } } : scoredQuery(r) }
      // Scores as a sort key among others, or kept beside a field sort.
      if (r.chance(0.25))
        Object.assign(
          body,
          r.pick([{ sort: ['_score', { seq: 'desc' }] }, { sort: [{ flag: 'asc' }, '_score', { seq: 'asc' }], track_scores: true }]),
        )
      if (r.chance(0.2)) body.min_score = r.pick([0.3, 0.8, 1.2])
      ops.push({ name: 'scored search', request: { method: 'POST', path: `/${index}/_search`, body } })
    } else if (kind === 0)
      ops.push({
        name: 'filtered search',
        request: { method: 'POST', path: `/${index}/_search`, body: { size: 100, query: { constant_score: { filter: query(r, docs) } } } },
      })
    else if (kind === 1) {
      const body = {
        from: r.int(0, 5),
        size: r.int(1, 10),
        sort: sortClause(r),
        query: query(r, docs),
        _source: r.pick([true, ['seq', 'kw']]),
      }
      ops.push({ name: 'sorted search', request: { method: 'POST', path: `/${index}/_search`, body } })
    } else if (kind === 2) {
      const body = { size: 0, query: r.chance(0.5) ? query(r, docs) : { match_all: {} }, aggs: aggregations(r) }
      ops.push({ name: 'aggregations', request: { method: 'POST', path: `/${index}/_search`, body } })
    } else ops.push({ name: 'count', request: { method: 'POST', path: `/${index}/_count`, body: { query: query(r, docs) } } })
  }
  return ops
}

/**
 * Multi-document calls, partial and scripted updates, by-query writes and search options a client
 * sets (source filters, `fields`, `track_total_hits`, `post_filter`, `version`, highlights).
 */
function moreCalls(index: string, r: Random, docs: Json[]): Op[] {
  const id = () => `d${r.int(0, docs.length - 1)}`
  const search = (name: string, body: unknown): Op => ({ name, request: { method: 'POST', path: `/${index}/_search`, body } })
  const ndjson = (lines: unknown[]) => lines
  const word = sentence(r, 1, 1)
  return [
    { name: 'mget by ids', request: { method: 'POST', path: `/${index}/_mget`, body: { ids: [id(), 'nope', id()] } } },
    {
      name: 'mget docs with source filters',
      request: {
        method: 'POST',
        path: '/_mget',
        body: {
          docs: [
            { _index: index, _id: id(), _source: ['seq', 'user.*'] },
            { _index: index, _id: id(), _source: false },
            { _index: 'diff-missing', _id: 'x' },
          ],
        },
      },
    },
    {
      name: 'msearch',
      request: {
        method: 'POST',
        path: '/_msearch',
        ndjson: ndjson([
          { index },
          { size: 2, sort: [{ seq: 'asc' }], query: query(r, docs) },
          { index: 'diff-missing' },
          { query: { match_all: {} } },
          { index },
          { size: 0, aggs: { k: { terms: { field: 'kw' } } } },
        ]),
      },
    },
    search('source includes and excludes', {
      size: 3,
      sort: [{ seq: 'asc' }],
      _source: { includes: ['user.*', 'n_*', 'kw'], excludes: ['n_long', 'user.age'] },
    }),
    search('fields and docvalue_fields', {
      size: 3,
      sort: [{ seq: 'desc' }],
      _source: false,
      fields: ['kw', 'n_int', { field: 'ts', format: 'yyyy-MM-dd' }, 'user.*'],
      docvalue_fields: ['seq', { field: 'day', format: 'epoch_millis' }],
    }),
    search('track_total_hits as a bound', { size: 1, sort: [{ seq: 'asc' }], track_total_hits: r.pick([false, 5, 100, true]) }),
    search('post_filter with aggregations', {
      size: 5,
      sort: [{ seq: 'asc' }],
      post_filter: { term: { flag: true } },
      aggs: { f: { terms: { field: 'flag' } } },
    }),
    search('version and seq_no', {
      size: 2,
      sort: [{ seq: 'asc' }],
      version: true,
      seq_no_primary_term: true,
      query: { ids: { values: [id(), id()] } },
    }),
    search('sort an array by its mode', {
      size: 5,
      sort: [{ n_short: { order: r.pick(['asc', 'desc']), mode: r.pick(['min', 'max', 'sum', 'avg']) } }, { seq: 'asc' }],
    }),
    search('sort on an unmapped field', { size: 3, sort: [{ nothing_here: { order: 'asc', unmapped_type: 'long' } }, { seq: 'asc' }] }),
    search('sort on an unmapped field without unmapped_type', { size: 3, sort: [{ nothing_here: 'asc' }] }),
    search('sort with a missing value', { size: 5, sort: [{ kw: { order: 'asc', missing: 'zzz' } }, { seq: 'asc' }], _source: ['kw'] }),
    // Which documents come first is each store's own order once documents were updated: the count only.
    search('terminate_after', { size: 0, terminate_after: r.int(1, 50), query: { exists: { field: 'kw' } } }),
    search('from past the hits', { from: 60, size: 5, sort: [{ seq: 'asc' }] }),
    search('composite with a histogram source', {
      size: 0,
      aggs: {
        c: {
          composite: {
            size: 4,
            sources: [
              { h: { histogram: { field: 'n_short', interval: 1000, order: r.pick(['asc', 'desc']) } } },
              { k: { terms: { field: 'kw', missing_bucket: true } } },
            ],
          },
        },
      },
    }),
    search('highlight', {
      size: 3,
      sort: [{ seq: 'asc' }],
      _source: false,
      query: { match: { msg: word } },
      highlight: { fields: { msg: {} } },
    }),
    { name: 'count with q', request: { method: 'GET', path: `/${index}/_count?q=msg:${encodeURIComponent(word)}` } },
    {
      name: 'partial update',
      request: { method: 'POST', path: `/${index}/_update/${id()}?refresh=true`, body: { doc: { kw: 'patched', user: { age: 3 } } } },
    },
    {
      name: 'update with a script',
      request: {
        method: 'POST',
        path: `/${index}/_update/${id()}?refresh=true`,
        body: { script: { source: 'ctx._source.seq_copy = params.n; ctx._source.tags = params.t', params: { n: 7, t: ['s1', 's2'] } } },
      },
    },
    {
      name: 'upsert',
      request: { method: 'POST', path: `/${index}/_update/u1?refresh=true`, body: { doc: { kw: 'up' }, doc_as_upsert: true } },
    },
    { name: 'get the upsert', request: { method: 'GET', path: `/${index}/_doc/u1` } },
    { name: 'noop update', request: { method: 'POST', path: `/${index}/_update/u1`, body: { doc: { kw: 'up' } } } },
    {
      name: 'update_by_query',
      request: {
        method: 'POST',
        path: `/${index}/_update_by_query?refresh=true`,
        body: { query: { term: { flag: true } }, script: { source: "ctx._source.kw = 'ubq'" } },
      },
    },
    search('after update_by_query', { size: 50, sort: [{ seq: 'asc' }], _source: ['kw', 'seq'], query: { term: { kw: 'ubq' } } }),
    {
      name: 'delete_by_query',
      request: {
        method: 'POST',
        path: `/${index}/_delete_by_query?refresh=true`,
        body: { query: { range: { seq: { gte: r.int(20, 40) } } } },
      },
    },
    { name: 'count after delete_by_query', request: { method: 'GET', path: `/${index}/_count` } },
    ...geo(index, r),
  ]
}

/** Geo aggregations and the `_geo_distance` sort over `loc` (docs without it sort as infinitely far, then by seq); an auto_date_histogram. */
function geo(index: string, r: Random): Op[] {
  const origin = r.pick<unknown>(['52.37,4.89', { lat: 0, lon: 0 }, [151.2, -33.8], 'u173zq'])
  const aggs = r.pick<Json>([
    { g: { geotile_grid: { field: 'loc', precision: r.pick([0, 2, 5, 9]) }, aggs: { c: { geo_centroid: { field: 'loc' } } } } },
    { g: { geohash_grid: { field: 'loc', precision: r.pick([1, 3, 6, 12]), size: r.int(1, 20) } } },
    { g: { geo_bounds: { field: 'loc', wrap_longitude: r.chance(0.5) } }, c: { geo_centroid: { field: 'loc' } } },
    {
      g: {
        geo_distance: {
          field: 'loc',
          origin,
          unit: r.pick(['km', 'mi']),
          ranges: [{ to: 1000 }, { from: 1000, to: 5000 }, { from: 5000, ...(r.chance(0.5) ? { key: 'far' } : {}) }],
          ...(r.chance(0.3) ? { keyed: true, distance_type: 'plane' } : {}),
        },
        aggs: { m: { max: { field: 'seq' } } },
      },
    },
  ])
  const sort = [{ _geo_distance: { loc: origin, order: r.pick(['asc', 'desc']), unit: r.pick(['km', 'm']) } }, { seq: 'asc' }]
  const auto = {
    auto_date_histogram: { field: r.pick(['ts', 'day']), buckets: r.int(1, 12) },
    ...(r.chance(0.5) ? { aggs: { m: { max: { field: 'seq' } } } } : {}),
  }
  return [
    { name: 'auto date histogram', request: { method: 'POST', path: `/${index}/_search`, body: { size: 0, aggs: { h: auto } } } },
    { name: 'geo aggregations', request: { method: 'POST', path: `/${index}/_search`, body: { size: 0, aggs } } },
    { name: 'geo distance sort', request: { method: 'POST', path: `/${index}/_search`, body: { size: 10, _source: ['seq'], sort } } },
  ]
}

/** Aliases (one filtered) and what a client reads back about the index. */
function indexAdmin(index: string, r: Random): Op[] {
  const alias = `${index}-alias`
  const filtered = `${index}-filtered`
  const search = (name: string, path: string, body: unknown): Op => ({ name, request: { method: 'POST', path, body } })
  return [
    {
      name: 'add aliases',
      request: {
        method: 'POST',
        path: '/_aliases',
        body: {
          actions: [
            { add: { index, alias } },
            { add: { index, alias: filtered, filter: { term: { flag: r.chance(0.5) } }, is_write_index: true } },
          ],
        },
      },
    },
    { name: 'get aliases', request: { method: 'GET', path: `/${index}/_alias` } },
    { name: 'get one alias', request: { method: 'GET', path: `/_alias/${filtered}` } },
    { name: 'alias exists', request: { method: 'HEAD', path: `/_alias/${alias}` } },
    search('search a filtered alias', `/${filtered}/_search`, { size: 5, sort: [{ seq: 'asc' }], _source: ['seq', 'flag'] }),
    { name: 'count through an alias', request: { method: 'GET', path: `/${alias}/_count` } },
    {
      name: 'write through the write alias',
      request: { method: 'PUT', path: `/${filtered}/_doc/via-alias?refresh=true`, body: { seq: 99 } },
    },
    { name: 'get through an alias', request: { method: 'GET', path: `/${alias}/_doc/via-alias` } },
    {
      name: 'remove an alias',
      request: { method: 'POST', path: '/_aliases', body: { actions: [{ remove: { index, alias } }] } },
    },
    { name: 'get a removed alias', request: { method: 'GET', path: `/_alias/${alias}` } },
    { name: 'get a field mapping', request: { method: 'GET', path: `/${index}/_mapping/field/user.*,msg.raw` } },
    {
      name: 'put a mapping',
      request: { method: 'PUT', path: `/${index}/_mapping`, body: { properties: { added: { type: 'keyword' }, kw: { type: 'long' } } } },
    },
    { name: 'index exists', request: { method: 'HEAD', path: `/${index}` } },
    { name: 'delete the filtered alias', request: { method: 'DELETE', path: `/${index}/_alias/${filtered}` } },
  ]
}

/** The whole workload of one seed; `searchCount` random searches between the fixed parts. */
export function workload(seed: number, searchCount: number): { index: string; ops: Op[] } {
  const r = new Random(seed)
  const index = `diff-${seed}`
  const docs = Array.from({ length: r.int(25, 45) }, (_, i) => document(r, i))
  const ops = [
    ...setup(index, r, docs),
    ...searches(index, r, docs, Math.ceil(searchCount / 2), true),
    mixedBulk(index, r, docs),
    ...conditionalUpdates(index, r),
    ...paging(index, r, docs),
    ...searches(index, r, docs, Math.floor(searchCount / 2), false),
    ...moreCalls(index, r, docs),
    ...indexAdmin(index, r),
    ...errors(index),
  ]
  return { index, ops }
}

/** Random queries and aggregations over the differential index, built from values its documents hold. */
import { ALIAS_OF, FIELDS, sentence, valuesOf } from './documents'
import type { Random } from './random'

type Docs = Record<string, unknown>[]
type Json = Record<string, unknown>

const ALL_NUMERIC = [...FIELDS.integral, ...FIELDS.fractional]
// What is not generated, because the embedded store answers it differently on purpose or for now
// (each listed in the README, "Differences between the modes"): scores of `match_only_text` (`title`)
// and of non-text clauses, terms buckets of `min_doc_count: 0`, sorts on `ip`, `scaled_float` values
// read back (sums, sort values), fixed intervals in a time zone with daylight saving, percentiles
// (t-digest interpolation), a `missing` sort value of a number or date (OpenSearch's own extreme,
// which a JavaScript number cannot carry back in `search_after`).
// n_double holds 1e300 and -1e300: their sums cancel, and what is left depends on the order of addition.
const AGG_NUMERIC = ALL_NUMERIC.filter((f) => f !== 'n_scaled' && f !== 'n_double')

function someValue(r: Random, docs: Docs, field: string): unknown {
  const values = valuesOf(docs, field)
  return values.length > 0 ? r.pick(values) : 'absent'
}

/** A leaf query, naming its field by its alias now and then (the field's values, read through the alias). */
function leaf(r: Random, docs: Docs): Json {
  const q = fieldLeaf(r, docs)
  if (!r.chance(0.15)) return q
  const [type, body] = Object.entries(q)[0] as [string, Json]
  if (type === 'exists')
    return typeof body.field === 'string' && ALIAS_OF[body.field] ? { exists: { ...body, field: ALIAS_OF[body.field] } } : q
  const keys = Object.keys(body)
  return keys.length === 1 && ALIAS_OF[keys[0]] ? { [type]: { [ALIAS_OF[keys[0]]]: body[keys[0]] } } : q
}

function fieldLeaf(r: Random, docs: Docs): Json {
  if (r.chance(0.3)) return moreLeaf(r, docs)
  switch (r.int(0, 13)) {
    case 0: {
      const f = r.pick([...FIELDS.keyword, ...FIELDS.integral, ...FIELDS.boolean, ...FIELDS.ip])
      return { term: { [f]: someValue(r, docs, f) } }
    }
    case 1: {
      const f = r.pick(FIELDS.keyword)
      return { terms: { [f]: [someValue(r, docs, f), someValue(r, docs, f), 'nothing'] } }
    }
    case 2: {
      const f = r.pick(ALL_NUMERIC)
      const [a, b] = [someValue(r, docs, f), someValue(r, docs, f)].map(Number).sort((x, y) => x - y)
      return { range: { [f]: { [r.pick(['gt', 'gte'])]: a, [r.pick(['lt', 'lte'])]: b } } }
    }
    case 3: {
      const f = 'ts'
      // A term on a date names every instant of its value (a whole day, an hour...); `day` reads yyyy-MM-dd only.
      if (r.chance(0.1)) return { term: { day: r.pick(['2024-03-31', '2024-03-26']) } }
      if (r.chance(0.1)) return { term: { ts: r.pick(['2024-03-31', '2024-04-01T15', '2024-03-26', '2024-04-01T15:29:00Z']) } }
      // A pattern format reads a bound strictly (a bound it cannot read fails the query); the field's own (`day`) too.
      if (r.chance(0.15))
        return {
          range: {
            [r.pick(['ts', 'day'])]: {
              [r.pick(['gte', 'lte', 'gt', 'lt'])]: r.pick(['2024-03-29', '29/03/2024', '2024-03-29 10:15', '2024-3-29', '20240329']),
              ...(r.chance(0.7) ? { format: r.pick(['yyyy-MM-dd', 'dd/MM/yyyy', 'yyyy-MM-dd HH:mm', 'yyyyMMdd']) } : {}),
            },
          },
        }
      const from = r.pick(['2024-03-27T00:00:00Z', '2024-03-29T12:00:00+02:00', 'now-10y', '2024-03-30T22:00:00', '2024-03-31||/d'])
      const to = r.pick(['2024-04-02', '2024-04-05T10:00:00Z', 'now', '2024-03-31T03:00:00||+1d/d', '2024-04-01||/M'])
      // A time zone reads the bounds without an offset and places their rounding (DST moves on 2024-03-31 in Europe).
      return { range: { [f]: { gte: from, [r.pick(['lt', 'lte'])]: to, ...(r.chance(0.5) ? { time_zone: r.pick(ZONES) } : {}) } } }
    }
    case 4:
      return { match: { msg: sentence(r, 1, 3) } }
    case 5:
      return { match_phrase: { msg: sentence(r, 2, 2) } }
    case 6:
      return { exists: { field: r.pick([...FIELDS.keyword, ...ALL_NUMERIC, ...FIELDS.date, 'loc', 'labels', 'deep']) } }
    case 7:
      return { prefix: { kw: Array.from(String(someValue(r, docs, 'kw')))[0] } }
    case 8:
      return { wildcard: { [r.pick(['kw', 'user.name', 'tags'])]: { value: r.pick(['*a*', 'l?wer', 'x-*', '*😀']) } } }
    case 9:
      return { ids: { values: [`d${r.int(0, 40)}`, `d${r.int(0, 40)}`] } }
    case 10:
      return { query_string: { query: queryString(r, docs), ...(r.chance(0.3) ? { time_zone: r.pick(ZONES) } : {}) } }
    case 11:
      return { simple_query_string: { query: `${sentence(r, 1, 2)} ${r.pick(['-', '+', '| ', ''])}${sentence(r, 1, 1)}`, fields: ['msg'] } }
    case 12:
      return { term: { [`labels.${r.pick(['env', 'nested.code'])}`]: String(someValue(r, docs, 'labels.env')) } }
    default:
      return { match_all: {} }
  }
}

/** Less common leaves: full-text variants, fuzzy and regexp terms, keyword ranges, case-insensitive terms. */
function moreLeaf(r: Random, docs: Docs): Json {
  const kwValue = () => String(someValue(r, docs, r.pick(['kw', 'user.name'])))
  // case_insensitive folds ASCII letters only in OpenSearch, all letters here (README): ASCII values.
  const asciiValue = () => r.pick(['lower', 'UPPER', 'a', 'x-y', 'with space', kwValue().replace(/[^\x20-\x7e]/g, '')])
  switch (r.int(0, 13)) {
    case 10:
      return { term: { addr: r.pick(['10.0.0.0/8', '192.168.0.0/16', '::1/128', '2001:db8::/32', '172.16.5.4/32']) } }
    case 11:
      return { exists: { field: r.pick(['user', 'items', 'labels']) } }
    case 12:
      return {
        query_string: {
          query: r.pick(['kw:/l.*/', 'msg:fxo~', 'user.\\*:a', 'msg:qu?ck AND NOT kw:a', 'kw:(a OR b) AND n_int:>0', '_exists_:user.name']),
        },
      }
    case 13:
      return { range: { addr: { gte: '10.0.0.0', lte: '10.255.255.255' } } }
    case 0:
      return { match: { msg: { query: sentence(r, 2, 3), operator: r.pick(['and', 'or']) } } }
    case 1:
      return { match: { msg: { query: sentence(r, 2, 4), minimum_should_match: r.pick(['2', '50%', '-1', '75%']) } } }
    case 2:
      return { match_phrase_prefix: { msg: `${sentence(r, 1, 1)} ${r.pick(['a', 'e', 'f', 'l', 'q'])}` } }
    case 3:
      return { match_bool_prefix: { msg: `${sentence(r, 1, 2)} ${r.pick(['b', 'g', 'z'])}` } }
    case 4: {
      const type = r.pick(MULTI)
      // phrase_prefix refuses a keyword field: one at most, as OpenSearch names the first in no set order.
      const fields =
        type === 'phrase_prefix' ? r.pick([['msg'], ['msg', 'kw'], ['user.name']]) : r.some(['msg', 'kw', 'user.name', 'msg.raw'], 1, 3)
      return { multi_match: { query: sentence(r, 1, 2), fields, type } }
    }
    case 5:
      return { fuzzy: { kw: { value: kwValue().slice(0, 8) + r.pick(['', 'x']), fuzziness: r.pick(['AUTO', 1, 2]) } } }
    case 6:
      return { regexp: { [r.pick(['kw', 'user.name', 'tags'])]: r.pick(['l.*', '[a-c]', '.*e.*', 'x-[a-z]', 'UP+ER', '.{1,3}']) } }
    case 7: {
      const [a, b] = [kwValue(), kwValue()].sort()
      return { range: { kw: { [r.pick(['gt', 'gte'])]: a, [r.pick(['lt', 'lte'])]: b } } }
    }
    case 8:
      return { term: { kw: { value: asciiValue().toLowerCase(), case_insensitive: true } } }
    default:
      return { prefix: { 'user.name': { value: asciiValue().slice(0, 1).toUpperCase(), case_insensitive: true } } }
  }
}

const MULTI = ['best_fields', 'most_fields', 'phrase', 'phrase_prefix', 'bool_prefix']

/**
 * A query whose scores compare: full-text clauses on `msg` (BM25 equal within the tolerance), in
 * the compound queries that combine scores (bool, dis_max, boosting, constant_score, boosts).
 */
export function scoredQuery(r: Random, depth = 0): Json {
  const text = (): Json =>
    r.pick([
      () => ({ match: { msg: sentence(r, 1, 3) } }),
      () => ({ match: { msg: { query: sentence(r, 2, 3), operator: 'and', boost: r.pick([1, 2, 0.5]) } } }),
      () => ({ match_phrase: { msg: sentence(r, 2, 2) } }),
      () => ({ multi_match: { query: sentence(r, 1, 2), fields: ['msg', 'msg^3'].slice(0, r.int(1, 2)) } }),
      () => ({ constant_score: { filter: { match: { msg: sentence(r, 1, 1) } }, boost: r.pick([1, 1.5]) } }),
    ])()
  if (depth > 1 || r.chance(0.4)) return text()
  return r.pick([
    () => ({ bool: { should: [scoredQuery(r, depth + 1), scoredQuery(r, depth + 1)], ...(r.chance(0.5) ? { must: [text()] } : {}) } }),
    () => ({ dis_max: { queries: [text(), text()], tie_breaker: r.pick([0, 0.3, 1]) } }),
    () => ({ boosting: { positive: text(), negative: { match: { msg: sentence(r, 1, 1) } }, negative_boost: 0.25 } }),
    () => ({ bool: { must: [text()], filter: [{ exists: { field: 'kw' } }], must_not: [{ match: { msg: sentence(r, 1, 1) } }] } }),
  ])()
}

function queryString(r: Random, docs: Docs): string {
  const word = () => sentence(r, 1, 1)
  return r.pick([
    () => `msg:${word()} AND NOT kw:"${someValue(r, docs, 'kw')}"`,
    () => `${word()} OR ${word()}`,
    () => `n_int:[0 TO ${r.int(1, 2147483647)}] AND flag:${r.chance(0.5)}`,
    () => `user.name:${String(someValue(r, docs, 'user.name')).replace(/[^\w]/g, '?')}*`,
    () => `ts:>=2024-03-29 AND _exists_:addr`,
    () => `ts:[2024-03-30T23:00:00 TO 2024-03-31||/d] OR ts:{2024-04-01 TO *}`,
    () => `(msg:(${word()} ${word()}) OR msg.raw:${word()}) AND seq:>5`,
  ])()
}

export function query(r: Random, docs: Docs, depth = 0): Json {
  if (depth > 2 || r.chance(0.55)) return leaf(r, docs)
  const clause = () => Array.from({ length: r.int(1, 3) }, () => query(r, docs, depth + 1))
  const bool: Json = {}
  for (const k of r.some(['must', 'should', 'filter', 'must_not'])) bool[k] = clause()
  if (bool.should && r.chance(0.3)) bool.minimum_should_match = 1
  return { bool }
}

const ZONES = ['UTC', 'Europe/Paris', 'America/New_York', '+05:30', '-08:00', 'Asia/Kathmandu']

function dateHistogram(r: Random): Json {
  const interval = r.chance(0.6)
    ? { calendar_interval: r.pick(['hour', 'day', 'week', 'month', '1d']) }
    : { fixed_interval: r.pick(['90m', '12h', '1d', '7h']) }
  const zoned = 'calendar_interval' in interval && r.chance(0.6)
  const bounded = r.chance(0.15)
  return {
    date_histogram: {
      field: r.pick(['ts', 'day']),
      ...interval,
      ...(zoned ? { time_zone: r.pick(ZONES) } : {}),
      ...(r.chance(0.4) ? { offset: r.pick(['+6h', '-1h', '+30m', '-1d']) } : {}),
      ...(r.chance(0.3) ? { min_doc_count: r.pick([0, 1, 2]) } : {}),
      // Bounds the format does not read are refused on both.
      ...(r.chance(0.3) ? { format: 'yyyy-MM-dd HH:mm' } : {}),
      ...(bounded
        ? r.pick([
            { extended_bounds: { min: '2024-03-20', max: '2024-04-10' }, min_doc_count: 0 },
            { hard_bounds: { min: '2024-03-28', max: '2024-04-02' } },
          ])
        : {}),
    },
  }
}

function terms(r: Random): Json {
  const order = r.pick([undefined, { _count: 'desc' }, { _count: 'asc' }, { _key: 'asc' }, { _key: 'desc' }])
  const field = r.pick([...FIELDS.keyword, 'n_int', 'n_byte', 'flag', 'addr'])
  // A regexp filters string terms only; a number field takes an array of numbers.
  const filters: Json[] = (FIELDS.keyword as readonly string[]).includes(field)
    ? [{ include: '[a-l].*' }, { exclude: ['a', 'b'] }, { include: ['lower', 'UPPER', 'c'] }, { exclude: '.*e.*' }]
    : field === 'n_int' || field === 'n_byte'
      ? [{ include: [0, 7, -7, 5] }, { exclude: [0] }]
      : [{}]
  return {
    terms: {
      field,
      size: r.int(1, 20),
      ...(order ? { order } : {}),
      // min_doc_count applies after the shard_size candidates are taken in the order (README).
      ...(r.chance(0.3) ? { min_doc_count: r.pick([1, 2, 3]) } : {}),
      ...(r.chance(0.2) ? r.pick(filters) : {}),
    },
  }
}

function metric(r: Random): Json {
  const f = r.pick(AGG_NUMERIC)
  switch (r.int(0, 7)) {
    case 0:
      return { avg: { field: f } }
    case 1:
      return { sum: { field: f } }
    case 2:
      return { min: { field: r.pick([f, 'ts', 'day', 'ts_nanos']) } }
    case 3:
      return { max: { field: r.pick([f, 'ts']) } }
    case 4:
      return { stats: { field: f } }
    case 5:
      return { cardinality: { field: r.pick(['kw', 'user.name', 'n_int']) } }
    case 6:
      return r.chance(0.5)
        ? { value_count: { field: r.pick(['kw', f]) } }
        : { extended_stats: { field: r.pick(['n_int', 'n_short', 'seq']) } }
    default:
      return { top_hits: { size: r.int(1, 3), sort: [{ seq: 'desc' }], _source: { includes: ['seq', 'kw'] } } }
  }
}

/** Bucket aggregations other than terms and date_histogram: numeric histograms and ranges, filters, missing. */
function otherBucket(r: Random): Json {
  // Not n_int: its ±2^31 values over a small interval with min_doc_count 0 make OpenSearch run out of
  // memory (a 429 from its circuit breaker) where the store refuses too many buckets.
  const f = r.pick(['n_short', 'n_byte', 'seq', 'n_float', 'user.age'])
  switch (r.int(0, 5)) {
    case 0:
      return {
        histogram: {
          field: f,
          interval: r.pick([5, 10, 1000, 2.5]),
          ...(r.chance(0.3) ? { offset: r.pick([1, 2.5]) } : {}),
          ...(r.chance(0.3) ? { min_doc_count: r.pick([0, 1, 2]) } : {}),
          ...(r.chance(0.2) ? { extended_bounds: { min: -20, max: 40 }, min_doc_count: 0 } : {}),
        },
      }
    case 1:
      return {
        range: {
          field: f,
          ranges: [{ to: 0 }, { from: 0, to: 10 }, { from: 10, ...(r.chance(0.5) ? { key: 'ten+' } : {}) }],
          ...(r.chance(0.3) ? { keyed: true } : {}),
        },
      }
    case 2:
      return {
        filters: {
          filters: { errors: { match: { msg: 'error' } }, upper: { term: { kw: 'UPPER' } } },
          ...(r.chance(0.4) ? { other_bucket_key: 'rest' } : {}),
        },
      }
    case 3:
      return { filter: { range: { seq: { gte: r.int(0, 20) } } } }
    case 4:
      return { missing: { field: r.pick(['kw', 'n_int', 'user.name', 'addr']) } }
    default:
      return {
        date_range: {
          field: 'ts',
          ranges: [{ to: '2024-03-30' }, { from: '2024-03-30', to: '2024-04-01||+1d/d' }],
          ...(r.chance(0.5) ? { time_zone: r.pick(ZONES) } : {}),
        },
      }
  }
}

/** One aggregation tree: a bucket aggregation, maybe a sub-bucket one, metrics under them. */
export function aggregations(r: Random): Json {
  const bucket = (): Json => (r.chance(0.3) ? otherBucket(r) : r.chance(0.5) ? terms(r) : dateHistogram(r))
  const top = bucket()
  const subs: Json = {}
  for (let i = r.int(0, 2); i > 0; i--) subs[`m${i}`] = metric(r)
  if (r.chance(0.3)) subs.inner = { ...terms(r), aggs: { m: metric(r) } }
  const aggs: Json = { top: Object.keys(subs).length > 0 ? { ...top, aggs: subs } : top }
  if (r.chance(0.5)) aggs.flat = metric(r)
  return aggs
}

export function composite(r: Random): Json {
  const sources = r.some(
    [
      { k: { terms: { field: 'kw' } } },
      { n: { terms: { field: 'n_byte', order: 'desc' } } },
      { d: { date_histogram: { field: 'ts', calendar_interval: 'day', time_zone: r.pick(ZONES) } } },
      { u: { terms: { field: 'user.name', missing_bucket: true } } },
    ],
    1,
    2,
  )
  return { composite: { size: r.int(2, 5), sources } }
}

/** A sort on a field with `seq` as tie-breaker, so pages are the same on both sides. */
export function sortClause(r: Random, keywordsOnly = false): Json[] {
  const keywords = ['kw', 'user.name', 'tags']
  // Not n_int: a missing one sorts as 2147483647 in OpenSearch, among the documents holding that value.
  const f = r.pick(keywordsOnly ? keywords : [...keywords, 'n_long', 'n_double', 'ts', 'day', 'n_short', 'n_float'])
  const order = r.pick(['asc', 'desc'])
  const missing = keywords.includes(f) && r.chance(0.3) ? { missing: r.pick(['_first', '_last']) } : {}
  return [{ [ALIAS_OF[f] && r.chance(0.2) ? ALIAS_OF[f] : f]: { order, ...missing } }, { seq: 'asc' }]
}

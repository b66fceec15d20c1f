// query_string, simple_query_string, fuzzy, multi_match types and function_score over real HTTP.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ok, startIndexApi, type TestServer } from './helpers'

let api: TestServer

const DOCS: Record<string, Record<string, unknown>> = {
  1: { title: 'Quick brown fox', status: 'open', n: 1, user: 'alice' },
  2: { title: 'Lazy brown dog', status: 'closed', n: 5, user: 'bob' },
  3: { title: 'The quick dog jumps', status: 'open', n: 10 },
  4: { title: 'Slow turtle', status: 'pending', n: 20, user: 'carol' },
}

async function ids(query: unknown, path = '/docs/_search'): Promise<string[]> {
  const r = await api.call('admin', 'POST', path, { query, size: 100 })
  if (r.status !== 200) throw new Error(`${r.status}: ${JSON.stringify(r.body)}`)
  return r.body.hits.hits.map((h: any) => h._id).sort()
}

beforeAll(async () => {
  api = await startIndexApi({ users: { admin: { roles: ['all_access'] } } })
  await api.call('admin', 'PUT', '/docs', {
    mappings: { properties: { title: { type: 'text' }, status: { type: 'keyword' }, n: { type: 'long' }, user: { type: 'keyword' } } },
  })
  const lines = Object.entries(DOCS).flatMap(([id, d]) => [{ index: { _id: id } }, d])
  await api.call('admin', 'POST', '/docs/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
})

afterAll(async () => {
  await api?.stop()
})

describe('query_string', () => {
  const qs = (query: string, extra: Record<string, unknown> = {}) => ids({ query_string: { query, ...extra } })

  test('fields, boolean operators, phrases, wildcards, ranges, _exists_', async () => {
    expect(await qs('title:quick')).toEqual(['1', '3'])
    expect(await qs('title:quick AND status:open')).toEqual(['1', '3'])
    expect(await qs('title:quick AND NOT title:dog')).toEqual(['1'])
    expect(await qs('status:closed OR status:pending')).toEqual(['2', '4'])
    expect(await qs('title:"brown fox"')).toEqual(['1'])
    expect(await qs('title:"fox brown"')).toEqual([])
    expect(await qs('status:op*')).toEqual(['1', '3'])
    expect(await qs('title:tur?le')).toEqual(['4'])
    expect(await qs('n:[5 TO 10]')).toEqual(['2', '3'])
    expect(await qs('n:{5 TO 10]')).toEqual(['3'])
    expect(await qs('n:>=10')).toEqual(['3', '4'])
    expect(await qs('_exists_:user')).toEqual(['1', '2', '4'])
    expect(await qs('NOT _exists_:user')).toEqual(['3'])
    expect(await qs('+title:brown -status:closed')).toEqual(['1'])
    expect(await qs('(status:open OR status:pending) AND n:<15')).toEqual(['1', '3'])
    expect(await qs('title:(quick OR turtle)')).toEqual(['1', '3', '4'])
  })

  test('default field, all fields, default operator, fuzzy', async () => {
    expect(await qs('dog', { default_field: 'title' })).toEqual(['2', '3'])
    expect(await qs('dog bob')).toEqual(['2', '3'])
    expect(await qs('brown dog', { default_operator: 'AND' })).toEqual(['2'])
    expect(await qs('title:dgo~')).toEqual(['2', '3'])
    expect(await qs('turtle', { fields: ['title', 'status'] })).toEqual(['4'])
  })

  test('the q parameter, also for _count', async () => {
    const r = await api.call('admin', 'GET', '/docs/_search?q=status:open')
    expect(r.body.hits.hits.map((h: any) => h._id).sort()).toEqual(['1', '3'])
    expect((await api.call('admin', 'GET', '/docs/_count?q=title:dog&df=title')).body.count).toBe(2)
  })

  test('a syntax error is a 400', async () => {
    for (const q of ['title:(quick', 'AND dog', 'title:"open']) {
      const r = await api.call('admin', 'POST', '/docs/_search', { query: { query_string: { query: q } } })
      expect(r.status, q).toBe(400)
    }
  })
})

describe('other queries', () => {
  test('simple_query_string never fails on syntax', async () => {
    expect(await ids({ simple_query_string: { query: 'quick + dog', fields: ['title'] } })).toEqual(['3'])
    expect(await ids({ simple_query_string: { query: 'fox | turtle', fields: ['title'] } })).toEqual(['1', '4'])
    expect(await ids({ simple_query_string: { query: '"lazy brown"', fields: ['title'] } })).toEqual(['2'])
    expect(await ids({ simple_query_string: { query: 'turt*', fields: ['title'] } })).toEqual(['4'])
    expect((await api.call('admin', 'POST', '/docs/_search', { query: { simple_query_string: { query: 'quick) AND ("' } } })).status).toBe(
      200,
    )
  })

  test('fuzzy, multi_match types, function_score, boosting', async () => {
    expect(await ids({ fuzzy: { status: { value: 'opne' } } })).toEqual(['1', '3'])
    expect(await ids({ fuzzy: { status: { value: 'opne', transpositions: false } } })).toEqual([])
    expect(await ids({ multi_match: { query: 'quick dog', type: 'phrase', fields: ['title'] } })).toEqual(['3'])
    expect(await ids({ multi_match: { query: 'alice', fields: ['*'] } })).toEqual(['1'])
    expect(await ids({ function_score: { query: { term: { status: 'open' } }, functions: [{ weight: 2 }] } })).toEqual(['1', '3'])
    expect(
      await ids({ boosting: { positive: { match: { title: 'brown' } }, negative: { term: { status: 'closed' } }, negative_boost: 0.5 } }),
    ).toEqual(['1', '2'])
  })
})

describe('prefix variants of match (answers of OpenSearch 3.4 on the same documents)', () => {
  test('match_phrase_prefix: the last term is a prefix, also with slop; a keyword field is refused', async () => {
    expect(await ids({ match_phrase_prefix: { title: 'quick b' } })).toEqual(['1'])
    expect(await ids({ match_phrase_prefix: { title: 'quick d' } })).toEqual(['3'])
    expect(await ids({ match_phrase_prefix: { title: 'the qu' } })).toEqual(['3'])
    expect(await ids({ match_phrase_prefix: { title: { query: 'lazy d', slop: 1 } } })).toEqual(['2'])
    expect(await ids({ match_phrase_prefix: { title: 'brown q' } })).toEqual([])
    const r = await api.call('admin', 'POST', '/docs/_search', { query: { match_phrase_prefix: { status: 'op' } } })
    expect(r.status).toBe(400)
    expect(r.body.error.type).toBe('query_shard_exception')
    expect(r.body.error.reason).toBe(
      'failed to create query: Can only use phrase prefix queries on text fields - not on [status] which is of type [keyword]',
    )
    // Over all fields (the default) multi_match is lenient: the keyword fields match nothing.
    expect(await ids({ multi_match: { query: 'quick b', type: 'phrase_prefix' } })).toEqual(['1'])
  })

  test('match_bool_prefix: a keyword is one prefix; the prefix clause scores a constant 1', async () => {
    expect(await ids({ match_bool_prefix: { status: 'pen' } })).toEqual(['4'])
    expect(await ids({ match_bool_prefix: { status: 'op' } })).toEqual(['1', '3'])
    const r = await api.call('admin', 'POST', '/docs/_search', { query: { match_bool_prefix: { title: 'tu' } } })
    expect(r.body.hits.hits.map((h: any) => [h._id, h._score])).toEqual([['4', 1]])
  })
})

describe("a query's analyzer, and regular expressions in query_string (answers of OpenSearch 3.4 on the same documents)", () => {
  const match = (type: string, query: string, extra: Record<string, unknown>) => ids({ [type]: { title: { query, ...extra } } })

  test('match, match_phrase, match_bool_prefix and multi_match analyse their text with the analyzer named', async () => {
    expect(await match('match', 'Quick', { analyzer: 'whitespace' })).toEqual([])
    expect(await match('match', 'Quick', { analyzer: 'simple' })).toEqual(['1', '3'])
    expect(await match('match', 'quick dog', { analyzer: 'keyword' })).toEqual([])
    expect(await match('match', 'the turtle', { analyzer: 'stop', operator: 'and' })).toEqual(['4'])
    expect(await match('match', 'the turtle', { operator: 'and' })).toEqual([])
    expect(await match('match_phrase', 'Brown Fox', { analyzer: 'whitespace' })).toEqual([])
    expect(await match('match_phrase', 'Brown Fox', { analyzer: 'simple' })).toEqual(['1'])
    expect(await match('match_bool_prefix', 'Lazy bro', { analyzer: 'whitespace' })).toEqual(['1', '2'])
    expect(await ids({ multi_match: { query: 'Quick', fields: ['title'], analyzer: 'whitespace' } })).toEqual([])
    expect(await ids({ multi_match: { query: 'Quick', fields: ['title'], analyzer: 'standard' } })).toEqual(['1', '3'])
  })

  test("an analyzer the index's settings define is the one a query names; a name neither defines fails the query", async () => {
    await ok(
      api.call('admin', 'PUT', '/analysed', {
        settings: { analysis: { analyzer: { ws_lower: { type: 'custom', tokenizer: 'whitespace', filter: ['lowercase'] } } } },
        mappings: { properties: { t: { type: 'text' }, n: { type: 'long' } } },
      }),
    )
    await ok(api.call('admin', 'PUT', '/analysed/_doc/1?refresh=true', { t: 'Hello-World foo', n: 3 }), 201)
    const hits = async (query: unknown) => ok(api.call('admin', 'POST', '/analysed/_search', { query })).then((b) => b.hits.total.value)
    // The field holds `hello` and `world`: `ws_lower` keeps `hello-world` one term; standard splits it.
    expect(await hits({ match: { t: { query: 'Hello-World', analyzer: 'ws_lower' } } })).toBe(0)
    expect(await hits({ match: { t: { query: 'Hello-World FOO', analyzer: 'ws_lower' } } })).toBe(1)
    expect(await hits({ match: { t: { query: 'Hello-World' } } })).toBe(1)
    for (const [type, query] of [
      ['match', { match: { t: { query: 'hello', analyzer: 'nope' } } }],
      ['match_phrase', { match_phrase: { t: { query: 'hello', analyzer: 'nope' } } }],
      ['multi_match', { multi_match: { query: 'hello', fields: ['t'], analyzer: 'nope' } }],
      ['query_string', { query_string: { query: 'hello', analyzer: 'nope' } }],
      // Whatever the field's type.
      ['match', { match: { n: { query: '3', analyzer: 'nope' } } }],
    ] as const) {
      const r = await api.call('admin', 'POST', '/analysed/_search', { query })
      expect(r.status).toBe(400)
      const uuid = (await ok(api.call('admin', 'GET', '/analysed/_settings'))).analysed.settings.index.uuid
      const shard = { type: 'query_shard_exception', reason: `[${type}] analyzer [nope] not found`, index: 'analysed', index_uuid: uuid }
      expect(r.body.error).toMatchObject({ type: 'search_phase_execution_exception', reason: 'all shards failed', root_cause: [shard] })
      expect(r.body.error.failed_shards[0]).toMatchObject({ shard: 0, index: 'analysed', reason: shard })
      expect(r.body.error.failed_shards[0].reason.caused_by).toBeUndefined()
    }
    // A built-in analyzer is found on every index.
    expect(await hits({ match: { t: { query: 'HELLO', analyzer: 'simple' } } })).toBe(1)
  })

  test('a query_string regular expression ignores case on a text field, not on a keyword; the regexp query never', async () => {
    expect(await ids({ query_string: { query: 'title:/QUI.*/' } })).toEqual(['1', '3'])
    expect(await ids({ query_string: { query: '/QUI.*/', default_field: 'title' } })).toEqual(['1', '3'])
    expect(await ids({ query_string: { query: 'status:/OPEN/' } })).toEqual([])
    expect(await ids({ query_string: { query: 'status:/open/' } })).toEqual(['1', '3'])
    expect(await ids({ regexp: { title: 'QUI.*' } })).toEqual([])
  })
})

describe('a value the field cannot read (answers of OpenSearch 3.4 on the same requests)', () => {
  const refusal = async (query: unknown) => {
    const r = await api.call('admin', 'POST', '/typed/_search', { query })
    expect(r.status).toBe(400)
    expect(r.body.error.type).toBe('search_phase_execution_exception')
    expect(r.body.error.root_cause[0].type).toBe('query_shard_exception')
    // The failed shard names its index and the node (this one, as _nodes names it).
    const nodes = await ok(api.call('admin', 'GET', '/_nodes'))
    expect(r.body.error.failed_shards[0]).toMatchObject({ shard: 0, index: 'typed', node: Object.keys(nodes.nodes)[0] })
    return [r.body.error.root_cause[0].reason, r.body.error.failed_shards[0].reason.caused_by]
  }
  const count = async (query: unknown) => ok(api.call('admin', 'POST', '/typed/_search', { query })).then((b) => b.hits.total.value)

  test('term, terms, match and a numeric range fail the query, as each shard fails it', async () => {
    await ok(
      api.call('admin', 'PUT', '/typed', {
        mappings: {
          properties: { n: { type: 'long' }, d: { type: 'double' }, b: { type: 'boolean' }, ip: { type: 'ip' }, ts: { type: 'date' } },
        },
      }),
    )
    await ok(api.call('admin', 'POST', '/typed/_doc/1?refresh=true', { n: 1, d: 1.5, b: true, ip: '10.0.0.1', ts: '2026-01-01' }), 201)
    const number = (s: string) => [
      `failed to create query: For input string: "${s}"`,
      { type: 'number_format_exception', reason: `For input string: "${s}"` },
    ]
    expect(await refusal({ term: { n: 'abc' } })).toEqual(number('abc'))
    expect(await refusal({ term: { d: 'x' } })).toEqual(number('x'))
    expect(await refusal({ terms: { n: ['abc'] } })).toEqual(number('abc'))
    expect(await refusal({ range: { n: { gte: 'abc' } } })).toEqual(number('abc'))
    const bool = "Can't parse boolean value [maybe], expected [true] or [false]"
    expect(await refusal({ term: { b: 'maybe' } })).toEqual([
      `failed to create query: ${bool}`,
      { type: 'illegal_argument_exception', reason: bool },
    ])
    expect(await refusal({ match: { b: 'maybe' } })).toEqual([
      `failed to create query: ${bool}`,
      { type: 'illegal_argument_exception', reason: bool },
    ])
    const ip = "'notanip' is not an IP string literal."
    expect(await refusal({ term: { ip: 'notanip' } })).toEqual([
      `failed to create query: ${ip}`,
      { type: 'illegal_argument_exception', reason: ip },
    ])
    // What reads fine, or leniently: a decimal on a long matches nothing, a network is a term of an ip.
    expect(await count({ term: { n: 1.5 } })).toBe(0)
    expect(await count({ term: { ip: '10.0.0.0/8' } })).toBe(1)
    expect(await count({ match: { n: { query: 'abc', lenient: true } } })).toBe(0)
    expect(await count({ query_string: { query: 'n:abc' } })).toBe(0)
    expect(await count({ multi_match: { query: 'abc', fields: ['*'] } })).toBe(0)
  })
})

test('a sort over indices where the field is unsigned_long in one and another type elsewhere is refused, as OpenSearch 3.4 refuses it', async () => {
  await ok(api.call('admin', 'PUT', '/mixed_1', { mappings: { properties: { counter: { type: 'unsigned_long' } } } }))
  await ok(api.call('admin', 'PUT', '/mixed_2', { mappings: { properties: { counter: { type: 'long' } } } }))
  await ok(api.call('admin', 'PUT', '/mixed_3', { mappings: { properties: { counter: { type: 'double' } } } }))
  const r = await api.call('admin', 'POST', '/mixed_*/_search', { sort: [{ counter: 'asc' }] })
  expect(r.status).toBe(400)
  expect(r.body.error).toEqual({
    root_cause: [],
    type: 'search_phase_execution_exception',
    reason: '',
    phase: 'fetch',
    grouped: true,
    failed_shards: [],
    caused_by: {
      type: 'illegal_argument_exception',
      reason: "Can't do sort across indices, as a field has [unsigned_long] type in one index, and different type in another index!",
    },
  })
  // Longs and doubles merge; the unsigned_long index alone sorts too.
  await ok(api.call('admin', 'POST', '/mixed_2,mixed_3/_search', { sort: [{ counter: 'asc' }] }))
  await ok(api.call('admin', 'POST', '/mixed_1/_search', { sort: [{ counter: 'asc' }] }))
})

describe('relevance', () => {
  test('compound queries combine scores as Lucene does (values from OpenSearch 3.4)', async () => {
    await api.call('admin', 'PUT', '/scored', { mappings: { properties: { msg: { type: 'text' }, kw: { type: 'keyword' } } } })
    const docs = [
      { msg: 'naïve login gamma', kw: 'lower' },
      { msg: 'quick brown fox', kw: 'a' },
    ]
    const lines = docs.flatMap((d, i) => [{ index: { _id: String(i + 1) } }, d])
    await api.call('admin', 'POST', '/scored/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
    const top = async (query: unknown) => {
      const r = await api.call('admin', 'POST', '/scored/_search', { query })
      return r.body.hits.hits.map((h: any) => [h._id, Number(h._score.toFixed(5))])
    }
    // One term in one of two documents of three tokens each: idf ln 2, 1 / (1 + 1.2), 0.31507.
    expect(await top({ constant_score: { filter: { term: { kw: 'a' } }, boost: 2 } })).toEqual([['2', 2]])
    expect(await top({ bool: { must: [{ constant_score: { filter: { term: { kw: 'a' } }, boost: 2 } }] } })).toEqual([['2', 2]])
    expect(
      await top({ boosting: { positive: { match: { msg: 'quick' } }, negative: { match: { msg: 'fox' } }, negative_boost: 0.25 } }),
    ).toEqual([['2', 0.07877]])
    // A field named twice takes its last boost.
    expect(await top({ multi_match: { query: 'fox', fields: ['msg^3', 'msg^2'] } })).toEqual([['2', 0.63013]])
    expect(await top({ multi_match: { query: 'fox', fields: ['msg', 'msg^3'] } })).toEqual([['2', 0.9452]])
    expect(await top({ match_bool_prefix: { msg: 'login g' } })).toEqual([['1', 1.31507]])
    // Unscored queries score 1 each, and a tie_breaker adds a share of the others.
    const both = {
      dis_max: { queries: [{ constant_score: { filter: { match: { msg: 'quick' } } } }, { term: { kw: 'a' } }], tie_breaker: 0.3 },
    }
    expect(await top(both)).toEqual([['2', 1.3]])
  })

  test('a long field is scored by the length its norm keeps (Lucene rounds lengths past 24 tokens)', async () => {
    await api.call('admin', 'PUT', '/lengths', { mappings: { properties: { t: { type: 'text' } } } })
    const words = (n: number, mod: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${(i + 1) % mod}`).join(' ')
    const docs = [`alpha ${words(57, 13, 'w')}`, 'alpha beta gamma', `alpha ${words(300, 7, 'z')}`]
    const lines = docs.flatMap((t, i) => [{ index: { _id: String(i + 1) } }, { t }])
    await api.call('admin', 'POST', '/lengths/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
    const r = await api.call('admin', 'POST', '/lengths/_search', { query: { match: { t: 'alpha' } } })
    // OpenSearch 3.4 on the same documents: 58 tokens are kept as 56, 301 as 280 (the exact lengths
    // score 0.0771 and 0.0377 where the norms give these).
    const expected: Array<[string, number]> = [
      ['2', 0.100978404],
      ['1', 0.0777394],
      ['3', 0.039408416],
    ]
    const got = r.body.hits.hits.map((h: any) => [h._id, h._score])
    expect(got.map(([id]: [string]) => id)).toEqual(expected.map(([id]) => id))
    for (const [i, [, score]] of expected.entries()) expect(got[i][1]).toBeCloseTo(score, 7)
  })

  test("a phrase scores by its own frequency, not by its terms' (a repeated term weighs no more)", async () => {
    await api.call('admin', 'PUT', '/phrases', { mappings: { properties: { msg: { type: 'text' } } } })
    const docs = ['quick brown quick', 'quick brown fox', 'slow fox']
    const lines = docs.flatMap((msg, i) => [{ index: { _id: String(i + 1) } }, { msg }])
    await api.call('admin', 'POST', '/phrases/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
    const r = await api.call('admin', 'POST', '/phrases/_search', { query: { match_phrase: { msg: 'quick brown' } } })
    const scores = r.body.hits.hits.map((h: any) => h._score)
    // Both hold the phrase once in three tokens: equal scores, though "quick" is twice in one of them.
    expect(scores).toHaveLength(2)
    expect(scores[0]).toBeCloseTo(scores[1], 9)
    // OpenSearch 3.4: 0.4064896 (two terms of idf ln 1.6; three tokens against an average of 8/3).
    const idf = Math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expect(scores[0]).toBeCloseTo((2 * idf) / (1 + 1.2 * (0.25 + (0.75 * 3) / (8 / 3))), 6)
    expect(scores[0]).toBeCloseTo(0.4064896, 6)
  })

  test('BM25 ranks better text matches first; non-text queries keep score 1 and index order', async () => {
    await api.call('admin', 'PUT', '/ranked', { mappings: { properties: { body: { type: 'text' }, tag: { type: 'keyword' } } } })
    const docs = [
      { body: 'a long text that mentions the word fox once among many other words here', tag: 't' },
      { body: 'fox fox fox', tag: 't' },
      { body: 'quick brown fox', tag: 't' },
      { body: 'nothing relevant', tag: 't' },
      { body: 'the quick brown dog', tag: 't' },
    ]
    const lines = docs.flatMap((d, i) => [{ index: { _id: `r${i}` } }, d])
    await api.call('admin', 'POST', '/ranked/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
    const r = await api.call('admin', 'POST', '/ranked/_search', { query: { match: { body: 'quick fox' } } })
    const hits = r.body.hits.hits
    // Both terms beat one; the rarer term (quick: 2 of 5 documents) outweighs three occurrences of
    // the commoner one (fox: 3 of 5) in a short text, which beats one occurrence in a long text.
    // By hand (Lucene's BM25: k1 1.2, b 0.75, no (k1 + 1) factor, average length 5.2): r4 0.439, r1 0.423.
    expect(hits.map((h: any) => h._id)).toEqual(['r2', 'r4', 'r1', 'r0'])
    expect(hits[1]._score).toBeCloseTo(0.439, 2)
    expect(hits[2]._score).toBeCloseTo(0.423, 2)
    const scores = hits.map((h: any) => h._score)
    expect([...scores].sort((a, b) => b - a)).toEqual(scores)
    expect(scores[0]).toBeGreaterThan(scores[3])
    expect(r.body.hits.max_score).toBe(scores[0])
    const ex = await api.call('admin', 'POST', '/ranked/_explain/r2', { query: { match: { body: 'quick fox' } } })
    expect(ex.body.explanation.value).toBeCloseTo(scores[0], 6)
    const qs = await api.call('admin', 'POST', '/ranked/_search', { query: { query_string: { query: 'body:fox' } }, size: 1 })
    expect(qs.body.hits.hits[0]._id).toBe('r1')
    // `_score` as one sort key among others, and track_scores beside a field sort, carry the same scores.
    const byScore = await api.call('admin', 'POST', '/ranked/_search', {
      query: { match: { body: 'quick fox' } },
      sort: ['_score', { tag: 'asc' }],
    })
    expect(byScore.body.hits.hits.map((h: any) => [h._id, h._score, h.sort[0]])).toEqual(hits.map((h: any) => [h._id, h._score, h._score]))
    const tracked = await api.call('admin', 'POST', '/ranked/_search', {
      query: { match: { body: 'quick fox' } },
      sort: [{ tag: 'asc' }],
      track_scores: true,
    })
    const scoreOf = new Map(hits.map((h: any) => [h._id, h._score]))
    for (const h of tracked.body.hits.hits) expect(h._score).toBe(scoreOf.get(h._id))
    expect(tracked.body.hits.max_score).toBe(scores[0])
    // min_score drops the weaker matches from the hits and the total; terminate_after stops counting.
    const strong = await api.call('admin', 'POST', '/ranked/_search', { query: { match: { body: 'quick fox' } }, min_score: scores[2] })
    expect(strong.body.hits.hits.map((h: any) => h._id)).toEqual(hits.slice(0, 3).map((h: any) => h._id))
    expect(strong.body.hits.total.value).toBe(3)
    const cut = await api.call('admin', 'POST', '/ranked/_search', { query: { match_all: {} }, terminate_after: 2, size: 0 })
    expect([cut.body.hits.total.value, cut.body.terminated_early]).toEqual([2, true])
    const plain = await api.call('admin', 'POST', '/ranked/_search', { query: { term: { tag: 't' } } })
    expect(plain.body.hits.hits.map((h: any) => [h._id, h._score])).toEqual(docs.map((_, i) => [`r${i}`, 1]))
  })

  test('should clauses that score a constant add their boosts where they match (values from OpenSearch 3.4)', async () => {
    const ranked = async (query: unknown) => {
      const r = await api.call('admin', 'POST', '/docs/_search', { query })
      return r.body.hits.hits.map((h: any) => [h._id, h._score, h.matched_queries ?? []])
    }
    // A long field matched for 1 and (boosted) for 5: the document holding both first, its names both.
    expect(
      await ranked({
        bool: { should: [{ match: { n: { query: 1, _name: 'one' } } }, { term: { status: { value: 'open', boost: 10, _name: 'open' } } }] },
      }),
    ).toEqual([
      ['1', 11, ['one', 'open']],
      ['3', 10, ['open']],
    ])
    expect(await ranked({ bool: { must: [{ term: { status: 'open' } }], should: [{ range: { n: { gte: 5, boost: 3 } } }] } })).toEqual([
      ['3', 4, []],
      ['1', 1, []],
    ])
    // Only filters: no score to rank by, index order as before, every match scoring 0.
    expect(await ranked({ bool: { filter: [{ term: { status: 'open' } }], should: [] } })).toEqual([
      ['1', 0, []],
      ['3', 0, []],
    ])
  })
})

describe('dates: what a bound names, in which time zone', () => {
  beforeAll(async () => {
    await api.call('admin', 'PUT', '/dates', { mappings: { properties: { ts: { type: 'date' } } } })
    const at = ['2026-01-01T23:30:00Z', '2026-01-02T00:00:00Z', '2026-01-02T05:00:00Z', '2026-01-02T23:59:59.999Z', '2026-01-03T00:00:00Z']
    const lines = at.flatMap((ts, i) => [{ index: { _id: String(i) } }, { ts }])
    await api.call('admin', 'POST', '/dates/_bulk?refresh=true', lines.map((l) => JSON.stringify(l) + '\n').join(''))
  })
  const dates = (query: unknown) => ids(query, '/dates/_search')

  test('a term on a date takes in every instant it names; lte and gt round a partial date up', async () => {
    expect(await dates({ term: { ts: '2026-01-02' } })).toEqual(['1', '2', '3'])
    expect(await dates({ term: { ts: '2026-01-02T05' } })).toEqual(['2'])
    expect(await dates({ range: { ts: { gte: '2026-01-02', lte: '2026-01-02' } } })).toEqual(['1', '2', '3'])
    expect(await dates({ range: { ts: { gt: '2026-01-01' } } })).toEqual(['1', '2', '3', '4'])
    expect(await dates({ query_string: { query: 'ts:{2026-01-01 TO 2026-01-02]' } })).toEqual(['1', '2', '3'])
  })

  test('time_zone reads bounds without an offset and rounds on its calendar; offsets and now stay', async () => {
    // Midnight of 2026-01-02 in +05:30 is 18:30 UTC the day before (answers checked against OpenSearch 3.4).
    expect(await dates({ range: { ts: { gte: '2026-01-02', lt: '2026-01-02T06:00:00', time_zone: '+05:30' } } })).toEqual(['0', '1'])
    expect(await dates({ term: { ts: '2026-01-01' } })).toEqual(['0'])
    // The day of 2026-01-02 in -02:00 runs from 02:00 UTC to 01:59:59.999 UTC the next day.
    expect(await dates({ range: { ts: { gte: '2026-01-02T01:00:00||/d', lte: '2026-01-02||/d', time_zone: '-02:00' } } })).toEqual([
      '2',
      '3',
      '4',
    ])
    expect(await dates({ range: { ts: { gte: '2026-01-02T05:00:00Z', time_zone: 'Asia/Tokyo' } } })).toEqual(['2', '3', '4'])
    expect(await dates({ range: { ts: { lt: 'now', time_zone: 'America/New_York' } } })).toEqual(['0', '1', '2', '3', '4'])
    expect(await dates({ query_string: { query: 'ts:[2026-01-02T00:00 TO 2026-01-02T00:30]', time_zone: '+01:00' } })).toEqual(['0'])
  })

  test('a date_range aggregation reads its bounds in its time_zone', async () => {
    const r = await api.call('admin', 'POST', '/dates/_search', {
      size: 0,
      aggs: { r: { date_range: { field: 'ts', time_zone: '+05:30', ranges: [{ from: '2026-01-02', to: '2026-01-03' }] } } },
    })
    expect(r.body.aggregations.r.buckets).toEqual([
      {
        key: '2026-01-02T00:00:00.000+05:30-2026-01-03T00:00:00.000+05:30',
        from: Date.parse('2026-01-01T18:30:00Z'),
        from_as_string: '2026-01-02T00:00:00.000+05:30',
        to: Date.parse('2026-01-02T18:30:00Z'),
        to_as_string: '2026-01-03T00:00:00.000+05:30',
        doc_count: 3,
      },
    ])
  })

  test('a time_zone that names no zone is refused with 400', async () => {
    for (const query of [
      { range: { ts: { gte: '2026-01-01', time_zone: 'Mars/Olympus' } } },
      { query_string: { query: 'ts:>2026-01-01', time_zone: 'Nowhere/X' } },
    ]) {
      const r = await api.call('admin', 'POST', '/dates/_search', { query })
      expect(r.status).toBe(400)
      expect(r.body.error.type).toBe('illegal_argument_exception')
      expect(r.body.error.reason).toContain('Unknown time-zone ID')
    }
  })
})

// The text index and the indexed plans (issue 32), tested differentially: the same writes go to a
// store that plans queries from its indexes and to one that reads every document (`scanOnly`),
// and every query of a corpus must give both the same hits, scores, sort values and totals. The
// corpus is generated from a seed, so the expected answers are the scanning evaluator's, never
// written down here.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import { postingsOf } from '../../src/store/embedded/text-index'
import { latestVersion, SCHEMA_MIGRATIONS } from '../../src/store/embedded/migrations'
import { dropFields } from '../helpers/older-store'
import { lengthsField, termsField } from '../../src/store/embedded/text-fields'
import type { BulkLine, SearchBody } from '../../src/store/port'
import { nextSeed } from '../../scripts/bench/lib/random'

type Store = ReturnType<typeof openEmbeddedStore>

const WORDS = 'the quick brown fox jumps over lazy dog error user login failed alpha beta gamma delta'.split(' ')

/** A deterministic generator, so that a failure reproduces. */
function random(seed: number): () => number {
  let x = seed
  return () => (x = nextSeed(x)) / 2 ** 31
}

function makeDoc(rnd: () => number, i: number): Record<string, unknown> {
  const pick = () => WORDS[Math.floor(rnd() * WORDS.length)]
  const words = (n: number) => Array.from({ length: n }, pick).join(rnd() < 0.2 ? ', ' : ' ')
  const doc: Record<string, unknown> = { n: i % 37, ts: new Date(Date.UTC(2026, 0, 1) + (i % 50) * 3_600_000).toISOString() }
  // Some documents lack the text field, some hold an array, some a number in it.
  const r = rnd()
  if (r < 0.1) doc.msg = [words(3), words(2)]
  else if (r < 0.15) doc.msg = i
  else if (r < 0.9) doc.msg = `${words(1 + Math.floor(rnd() * 8))} w${i % 13}`
  if (rnd() < 0.8) doc.k = `v${i % 11}`
  if (rnd() < 0.5) doc.title = words(2)
  if (rnd() < 0.1) doc.n = [i % 5, (i % 37) + 100]
  return doc
}

const MAPPINGS = {
  properties: {
    title: { type: 'text', fields: { raw: { type: 'keyword' } } },
    // A keyword with a text sub-field: the sub-field's tokens come from the same values.
    tag: { type: 'keyword', fields: { words: { type: 'text' } } },
  },
}

/** Writes, updates and deletes, the same for both stores. */
async function fill(store: Store, seed: number): Promise<void> {
  const rnd = random(seed)
  await store.createIndex({ index: 'ti-a', body: { mappings: MAPPINGS } })
  // ti-c is never written to again: its documents hold every rid from the first (dense columns).
  for (const index of ['ti-a', 'ti-b', 'ti-c']) {
    const lines: BulkLine[] = []
    for (let i = 0; i < 300; i++) {
      const doc = makeDoc(rnd, i)
      if (index === 'ti-a' && i % 4 === 0) doc.tag = `${WORDS[i % WORDS.length]} ${WORDS[(i * 7) % WORDS.length]}`
      lines.push({ index: { _id: String(i) } }, doc)
    }
    await store.bulk({ index, body: lines, refresh: true })
  }
  // Updates change, add and drop text; deletes remove documents (and their postings).
  for (let i = 0; i < 300; i += 7) await store.update({ index: 'ti-a', id: String(i), body: { doc: { msg: `updated text ${i}` } } })
  for (let i = 3; i < 300; i += 11) await store.index({ index: 'ti-b', id: String(i), body: { k: 'replaced', n: i } })
  for (let i = 5; i < 300; i += 13) await store.delete({ index: 'ti-a', id: String(i) })
  // As retention deletes: the matches of a search, in one bulk of deletes.
  const expired = await store.search({ index: 'ti-b', body: { query: { term: { msg: 'lazy' } }, size: 1000 } })
  await store.bulk({ body: expired.hits.hits.map((h) => ({ delete: { _index: h._index, _id: h._id } })), refresh: true })
}

const QUERIES: unknown[] = [
  { match_all: {} },
  { match: { msg: 'fox' } },
  { match: { msg: 'the' } },
  { match: { msg: 'quick brown' } },
  { match: { msg: { query: 'quick brown', operator: 'and' } } },
  { match: { msg: { query: 'quick brown dog', minimum_should_match: 2 } } },
  { match: { msg: 'updated' } },
  { match: { msg: { query: 'lazy fox', boost: 2.5 } } },
  { match: { title: { query: 'fox dog', operator: 'AND' } } },
  { match: { msg: 'nothing-like-this' } },
  { match: { msg: '' } },
  { match: { msg: '7' } },
  { match: { title: 'fox' } },
  { match: { 'tag.words': 'fox' } },
  { match: { k: 'v3' } },
  { match_phrase: { msg: 'quick brown' } },
  { match_phrase: { msg: 'the fox' } },
  { term: { msg: 'fox' } },
  { term: { msg: 'Fox' } },
  { term: { msg: 'w3' } },
  { terms: { 'k.keyword': ['v1', 'v2'] } },
  { prefix: { msg: 'lo' } },
  { wildcard: { msg: 'fo*' } },
  { wildcard: { 'k.keyword': 'v1*' } },
  { bool: { must: [{ match: { msg: 'fox' } }, { range: { n: { gte: 10 } } }] } },
  { bool: { should: [{ match: { msg: 'fox' } }, { match: { title: 'dog' } }] } },
  { bool: { filter: [{ term: { 'k.keyword': 'v2' } }], must_not: [{ match: { msg: 'the' } }] } },
  { bool: { must: { match: { msg: 'error' } }, should: { match: { msg: 'login' } } } },
  { dis_max: { queries: [{ match: { msg: 'fox' } }, { match: { title: 'fox' } }], tie_breaker: 0.3 } },
  { multi_match: { query: 'lazy dog', fields: ['msg', 'title'] } },
  { query_string: { query: 'k.keyword:v7' } },
  { query_string: { query: 'fox' } },
  { query_string: { query: 'msg:fox AND msg:dog' } },
  { query_string: { query: 'msg:fox OR title:lazy' } },
  { query_string: { query: 'msg:"quick brown"' } },
  { query_string: { query: 'msg:qu*' } },
  { query_string: { query: 'n:[5 TO 20] AND msg:the' } },
  { query_string: { query: 'fox -dog', default_field: 'msg' } },
  { query_string: { query: 'fox dog', default_field: 'msg', default_operator: 'and' } },
  { query_string: { query: '*' } },
  { query_string: { query: 'msg:*' } },
  { simple_query_string: { query: 'fox | lazy', fields: ['msg'] } },
  { simple_query_string: { query: '+quick -brown', fields: ['msg', 'title'] } },
  { simple_query_string: { query: 'log*' } },
  // Dates: a term names every instant of its value; a range's time_zone reads its bounds.
  { term: { ts: '2026-01-02' } },
  { term: { ts: '2026-01-01T05' } },
  { terms: { ts: ['2026-01-01T05:00:00.000Z', '2026-01-02'] } },
  { range: { ts: { gte: '2026-01-01T20:00:00', lte: '2026-01-02', time_zone: '+05:30' } } },
  { range: { ts: { gt: '2026-01-01', lt: '2026-01-02T12:00:00||/d', time_zone: 'America/New_York' } } },
  { query_string: { query: 'ts:[2026-01-01T10 TO 2026-01-02}', time_zone: '-03:00' } },
  { query_string: { query: 'ts:>2026-01-02T01' } },
]

const BODIES: Array<(q: unknown) => SearchBody> = [
  (q) => ({ query: q as SearchBody['query'], size: 20 }),
  (q) => ({ query: q as SearchBody['query'], size: 0 }),
  (q) => ({ query: q as SearchBody['query'], from: 250, size: 50 }),
  (q) => ({ query: q as SearchBody['query'], size: 5, sort: [{ ts: 'desc' }] }),
  (q) => ({ query: q as SearchBody['query'], size: 7, sort: [{ n: 'asc' }], search_after: [12] }),
  (q) => ({ query: q as SearchBody['query'], size: 4, sort: [{ 'k.keyword': { order: 'desc' } }], track_total_hits: false }),
  (q) => ({ query: q as SearchBody['query'], size: 3, track_total_hits: 10 }),
  // A page larger than the total counted: documents without `k` must still come, last.
  (q) => ({ query: q as SearchBody['query'], size: 40, sort: [{ 'k.keyword': 'asc' }], track_total_hits: 5 }),
  (q) => ({
    query: q as SearchBody['query'],
    size: 0,
    aggs: {
      k: { terms: { field: 'k.keyword', size: 5 }, aggs: { low: { min: { field: 'n' } } } },
      hours: { date_histogram: { field: 'ts', fixed_interval: '6h' } },
      distinct: { cardinality: { field: 'n' } },
    },
  }),
  // Single-valued fields only: read as columns from the field-value index (aggs-columnar.ts).
  (q) => ({
    query: q as SearchBody['query'],
    size: 0,
    aggs: { k: { terms: { field: 'k.keyword' } }, hours: { date_histogram: { field: 'ts', fixed_interval: '6h' } } },
  }),
]

/** What must agree: ids in order, scores, sort values and the total. */
function shape(r: Awaited<ReturnType<Store['search']>>) {
  return { total: r.hits.total, hits: r.hits.hits.map((h) => [h._index, h._id, h._score, h.sort]), aggregations: r.aggregations }
}

/** `run` with an indexed store and a scan-only one, both in memory, closed after. */
async function withBothStores(run: (indexed: Store, scanned: Store) => Promise<void>): Promise<void> {
  const indexed = openEmbeddedStore(':memory:')
  const scanned = openEmbeddedStore(':memory:', { scanOnly: true })
  try {
    await run(indexed, scanned)
  } finally {
    await indexed.close()
    await scanned.close()
  }
}

async function differential(indexed: Store, scanned: Store, index: string): Promise<number> {
  let compared = 0
  for (const q of QUERIES)
    for (const body of BODIES) {
      const a = await indexed.search({ index, body: body(q) })
      const b = await scanned.search({ index, body: body(q) })
      expect({ q, body: body(q), ...shape(a) }).toEqual({ q, body: body(q), ...shape(b) })
      compared++
    }
  for (const q of QUERIES)
    expect({ q, n: (await indexed.count({ index, body: { query: q as SearchBody['query'] } })).count }).toEqual({
      q,
      n: (await scanned.count({ index, body: { query: q as SearchBody['query'] } })).count,
    })
  return compared
}

describe('text index: indexed plans answer as the scanning evaluator', () => {
  let indexed: Store
  let scanned: Store
  beforeAll(async () => {
    indexed = openEmbeddedStore(':memory:')
    scanned = openEmbeddedStore(':memory:', { scanOnly: true })
    await fill(indexed, 42)
    await fill(scanned, 42)
  }, 60_000)
  afterAll(async () => {
    await indexed.close()
    await scanned.close()
  })

  test('every query of the corpus, on one index and on both', async () => {
    expect(await differential(indexed, scanned, 'ti-a')).toBe(QUERIES.length * BODIES.length)
    await differential(indexed, scanned, 'ti-*')
  }, 60_000)

  test('text queries read postings, not every document', () => {
    const plan = (query: unknown) => indexed.explain('ti-a', query).join(' | ')
    for (const q of [
      { match: { msg: 'fox' } },
      { term: { msg: 'fox' } },
      { prefix: { msg: 'fo' } },
      { query_string: { query: 'msg:fox' } },
    ])
      expect(plan(q)).toContain('SCAN tx VIRTUAL TABLE INDEX 0:M')
    expect(plan({ query_string: { query: 'k.keyword:v7' } })).toContain('fv')
    expect(plan({ match: { msg: { query: 'fox', fuzziness: 1 } } })).not.toContain('fv')
  })

  test('updates and deletes keep postings right', async () => {
    const ids = async (store: Store, query: unknown) =>
      (await store.search({ index: 'ti-a', body: { query: query as SearchBody['query'], size: 100 } })).hits.hits.map((h) => h._id).sort()
    await indexed.index({ index: 'ti-a', id: 'x', body: { msg: 'zebra crossing' }, refresh: true })
    expect(await ids(indexed, { match: { msg: 'zebra' } })).toEqual(['x'])
    await indexed.update({ index: 'ti-a', id: 'x', body: { doc: { msg: 'giraffe' } }, refresh: true })
    expect(await ids(indexed, { match: { msg: 'zebra' } })).toEqual([])
    expect(await ids(indexed, { term: { msg: 'giraffe' } })).toEqual(['x'])
    await indexed.delete({ index: 'ti-a', id: 'x', refresh: true })
    expect(await ids(indexed, { term: { msg: 'giraffe' } })).toEqual([])
    // The BM25 counters came back to what they were: scores still equal the scan's.
    await differential(indexed, scanned, 'ti-a')
  }, 60_000)

  test('a failed bulk item leaves no postings behind', async () => {
    await indexed.bulk({
      index: 'ti-a',
      body: [{ index: { _id: 'bad' } }, { msg: 'okapi', n: 'not a number' }],
      refresh: true,
    })
    expect((await indexed.count({ index: 'ti-a', body: { query: { match: { msg: 'okapi' } } } })).count).toBe(0)
  })
})

describe('text index: one transaction of many documents', () => {
  test('a bulk of more text rows than one statement binds (4,096) writes them all, as smaller ones do', async () => {
    await withBothStores(async (indexed, scanned) => {
      for (const store of [indexed, scanned])
        for (const size of [5000, 17, 3]) {
          const body: BulkLine[] = []
          for (let i = 0; i < size; i++) body.push({ index: {} }, { msg: `w${i % 7} common size${size}` })
          await store.bulk({ index: 'many', body, refresh: true })
        }
      for (const query of [
        { match: { msg: 'common' } },
        { match: { msg: 'size5000' } },
        { match: { msg: 'size17 w3' } },
        { match: { msg: 'w6' } },
      ]) {
        const counts = await Promise.all([indexed, scanned].map((s) => s.count({ index: 'many', body: { query } })))
        expect({ query, count: counts[0].count }).toEqual({ query, count: counts[1].count })
        expect(counts[0].count).toBeGreaterThan(0)
      }
      expect((await indexed.count({ index: 'many', body: { query: { match: { msg: 'common' } } } })).count).toBe(5020)
    })
  }, 60_000)
})

describe('text index: a common term', () => {
  test("a term in thousands of documents is ranked from the field's lengths read at once, as the scan ranks it, after every write", async () => {
    const doc = (i: number) => ({ msg: `${i % 2 === 0 ? 'common' : 'rare'} ${'filler '.repeat(i % 9)}${i % 5 === 0 ? 'common' : ''}` })
    await withBothStores(async (indexed, scanned) => {
      for (const store of [indexed, scanned]) {
        const body: BulkLine[] = []
        for (let i = 0; i < 6000; i++) body.push({ index: { _id: String(i) } }, doc(i))
        await store.bulk({ index: 'c', body, refresh: true })
      }
      const page = async (store: Store) =>
        shape(await store.search({ index: 'c', body: { query: { match: { msg: 'common' } }, size: 12, track_total_hits: true } }))
      expect(await page(indexed)).toEqual(await page(scanned))
      // Documents added since the lengths were read (nothing rewritten): the kept lengths grow.
      for (const store of [indexed, scanned])
        await store.bulk({ index: 'c', body: [{ index: { _id: 'new' } }, { msg: 'common common common common' }], refresh: true })
      const added = await page(indexed)
      expect(added).toEqual(await page(scanned))
      expect(added.hits[0][1]).toBe('new')
      // Shorter documents rank first: rewritten ones move, and the lengths read before must not answer.
      for (const store of [indexed, scanned]) {
        for (const id of ['7', '4001']) await store.index({ index: 'c', id, body: { msg: 'common common common' } })
        await store.index({ index: 'c', id: '0', body: { msg: 'common '.concat('filler '.repeat(30)) } })
        await store.refresh({ index: 'c' })
      }
      const after = await page(indexed)
      expect(after).toEqual(await page(scanned))
      expect(after.hits.slice(0, 3).map((h) => h[1])).toEqual(['new', '7', '4001'])
      expect(after.hits.map((h) => h[1])).not.toContain('0')
    })
  }, 60_000)
})

describe('text index: sorted pages read from the sort field', () => {
  test('documents without the sort value come last, also when the total is only a lower bound', async () => {
    const body: SearchBody = { size: 10, sort: [{ 'k.keyword': 'asc' }], track_total_hits: 2 }
    const pages: unknown[] = []
    for (const scanOnly of [false, true]) {
      const store = openEmbeddedStore(':memory:', { scanOnly })
      const docs = [{ k: 'b' }, { k: 'a' }, { k: 'c' }, { other: 1 }, { other: 2 }, { other: 3 }, { other: 4 }]
      await store.bulk({ index: 's', body: docs.flatMap((d, i) => [{ index: { _id: String(i) } }, d]), refresh: true })
      pages.push(shape(await store.search({ index: 's', body })))
      // Past the last value: only the documents without one remain (none in `t`).
      await store.bulk({ index: 't', body: [{ index: {} }, { k: 'a' }, { index: {} }, { k: 'b' }], refresh: true })
      for (const index of ['s', 't'])
        pages.push(shape(await store.search({ index, body: { ...body, search_after: ['b'], track_total_hits: true } })))
      await store.close()
    }
    expect(pages.slice(0, 3)).toEqual(pages.slice(3))
    expect(pages.map((p) => (p as ReturnType<typeof shape>).hits.length)).toEqual([7, 5, 0, 7, 5, 0])
  })

  test('search_after on a multi-valued field places each document by its smallest (or largest) value', async () => {
    const pages: unknown[] = []
    for (const scanOnly of [false, true]) {
      const store = openEmbeddedStore(':memory:', { scanOnly })
      const docs = [{ n: [3, 105] }, { n: 20 }, { n: [15, 1] }, { n: 30 }, { n: [50, 8] }]
      await store.bulk({ index: 'm', body: docs.flatMap((d, i) => [{ index: { _id: String(i) } }, d]), refresh: true })
      for (const order of ['asc', 'desc'] as const)
        for (const after of [10, 25])
          pages.push(shape(await store.search({ index: 'm', body: { size: 3, sort: [{ n: order }], search_after: [after] } })))
      await store.close()
    }
    expect(pages.slice(0, 4)).toEqual(pages.slice(4))
  })

  test('past the last value, the documents without one come after every write (the count of valued documents is kept only until the next)', async () => {
    const pages: unknown[] = []
    for (const scanOnly of [false, true]) {
      const store = openEmbeddedStore(':memory:', { scanOnly })
      const page = async () => shape(await store.search({ index: 'v', body: { size: 5, sort: [{ n: 'desc' }], search_after: [2] } }))
      await store.bulk({ index: 'v', body: [1, 2, 3].flatMap((n) => [{ index: { _id: `n${n}` } }, { n }]), refresh: true })
      pages.push(await page(), await page())
      // A document loses its value (as many documents as before), one without a value comes, then gets one.
      await store.index({ index: 'v', id: 'n3', body: { other: 3 }, refresh: true })
      pages.push(await page())
      await store.index({ index: 'v', id: 'none', body: { other: 1 }, refresh: true })
      pages.push(await page())
      await store.index({ index: 'v', id: 'none', body: { n: 0 }, refresh: true })
      pages.push(await page())
      await store.close()
    }
    expect(pages.slice(0, 5)).toEqual(pages.slice(5))
    expect(pages.slice(0, 5).map((p) => (p as ReturnType<typeof shape>).hits.map((h) => h[1]))).toEqual([
      ['n1'],
      ['n1'],
      ['n1', 'n3'],
      ['n1', 'n3', 'none'],
      ['n1', 'none', 'n3'],
    ])
  })
})

describe('text index: store size', () => {
  test('store.size counts the index entries, kept current by writes as a reopened store counts them', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'text-size-')), 'store.db')
    const a = openEmbeddedStore(file)
    await a.createIndex({ index: 'ti-b' })
    const sizes = async (store: Store) => (await store.stats({ index: 'ti-*' })).map((s) => [s.index, s.store_size_in_bytes])
    expect(await sizes(a)).toEqual([['ti-b', 0]])
    await fill(a, 3)
    const tracked = await sizes(a)
    const sources = (await a.search({ index: 'ti-a', body: { size: 1000 } })).hits.hits.reduce(
      (n, h) => n + JSON.stringify(h._source).length,
      0,
    )
    // The text index makes up a good part of a text-heavy index.
    expect(tracked.find(([i]) => i === 'ti-a')![1] as number).toBeGreaterThan(2 * sources)
    await a.close()
    const b = openEmbeddedStore(file)
    try {
      expect(await sizes(b)).toEqual(tracked)
    } finally {
      await b.close()
    }
  }, 60_000)
})

/**
 * What schemas 4-7 listed in a document's keys beside its values: each text field's length, by
 * the field's lengths id (read here from `tl`, which names the terms id).
 */
function lengthsListed(db: Database): (rid: number) => Array<[number, number]> {
  const fields = db.query('SELECT f, ix, name FROM fields').all() as Array<{ f: number; ix: number; name: string }>
  const lengthsId = (t: number) => {
    const terms = fields.find((r) => r.f === t)!
    return fields.find((r) => r.ix === terms.ix && r.name === lengthsField(terms.name.slice(termsField('').length)))!.f
  }
  const lengths = db.query('SELECT f, len FROM tl WHERE rid = ?')
  return (rid) => (lengths.values(rid) as Array<[number, number]>).map(([f, len]) => [lengthsId(f), len])
}

describe('text index: an older data directory', () => {
  test('migrating a schema-3 store builds the postings and counters', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'text-index-')), 'store.db')
    const a = openEmbeddedStore(file)
    await fill(a, 7)
    await a.close()
    // What a schema-3 store holds: no text rows, no counters.
    const db = new Database(file)
    expect(dropFields(db, "hex(name) LIKE '00%'").length).toBeGreaterThan(0)
    for (const table of ['txi', 'tx', 'tl']) db.run(`DROP TABLE ${table}`)
    db.run('ALTER TABLE fields DROP COLUMN tdocs')
    db.run('ALTER TABLE fields DROP COLUMN ttokens')
    db.run('PRAGMA user_version = 3')
    db.close()

    const b = openEmbeddedStore(file)
    const scanned = openEmbeddedStore(':memory:', { scanOnly: true })
    try {
      expect(b.migration).toMatchObject({ from: 3, to: latestVersion(SCHEMA_MIGRATIONS) })
      await fill(scanned, 7)
      expect(b.explain('ti-a', { match: { msg: 'fox' } }).join(' ')).toContain('tx VIRTUAL TABLE')
      await differential(b, scanned, 'ti-*')
    } finally {
      await b.close()
      await scanned.close()
    }
  }, 60_000)

  test('migrating a schema-4 store moves the postings from the field-value index into FTS5', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'text-index-')), 'store.db')
    const a = openEmbeddedStore(file)
    await fill(a, 7)
    await a.close()
    // What a schema-4 store holds: a posting per term and document in fv (with its weight), the
    // document's terms in its keys, no FTS5 tables.
    const db = new Database(file)
    const termIds = new Map(
      (db.query("SELECT f, name FROM fields WHERE hex(name) LIKE '007465726D7320%'").all() as Array<{ f: number; name: string }>).map(
        (r) => [r.f, r.name],
      ),
    )
    expect(termIds.size).toBeGreaterThan(0)
    // Schema 4 listed each text field's length in the document's keys too, by its lengths id.
    const listedLengths = lengthsListed(db)
    const tokens = db.query('SELECT term FROM txi WHERE doc = ?')
    for (const { rid, keys } of db.query('SELECT rid, keys FROM docs').all() as Array<{ rid: number; keys: string }>) {
      const byField = new Map<number, Set<string>>()
      for (const [term] of tokens.values(rid) as Array<[string]>) {
        const f = Number(term.slice(0, term.indexOf('_')))
        if (!byField.has(f)) byField.set(f, new Set())
        byField.get(f)!.add(term.slice(term.indexOf('_') + 1))
      }
      for (const [f, terms] of byField) for (const t of terms) db.query('INSERT INTO fv (f, v, rid, w) VALUES (?, ?, ?, 1)').run(f, t, rid)
      const listed = [
        ...(JSON.parse(keys) as unknown[]),
        ...[...byField].map(([f, terms]) => [f, [...terms].join(' ')]),
        ...listedLengths(rid),
      ]
      db.query('UPDATE docs SET keys = ? WHERE rid = ?').run(JSON.stringify(listed), rid)
    }
    for (const table of ['txi', 'tx', 'tl']) db.run(`DROP TABLE ${table}`)
    db.run('PRAGMA user_version = 4')
    db.close()

    const b = openEmbeddedStore(file)
    const scanned = openEmbeddedStore(':memory:', { scanOnly: true })
    try {
      expect(b.migration).toMatchObject({ from: 4, to: latestVersion(SCHEMA_MIGRATIONS) })
      await fill(scanned, 7)
      await differential(b, scanned, 'ti-*')
      await b.close()
      const after = new Database(file)
      try {
        const left = after.query(`SELECT count(*) AS n FROM fv WHERE f IN (${[...termIds.keys()].join(',')})`).get() as { n: number }
        expect(left.n).toBe(0)
        const keys = after.query('SELECT keys FROM docs').all() as Array<{ keys: string }>
        expect(keys.some(({ keys }) => (JSON.parse(keys) as Array<[number]>).some(([f]) => termIds.has(f)))).toBe(false)
      } finally {
        after.close()
      }
    } finally {
      await scanned.close()
    }
  }, 60_000)
})

describe('text index: keys written before schema 8', () => {
  test("migrating a schema-7 store takes the text lengths out of the documents' keys; later rewrites keep the counters exact", async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'text-index-')), 'store.db')
    const a = openEmbeddedStore(file)
    await fill(a, 9)
    await a.close()
    // What schema 7 wrote: each text field's length in the document's keys too, by its lengths id.
    const db = new Database(file)
    const fields = db.query('SELECT f, name FROM fields').all() as Array<{ f: number; name: string }>
    const listedLengths = lengthsListed(db)
    let listed = 0
    for (const { rid, keys } of db.query('SELECT rid, keys FROM docs').all() as Array<{ rid: number; keys: string }>) {
      const extra = listedLengths(rid)
      listed += extra.length
      db.query('UPDATE docs SET keys = ? WHERE rid = ?').run(JSON.stringify([...(JSON.parse(keys) as unknown[]), ...extra]), rid)
    }
    expect(listed).toBeGreaterThan(500)
    const keysBefore = db.query('SELECT rid, keys FROM docs ORDER BY rid').all() as Array<{ rid: number; keys: string }>
    db.run('PRAGMA user_version = 7')
    db.close()

    const b = openEmbeddedStore(file)
    const scanned = openEmbeddedStore(':memory:', { scanOnly: true })
    try {
      expect(b.migration).toMatchObject({ from: 7, to: latestVersion(SCHEMA_MIGRATIONS) })
      await fill(scanned, 9)
      await differential(b, scanned, 'ti-*')
      // Rewrites after the migration read the lengths from tl: updates and deletes on both stores.
      for (const store of [b, scanned]) {
        for (let i = 1; i < 300; i += 9)
          await store.update({ index: 'ti-a', id: String(i), body: { doc: { msg: `after ${i} fox` }, doc_as_upsert: true } })
        for (let i = 2; i < 300; i += 17) await store.delete({ index: 'ti-c', id: String(i) })
        await store.refresh({ index: 'ti-*' })
      }
      await differential(b, scanned, 'ti-*')
    } finally {
      await b.close()
      await scanned.close()
    }
    const after = new Database(file)
    try {
      const lengthIds = new Set(fields.filter((r) => r.name.startsWith('\u0000len ')).map((r) => r.f))
      const rows = after.query('SELECT rid, keys FROM docs ORDER BY rid').all() as Array<{ rid: number; keys: string }>
      expect(rows.some(({ keys }) => (JSON.parse(keys) as Array<[number]>).some(([f]) => lengthIds.has(f)))).toBe(false)
      // The field values stay as they were: only the lengths left.
      const untouched = new Map(keysBefore.map((r) => [r.rid, (JSON.parse(r.keys) as Array<[number]>).filter(([f]) => !lengthIds.has(f))]))
      const same = rows.filter((r) => JSON.stringify(JSON.parse(r.keys)) === JSON.stringify(untouched.get(r.rid)))
      expect(same.length).toBeGreaterThan(rows.length * 0.8)
    } finally {
      after.close()
    }
  }, 60_000)

  test('one bulk that writes, rewrites and deletes the same documents keeps the counters exact', async () => {
    await withBothStores(async (indexed, scanned) => {
      for (const store of [indexed, scanned]) {
        await fill(store, 11)
        await store.bulk({
          index: 'ti-a',
          body: [
            { index: { _id: 'n1' } },
            { msg: 'fresh quick fox', title: 'new one' },
            { update: { _id: 'n1' } },
            { doc: { msg: 'fresher lazy dog dog' } },
            { index: { _id: 'n2' } },
            { msg: 'gone soon fox' },
            { delete: { _id: 'n2' } },
            { update: { _id: '1' } },
            { doc: { title: 'fox fox fox' } },
            { index: { _id: '2' } },
            { n: 2 },
            { index: { _id: 'bad' } },
            { msg: 'never fox', n: 'not a number' },
            { update: { _id: 'n1' } },
            { doc: { title: null } },
          ],
          refresh: true,
        })
      }
      await differential(indexed, scanned, 'ti-*')
    })
  }, 60_000)
})

describe('postings of a term', () => {
  // FTS5's vocabulary table stands in as a plain table: the rows come in the order they were written.
  const dbWith = (docs: number[]) => {
    const db = new Database(':memory:')
    db.run('CREATE TABLE txi (term TEXT, doc INTEGER)')
    db.run('CREATE TABLE tl (rid INTEGER NOT NULL, f INTEGER NOT NULL, len INTEGER NOT NULL, PRIMARY KEY (rid, f)) WITHOUT ROWID')
    for (const d of docs) db.run('INSERT INTO txi VALUES (?, ?)', ['7_fox', d])
    for (const d of new Set(docs)) db.run('INSERT INTO tl VALUES (?, 7, ?)', [d, d * 10])
    return db
  }

  test('counts each document occurrences as they come, one after the other', () => {
    expect(postingsOf(dbWith([1, 1, 2, 5, 5, 5]), 7, '7_fox')).toEqual([
      [1, 2, 10],
      [2, 1, 20],
      [5, 3, 50],
    ])
  })

  test('out of order, the grouped query answers the same counts', () => {
    const answer = postingsOf(dbWith([5, 1, 5, 2, 1, 5]), 7, '7_fox')
    expect(answer.sort((a, b) => a[0] - b[0])).toEqual([
      [1, 2, 10],
      [2, 1, 20],
      [5, 3, 50],
    ])
  })
})

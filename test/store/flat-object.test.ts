// `flat_object` fields on the embedded store, as OpenSearch's flat_object behaves: the object is
// stored as given, its leaves are keyword values; a query on the root matches any leaf, a query on
// a dotted path below it matches the leaves at that path (range compares them as strings), and
// the paths create no mappings. Every query is counted three ways — the hits, `_count` (answered
// from the field-value index when its plan is exact) and a count forced through the evaluator —
// which must agree.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import { dropFields } from '../helpers/older-store'

const DOCS: Record<string, Record<string, unknown>> = {
  d1: {
    tag: 'one',
    attrs: {
      number: '123456',
      count: 7,
      ok: true,
      labels: { version: '2.1', backport: ['2.0', '1.3'], category: { type: 'API', level: 'enhancement' } },
    },
  },
  d2: {
    tag: 'two',
    attrs: {
      number: '123457',
      labels: { version: '2.2', category: { type: 'API', level: 'bug' } },
      'origin.ip': '10.0.0.1',
      list: [{ name: 'CreateRemoteThread' }, { name: 'VirtualAlloc' }],
    },
  },
  d3: { tag: 'three', attrs: { empty: null, nothing: {} } },
  d4: { tag: 'four' },
}

describe('flat_object on the embedded store', () => {
  const store = openEmbeddedStore(':memory:')
  beforeAll(async () => {
    await store.createIndex({
      index: 'fo',
      body: {
        settings: { 'index.mapping.total_fields.limit': 5 },
        mappings: { properties: { tag: { type: 'keyword' }, attrs: { type: 'flat_object' } } },
      },
    })
    const r = await store.bulk({
      index: 'fo',
      body: Object.entries(DOCS).flatMap(([id, doc]) => [{ index: { _id: id } }, doc]),
      refresh: true,
    })
    expect(r.errors).toBe(false)
  })
  afterAll(() => store.close())

  const ids = async (query: Record<string, unknown>) => {
    const r = await store.search({ index: 'fo', body: { query, size: 100 } })
    const hits = r.hits.hits.map((h) => h._id).sort()
    const counted = (await store.count({ index: 'fo', body: { query } })).count
    // must_not(must_not(q)) means q but cannot be planned: the evaluator checks every document.
    const scanned = (await store.count({ index: 'fo', body: { query: { bool: { must_not: [{ bool: { must_not: [query] } }] } } } })).count
    expect({ counted, scanned }).toEqual({ counted: hits.length, scanned: hits.length })
    return hits
  }

  test('the source is stored as given and the mapping holds only the root', async () => {
    const got = await store.get({ index: 'fo', id: 'd2' })
    expect(got.found && got._source).toEqual(DOCS.d2)
    const m = (await store.getMapping({ index: 'fo' })).fo.mappings
    expect(m.properties).toEqual({ tag: { type: 'keyword' }, attrs: { type: 'flat_object' } })
  })

  test('term, terms and match on the root match any leaf', async () => {
    expect(await ids({ term: { attrs: 'bug' } })).toEqual(['d2'])
    expect(await ids({ term: { attrs: 'API' } })).toEqual(['d1', 'd2'])
    expect(await ids({ terms: { attrs: ['enhancement', '10.0.0.1'] } })).toEqual(['d1', 'd2'])
    expect(await ids({ match: { attrs: 'VirtualAlloc' } })).toEqual(['d2'])
    // Keyword, not text: no analysis.
    expect(await ids({ match: { attrs: 'virtualalloc' } })).toEqual([])
    // Numbers and booleans are indexed as their string form.
    expect(await ids({ term: { attrs: 7 } })).toEqual(['d1'])
    expect(await ids({ term: { attrs: 'true' } })).toEqual(['d1'])
  })

  test('a dotted path matches the leaves at that path only', async () => {
    expect(await ids({ term: { 'attrs.labels.category.level': 'bug' } })).toEqual(['d2'])
    expect(await ids({ match: { 'attrs.labels.category.level': 'bug' } })).toEqual(['d2'])
    expect(await ids({ term: { 'attrs.labels.category.type': 'bug' } })).toEqual([])
    expect(await ids({ terms: { 'attrs.labels.backport': ['1.3', '2.2'] } })).toEqual(['d1'])
    expect(await ids({ term: { 'attrs.labels.version': '2.2' } })).toEqual(['d2'])
    // An object is no leaf value.
    expect(await ids({ term: { 'attrs.labels': '2.2' } })).toEqual([])
    // A dotted key is the same path as nested objects; arrays of objects are transparent.
    expect(await ids({ term: { 'attrs.origin.ip': '10.0.0.1' } })).toEqual(['d2'])
    expect(await ids({ term: { 'attrs.list.name': 'VirtualAlloc' } })).toEqual(['d2'])
    expect(await ids({ term: { 'attrs.count': 7 } })).toEqual(['d1'])
    expect(await ids({ term: { 'attrs.ok': true } })).toEqual(['d1'])
  })

  test('prefix, wildcard and case-insensitive term, on the root and on paths', async () => {
    expect(await ids({ prefix: { 'attrs.labels.version': '2.' } })).toEqual(['d1', 'd2'])
    expect(await ids({ prefix: { attrs: '12345' } })).toEqual(['d1', 'd2'])
    expect(await ids({ prefix: { 'attrs.number': '2' } })).toEqual([])
    expect(await ids({ wildcard: { 'attrs.labels.backport': '1.*' } })).toEqual(['d1'])
    expect(await ids({ wildcard: { attrs: 'Create*Thread' } })).toEqual(['d2'])
    expect(await ids({ term: { 'attrs.list.name': { value: 'virtualalloc', case_insensitive: true } } })).toEqual(['d2'])
  })

  test('range compares leaves as keyword strings, within one path', async () => {
    expect(await ids({ range: { 'attrs.labels.version': { gte: '2.0', lte: '2.1' } } })).toEqual(['d1'])
    expect(await ids({ range: { 'attrs.labels.version': { gt: '2.1' } } })).toEqual(['d2'])
    expect(await ids({ range: { 'attrs.labels.version': { lte: '2.1' } } })).toEqual(['d1'])
    // `attrs.number` ("123456") sorts below "2" but is another path: it does not leak in.
    expect(await ids({ range: { 'attrs.labels.version': { lt: '2' } } })).toEqual([])
    // "7" >= "10" as strings (as OpenSearch compares flat_object leaves), not as numbers.
    expect(await ids({ range: { 'attrs.count': { gte: 10 } } })).toEqual(['d1'])
    expect(await ids({ range: { attrs: { gte: '2.0', lte: '2.1' } } })).toEqual(['d1'])
  })

  test('exists: the root when it holds a leaf, a path when a leaf lies at exactly that path', async () => {
    expect(await ids({ exists: { field: 'attrs' } })).toEqual(['d1', 'd2'])
    expect(await ids({ exists: { field: 'attrs.labels.backport' } })).toEqual(['d1'])
    expect(await ids({ exists: { field: 'attrs.origin.ip' } })).toEqual(['d2'])
    // OpenSearch's exists on a path is a range over that path's `path=value` keys: objects are no leaves.
    expect(await ids({ exists: { field: 'attrs.labels' } })).toEqual([])
    expect(await ids({ exists: { field: 'attrs.nothing' } })).toEqual([])
    expect(await ids({ exists: { field: 'attrs.missing' } })).toEqual([])
  })

  test('query_string, multi_match and bool reach the root and paths', async () => {
    expect(await ids({ query_string: { query: 'attrs.labels.category.level:bug' } })).toEqual(['d2'])
    expect(await ids({ query_string: { query: 'attrs:enhancement' } })).toEqual(['d1'])
    expect(await ids({ query_string: { query: 'enhancement' } })).toEqual(['d1'])
    expect(await ids({ multi_match: { query: 'bug', fields: ['attrs'] } })).toEqual(['d2'])
    expect(await ids({ multi_match: { query: 'bug', fields: ['attrs.labels.category.level', 'tag'] } })).toEqual(['d2'])
    expect(
      await ids({ bool: { filter: [{ term: { 'attrs.labels.category.type': 'API' } }], must_not: [{ term: { attrs: 'bug' } }] } }),
    ).toEqual(['d1'])
  })

  test('sub-fields create no mappings and do not count against index.mapping.total_fields.limit', async () => {
    const wide = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, { inner: `v${i}` }]))
    await store.index({ index: 'fo', id: 'wide', body: { attrs: wide }, refresh: true })
    expect((await store.getMapping({ index: 'fo' })).fo.mappings.properties).toEqual({
      tag: { type: 'keyword' },
      attrs: { type: 'flat_object' },
    })
    expect(await ids({ term: { 'attrs.k42.inner': 'v42' } })).toEqual(['wide'])
    await store.delete({ index: 'fo', id: 'wide', refresh: true })
    expect(await ids({ term: { 'attrs.k42.inner': 'v42' } })).toEqual([])
  })

  test('keys with dots, quotes or other scripts: the index and the evaluator agree', async () => {
    await store.index({ index: 'fo', id: 'odd', body: { attrs: { 'a.b': { c: 1 }, 'x"y': 'q', ключ: { é: 'v' } } }, refresh: true })
    expect(await ids({ term: { 'attrs.a.b.c': 1 } })).toEqual(['odd'])
    expect(await ids({ term: { 'attrs.x"y': 'q' } })).toEqual(['odd'])
    expect(await ids({ prefix: { 'attrs.x': 'q' } })).toEqual([])
    expect(await ids({ range: { 'attrs.ключ.é': { gte: 'v' } } })).toEqual(['odd'])
    await store.delete({ index: 'fo', id: 'odd', refresh: true })
  })

  test('an update replaces the indexed leaves', async () => {
    await store.index({ index: 'fo', id: 'd5', body: { attrs: { state: 'open' } }, refresh: true })
    expect(await ids({ term: { 'attrs.state': 'open' } })).toEqual(['d5'])
    await store.update({ index: 'fo', id: 'd5', body: { doc: { attrs: { state: 'closed' } } }, refresh: true })
    expect(await ids({ term: { 'attrs.state': 'open' } })).toEqual([])
    expect(await ids({ term: { attrs: 'closed' } })).toEqual(['d5'])
    await store.delete({ index: 'fo', id: 'd5', refresh: true })
  })

  test('terms aggregations read the leaves of a path, or every leaf of the root', async () => {
    const buckets = async (field: string, query?: Record<string, unknown>) => {
      const r = await store.search({ index: 'fo', body: { size: 0, query, aggs: { t: { terms: { field, size: 50 } } } } })
      return Object.fromEntries(((r.aggregations as any).t.buckets as any[]).map((b) => [b.key, b.doc_count]))
    }
    // match_all (the columnar path) and a filtered query (the per-document path) agree.
    expect(await buckets('attrs.labels.category.level')).toEqual({ bug: 1, enhancement: 1 })
    expect(await buckets('attrs.labels.category.level', { exists: { field: 'tag' } })).toEqual({ bug: 1, enhancement: 1 })
    expect(await buckets('attrs.list.name')).toEqual({ CreateRemoteThread: 1, VirtualAlloc: 1 })
    expect(await buckets('attrs.count')).toEqual({ '7': 1 })
    // The root has no doc values of its own in OpenSearch: a 400, not its mixed leaves.
    await expect(buckets('attrs')).rejects.toMatchObject({
      status: 400,
      type: 'illegal_argument_exception',
      reason: 'Field [attrs] of type [flat_object] does not support doc_value in root field',
    })
  })

  test('a value that is not an object is refused as OpenSearch refuses it; null is no value', async () => {
    for (const [value, token] of [
      ['notobject', 'VALUE_STRING'],
      [3, 'VALUE_NUMBER'],
      [[{ a: 1 }, true], 'VALUE_BOOLEAN'],
    ] as const) {
      const r = store.index({ index: 'fo', id: 'bad', body: { attrs: value } })
      await expect(r).rejects.toMatchObject({
        status: 400,
        type: 'mapper_parsing_exception',
        metadata: { caused_by: { type: 'parsing_exception', reason: `[attrs] unexpected token [${token}] in flat_object field value` } },
      })
    }
    expect((await store.index({ index: 'fo', id: 'null', body: { attrs: null }, refresh: true })).result).toBe('created')
    expect((await store.index({ index: 'fo', id: 'arr', body: { attrs: [{ a: 'x' }, null, { b: 'y' }] }, refresh: true })).result).toBe(
      'created',
    )
    expect(await ids({ term: { 'attrs.b': 'y' } })).toEqual(['arr'])
    await store.delete({ index: 'fo', id: 'null', refresh: true })
    await store.delete({ index: 'fo', id: 'arr', refresh: true })
  })
})

describe('flat_object in a store written before its leaves were indexed', () => {
  test('opening it (schema 2 -> 3) indexes the leaves of its documents', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'svc-flat-')), 'store.db')
    const a = openEmbeddedStore(file)
    await a.createIndex({ index: 'old', body: { mappings: { properties: { attrs: { type: 'flat_object' }, tag: { type: 'keyword' } } } } })
    await a.bulk({
      index: 'old',
      body: Array.from({ length: 1200 }, (_, i) => [
        { index: { _id: String(i) } },
        { tag: 't', attrs: { n: String(i), k: { v: i % 2 ? 'odd' : 'even' } } },
      ]).flat(),
      refresh: true,
    })
    await a.close()
    // What a schema-2 store holds: no keys of flat_object fields.
    const db = new Database(file)
    expect(dropFields(db, "name LIKE 'attrs%'").length).toBe(2)
    db.run('PRAGMA user_version = 2')
    db.close()

    const b = openEmbeddedStore(file)
    try {
      const count = async (query: Record<string, unknown>) => (await b.count({ index: 'old', body: { query } })).count
      expect(await count({ term: { 'attrs.k.v': 'odd' } })).toBe(600)
      expect(await count({ term: { attrs: '1199' } })).toBe(1)
      expect(await count({ term: { tag: 't' } })).toBe(1200)
      // The keys are the document's: a delete removes them.
      await b.delete({ index: 'old', id: '1199', refresh: true })
      expect(await count({ term: { 'attrs.k.v': 'odd' } })).toBe(599)
    } finally {
      await b.close()
    }
  })
})

// _count answers from the SQL index when the plan is exact; it must equal the evaluator's answer.
import { expect, test } from 'bun:test'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'

test('count through the index equals count through the evaluator, for exact and inexact plans', async () => {
  const s = openEmbeddedStore(':memory:')
  try {
    await s.createIndex({
      index: 'c',
      body: { mappings: { properties: { user: { type: 'keyword' }, n: { type: 'long' }, msg: { type: 'text' } } } },
    })
    const body = Array.from({ length: 300 }, (_, i) => [
      { index: { _index: 'c', _id: String(i) } },
      { user: `u${i % 7}`, n: i, msg: i % 2 ? 'odd line' : 'even line' },
    ]).flat()
    await s.bulk({ body, refresh: true })
    const queries = [
      { term: { user: 'u3' } },
      { terms: { user: ['u1', 'u2'] } },
      { range: { n: { gte: 10, lt: 100 } } },
      { match: { msg: 'odd' } },
      { bool: { filter: [{ term: { user: 'u3' } }, { range: { n: { gt: 150 } } }] } },
      { bool: { must_not: [{ term: { user: 'u3' } }] } },
    ]
    for (const query of queries) {
      const counted = (await s.count({ index: 'c', body: { query } })).count
      // Wrapping in must_not(must_not(...)) keeps the meaning but forces the evaluator over every row.
      const scanned = (await s.count({ index: 'c', body: { query: { bool: { must_not: [{ bool: { must_not: [query] } }] } } } })).count
      expect(counted).toBe(scanned)
      expect(counted).toBeGreaterThan(0)
    }
  } finally {
    await s.close()
  }
})

test('count through the index counts a document once when several of its values match (arrays)', async () => {
  const s = openEmbeddedStore(':memory:')
  try {
    await s.createIndex({ index: 'a', body: { mappings: { properties: { tags: { type: 'keyword' }, n: { type: 'long' } } } } })
    await s.bulk({
      index: 'a',
      body: [{ index: { _id: '1' } }, { tags: ['a', 'b', 'c'], n: [1, 2, 3] }, { index: { _id: '2' } }, { tags: 'b', n: 2 }],
      refresh: true,
    })
    for (const query of [
      { range: { tags: { gte: 'a', lte: 'c' } } },
      { terms: { tags: ['a', 'b'] } },
      { prefix: { tags: 'b' } },
      { range: { n: { gte: 1 } } },
    ]) {
      const hits = (await s.search({ index: 'a', body: { query } })).hits.hits.length
      expect((await s.count({ index: 'a', body: { query } })).count).toBe(hits)
    }
  } finally {
    await s.close()
  }
})

test('a field that held several values in one document is counted per document after a reopen too', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-count-')), 'store.db')
  const a = openEmbeddedStore(file)
  await a.createIndex({ index: 'm', body: { mappings: { properties: { tags: { type: 'keyword' }, one: { type: 'keyword' } } } } })
  await a.index({ index: 'm', id: '1', body: { tags: ['a', 'b'], one: 'x' }, refresh: true })
  await a.index({ index: 'm', id: '2', body: { tags: 'a', one: 'y' }, refresh: true })
  await a.close()
  const b = openEmbeddedStore(file)
  try {
    expect((await b.count({ index: 'm', body: { query: { range: { tags: { gte: 'a' } } } } })).count).toBe(2)
    expect((await b.count({ index: 'm', body: { query: { range: { one: { gte: 'a' } } } } })).count).toBe(2)
  } finally {
    await b.close()
  }
})

/**
 * Field values written by refreshes (src/store/embedded/refresh.ts): what a search finds is what
 * was acknowledged, whether a document's rows are written yet or not, and a kill -9 leaves the
 * rows and the index's mark in step.
 */
import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import { REFRESH_DOCS } from '../../src/store/embedded/refresh'
import { ridRange } from '../../src/store/embedded/rids'
import { refreshDoc } from './fixtures/refresh-docs'

const dir = mkdtempSync(join(tmpdir(), 'svc-refresh-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const MAPPINGS = { properties: { k: { type: 'keyword' }, n: { type: 'long' } } } as const

/** The fv rows a document's keys list, and those in the table, of one index of a closed store file. */
function rowsOf(path: string): { listed: string[]; stored: string[]; indexedRid: number | null; ix: number } {
  const db = new Database(path, { readonly: true })
  try {
    const { ix, indexed_rid } = db.query("SELECT ix, indexed_rid FROM indices WHERE name = 'bulk'").get() as {
      ix: number
      indexed_rid: number | null
    }
    const [lo, hi] = ridRange(ix)
    const listed = new Set<string>()
    for (const { rid, keys } of db.query('SELECT rid, keys FROM docs WHERE rid BETWEEN ? AND ?').all(lo, hi) as Array<{
      rid: number
      keys: string
    }>)
      for (const [f, v] of JSON.parse(keys) as Array<[number, unknown]>) listed.add(JSON.stringify([f, v, rid]))
    const stored = (db.query('SELECT f, v, rid FROM fv WHERE rid BETWEEN ? AND ?').values(lo, hi) as unknown[][]).map((r) =>
      JSON.stringify(r),
    )
    return { listed: [...listed].sort(), stored: stored.sort(), indexedRid: indexed_rid, ix }
  } finally {
    db.close()
  }
}

const ids = (r: { hits: { hits: Array<{ _id: string }> } }) => r.hits.hits.map((h) => h._id).sort((a, b) => Number(a) - Number(b))

describe('field values written by refreshes', () => {
  test('updates and deletes of documents not refreshed yet: searches find what was acknowledged, the rows match the keys', async () => {
    const path = join(dir, 'pending.db')
    const store = openEmbeddedStore(path)
    try {
      await store.createIndex({ index: 'bulk', body: { mappings: MAPPINGS } })
      const body = []
      for (let i = 0; i < 50; i++) body.push({ index: { _id: String(i) } }, refreshDoc(i))
      // In the same bulk: an update and a delete of documents whose rows are not written yet.
      body.push({ update: { _id: '3' } }, { doc: { k: ['moved'] } }, { delete: { _id: '4' } })
      expect((await store.bulk({ index: 'bulk', body })).errors).toBe(false)
      await store.index({ index: 'bulk', id: '5', body: { k: ['moved', 'moved'], n: 5 } })
      await store.delete({ index: 'bulk', id: '6' })
      const search = async (query: Record<string, unknown>) => ids(await store.search({ index: 'bulk', body: { query, size: 100 } }))
      expect(await search({ term: { k: 'moved' } })).toEqual(['3', '5'])
      expect(await search({ term: { k: 'h4' } })).toEqual([])
      expect(await search({ term: { k: 'h6' } })).toEqual([])
      expect(await search({ range: { n: { gte: 2, lte: 7 } } })).toEqual(['2', '3', '5', '7'])
      // Refreshed by the searches: now writes to them go to the rows at once, and so do new documents' after a search.
      await store.update({ index: 'bulk', id: '7', body: { doc: { k: ['moved'] } } })
      await store.index({ index: 'bulk', id: '50', body: refreshDoc(50) })
      expect(await search({ term: { k: 'moved' } })).toEqual(['3', '5', '7'])
      expect(await search({ term: { k: `h${50 % 97}` } })).toEqual(['50'])
      expect((await store.count({ index: 'bulk', body: { query: { term: { k: 'even' } } } })).count).toBe(24)
    } finally {
      await store.close()
    }
    const { listed, stored } = rowsOf(path)
    expect(stored).toEqual(listed)
  })

  test('a long past 2^53 is found and aggregated alike whether a refresh or its write put it in the rows', async () => {
    const store = openEmbeddedStore(join(dir, 'longs.db'))
    try {
      await store.createIndex({ index: 'longs', body: { mappings: MAPPINGS } })
      const big = [4611686018427387903, -4611686018427387904, 4611686018427387903]
      // Pending until the search's refresh writes their rows (refresh.ts) ...
      await store.bulk({ index: 'longs', body: big.flatMap((n, i) => [{ index: { _id: String(i) } }, { n }]) })
      const answer = async () => {
        const r = await store.search({
          index: 'longs',
          body: { size: 10, query: { term: { n: 4611686018427387903 } }, aggs: { t: { terms: { field: 'n' } } } },
        })
        return { hits: ids(r), buckets: (r.aggregations!.t as { buckets: unknown[] }).buckets }
      }
      const refreshed = await answer()
      expect(refreshed.hits).toEqual(['0', '2'])
      expect(refreshed.buckets).toHaveLength(1)
      // ... and the same values written straight to the rows, the index being refreshed now.
      await store.bulk({ index: 'longs', body: big.flatMap((n, i) => [{ index: { _id: String(i + 3) } }, { n }]) })
      const both = await store.search({ index: 'longs', body: { size: 0, aggs: { t: { terms: { field: 'n' } } } } })
      expect((both.aggregations!.t as { buckets: Array<{ doc_count: number }> }).buckets.map((b) => b.doc_count)).toEqual([4, 2])
      expect((await answer()).hits).toEqual(['0', '2', '3', '5'])
    } finally {
      await store.close()
    }
  })

  test('a bulk past REFRESH_DOCS writes the rows without a search; kill -9 leaves rows and mark in step', async () => {
    const path = join(dir, 'killed.db')
    const n = REFRESH_DOCS + 1500
    const child = Bun.spawn([process.execPath, join(import.meta.dir, 'fixtures', 'bulk-writer.ts'), path, String(n)], {
      stdout: 'pipe',
      stderr: 'inherit',
    })
    let out = ''
    const reader = child.stdout.getReader()
    while (!out.includes('\n')) {
      const { value, done } = await reader.read()
      if (done) break
      out += new TextDecoder().decode(value)
    }
    expect(out).toBe(`acked ${n}\n`)
    child.kill(9)
    await child.exited
    expect(child.signalCode).toBe('SIGKILL')

    // Refreshed once the bulks passed REFRESH_DOCS pending documents; the last ones still wait.
    const before = rowsOf(path)
    const [lo] = ridRange(before.ix)
    expect(before.indexedRid).toBeGreaterThanOrEqual(lo + REFRESH_DOCS)
    expect(before.indexedRid).toBeLessThan(lo + n)
    const written = before.listed.filter((r) => (JSON.parse(r) as number[])[2] < before.indexedRid!)
    expect(before.stored).toEqual(written)

    const store = openEmbeddedStore(path)
    try {
      expect((await store.count({ index: 'bulk' })).count).toBe(n)
      const r = await store.search({ index: 'bulk', body: { query: { term: { k: 'h11' } }, size: 0, track_total_hits: true } })
      expect(r.hits.total).toEqual({ value: Array.from({ length: n }, (_, i) => i).filter((i) => i % 97 === 11).length, relation: 'eq' })
      expect(ids(await store.search({ index: 'bulk', body: { query: { range: { n: { gte: n - 3 } } } } }))).toEqual(
        [n - 3, n - 2, n - 1].map(String),
      )
    } finally {
      await store.close()
    }
    const after = rowsOf(path)
    expect(after.indexedRid).toBe(lo + n)
    expect(after.stored).toEqual(after.listed)
  }, 120_000)

  test('a second after writes stop, the pending documents get their rows without a search', async () => {
    const path = join(dir, 'idle.db')
    const store = openEmbeddedStore(path)
    try {
      await store.createIndex({ index: 'bulk', body: { mappings: MAPPINGS } })
      const body = []
      for (let i = 0; i < 40; i++) body.push({ index: { _id: String(i) } }, refreshDoc(i))
      expect((await store.bulk({ index: 'bulk', body })).errors).toBe(false)
      const pending = rowsOf(path)
      const [lo] = ridRange(pending.ix)
      expect(pending.indexedRid ?? lo).toBeLessThan(lo + 40)
      // Read through a second connection only: no search, count or _refresh of this store runs.
      let now = pending
      for (const deadline = Date.now() + 10_000; now.indexedRid !== lo + 40 && Date.now() < deadline;) {
        await Bun.sleep(100)
        now = rowsOf(path)
      }
      expect(now.indexedRid).toBe(lo + 40)
      expect(now.stored).toEqual(now.listed)
    } finally {
      await store.close()
    }
  }, 20_000)

  test('a rowid given again after a reopen (the last document deleted) gets its rows at once', async () => {
    const path = join(dir, 'reuse.db')
    const a = openEmbeddedStore(path)
    await a.createIndex({ index: 'bulk', body: { mappings: MAPPINGS } })
    for (let i = 0; i < 3; i++) await a.index({ index: 'bulk', id: String(i), body: refreshDoc(i) })
    await a.refresh({ index: 'bulk' })
    await a.delete({ index: 'bulk', id: '2' })
    await a.close()
    const b = openEmbeddedStore(path)
    try {
      await b.index({ index: 'bulk', id: 'again', body: { k: ['again'], n: 99 } })
      expect(ids(await b.search({ index: 'bulk', body: { query: { term: { k: 'again' } } } }))).toEqual(['again'])
    } finally {
      await b.close()
    }
    const { listed, stored } = rowsOf(path)
    expect(stored).toEqual(listed)
  })
  // A write with refresh=true gets its rows in its own commit (core.ts, refreshAtCommit): the next
  // search has nothing to refresh, so it spends no transaction and log sync of its own on it.
  test('a write with refresh=true is refreshed by its own commit; one without waits for a search', async () => {
    const path = join(dir, 'asked.db')
    const store = openEmbeddedStore(path)
    await store.createIndex({ index: 'bulk', body: { mappings: MAPPINGS } })
    await store.index({ index: 'bulk', id: 'lazy', body: refreshDoc(1) })
    await store.index({ index: 'bulk', id: 'asked', body: refreshDoc(2), refresh: true })
    await store.index({ index: 'bulk', id: 'later', body: refreshDoc(3) })
    await store.close()
    const { listed, stored, indexedRid, ix } = rowsOf(path)
    // The first two have their rows (the refresh covers every pending document of the index), the last waits.
    expect(indexedRid).toBe(ridRange(ix)[0] + 2)
    expect(stored.length).toBeGreaterThan(0)
    expect(stored.every((r) => (JSON.parse(r) as number[])[2] < indexedRid!)).toBe(true)
    expect(listed.filter((r) => (JSON.parse(r) as number[])[2] < indexedRid!)).toEqual(stored)
  })
})

import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { BulkLine } from '../../src/store/port'
import { REFRESH_DOCS, REFRESH_STEP } from '../../src/store/embedded/refresh'
import { ridRange } from '../../src/store/embedded/rids'

const dir = mkdtempSync(join(tmpdir(), 'svc-deferred-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
const open = () => {
  const file = join(dir, `store-${files++}.db`)
  const store = openEmbeddedStore(file)
  return { file, store, db: (store as unknown as { db: Database }).db }
}

const creates = (ids: string[], index = 'found'): BulkLine[] => ids.flatMap((id) => [{ create: { _index: index, _id: id } }, { id, n: 1 }])

/** What another connection (another process would see the same) finds committed in the file. */
function committedIds(file: string): string[] {
  const db = new Database(file, { readonly: true })
  try {
    return (db.query('SELECT id FROM docs ORDER BY id').all() as Array<{ id: string }>).map((r) => r.id)
  } finally {
    db.close()
  }
}

/**
 * The write after deferred writes that were taken back (a detector's checkpoint after its findings)
 * is refused, telling so, and only then written; the sequence numbers taken back were taken back too.
 */
async function checkpointRefused(store: ReturnType<typeof openEmbeddedStore>, file: string, reason: RegExp): Promise<void> {
  await expect(store.index({ index: 'found', id: 'checkpoint', body: { n: 2 } })).rejects.toThrow(reason)
  const again = await store.index({ index: 'found', id: 'checkpoint', body: { n: 2 } })
  expect([again._seq_no, again.result]).toEqual([1, 'created'])
  expect(committedIds(file)).toEqual(['before', 'checkpoint'])
}

describe("bulks with durability 'deferred'", () => {
  test('answered before they commit: readable here at once, committed with the next write or search, several in one commit', async () => {
    const { file, store } = open()
    try {
      await store.createIndex({ index: 'found' })
      await store.bulk({ body: creates(['a', 'b']), durability: 'deferred' })
      await store.bulk({ body: creates(['c']), durability: 'deferred' })
      expect(committedIds(file)).toEqual([])
      expect((await store.get({ index: 'found', id: 'c' })).found).toBe(true)
      // Any other write commits them first: a detector's checkpoint after its findings.
      await store.index({ index: 'found', id: 'checkpoint', body: { n: 2 } })
      expect(committedIds(file)).toEqual(['a', 'b', 'c', 'checkpoint'])
      await store.bulk({ body: creates(['d']), durability: 'deferred' })
      // A search refreshes the index it reads (refresh.ts), which commits them too.
      const hits = await store.search({ index: 'found', body: { query: { term: { n: 1 } } } })
      expect(hits.hits.hits.map((h) => h._id).sort()).toEqual(['a', 'b', 'c', 'd'])
      expect(committedIds(file)).toEqual(['a', 'b', 'c', 'checkpoint', 'd'])
    } finally {
      await store.close()
    }
  })

  test('committed within a quarter second when nothing else writes, and by a close', async () => {
    const { file, store } = open()
    await store.createIndex({ index: 'found' })
    await store.bulk({ body: creates(['a']), durability: 'deferred' })
    for (let waited = 0; committedIds(file).length === 0 && waited < 5000; waited += 25) await Bun.sleep(25)
    expect(committedIds(file)).toEqual(['a'])
    await store.bulk({ body: creates(['b']), durability: 'deferred' })
    await store.close()
    expect(committedIds(file)).toEqual(['a', 'b'])
  })

  test('per-item failures keep the rest; a deferred bulk failing as a whole takes back every deferred write before it, and the next write is told', async () => {
    const { file, store } = open()
    try {
      await store.createIndex({ index: 'found' })
      await store.index({ index: 'found', id: 'before', body: { n: 0 } })
      await store.bulk({ body: creates(['a']), durability: 'deferred' })
      // A create conflict fails its item only.
      const r = await store.bulk({ body: creates(['a', 'b']), durability: 'deferred' })
      expect(r.items.map((i) => i.create?.status)).toEqual([409, 201])
      // A malformed action line fails the whole bulk, after its first document was written.
      const bad = [...creates(['c']), { nonsense: {} }, { n: 1 }]
      await expect(store.bulk({ body: bad, durability: 'deferred' })).rejects.toThrow('Malformed action/metadata line [3]')
      expect((await store.search({ index: 'found', body: {} })).hits.hits.map((h) => h._id)).toEqual(['before'])
      await checkpointRefused(store, file, /deferred writes were taken back: Malformed action/)
    } finally {
      await store.close()
    }
  })

  test('a deferred commit that fails takes its bulks back, in memory too, and the next write is told before it commits', async () => {
    const { file, store, db } = open()
    try {
      await store.createIndex({ index: 'found' })
      await store.index({ index: 'found', id: 'before', body: { n: 0 } })
      // A deferred foreign key is only checked at COMMIT: every insert into docs makes the commit fail.
      db.run('PRAGMA foreign_keys = ON')
      db.run('CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)')
      db.run('CREATE TEMP TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)')
      db.run('CREATE TEMP TRIGGER boom AFTER INSERT ON main.docs BEGIN INSERT INTO child (p) VALUES (1); END')
      await store.bulk({ body: creates(['a', 'b']), durability: 'deferred' })
      // Its deadline commits it, and fails.
      for (let waited = 0; (await store.count({ index: 'found' })).count > 1 && waited < 5000; waited += 25) await Bun.sleep(25)
      db.run('DROP TRIGGER boom')
      expect((await store.count({ index: 'found' })).count).toBe(1)
      await checkpointRefused(store, file, /deferred writes were taken back: .*FOREIGN KEY/)
    } finally {
      await store.close()
    }
  })

  test('a crash with a deferred transaction open loses its bulks, never the store: progress is recorded only once committed', async () => {
    const file = join(dir, `store-${files++}.db`)
    const store = openEmbeddedStore(file, { progressIntervalMs: 20 })
    await store.createIndex({ index: 'found' })
    await store.index({ index: 'found', id: 'before', body: { n: 0 } })
    await store.bulk({ body: creates(['a']), durability: 'deferred' })
    await Bun.sleep(100) // progress ticks while the deferred transaction is open
    // A crash (no clean close) before its commit.
    ;(store as unknown as { db: Database }).db.close(false)
    const reopened = openEmbeddedStore(file)
    try {
      expect((await reopened.search({ index: 'found', body: {} })).hits.hits.map((h) => h._id)).toEqual(['before'])
    } finally {
      await reopened.close()
    }
  })

  test('past REFRESH_DOCS pending, each deferred bulk refreshes REFRESH_STEP of them (a stretch of its own size), a search all', async () => {
    const { store, db } = open()
    try {
      await store.createIndex({ index: 'found', body: { mappings: { properties: { id: { type: 'keyword' } } } } })
      const indexed = () => {
        const { ix } = db.query("SELECT ix FROM indices WHERE name = 'found'").get() as { ix: number }
        return (db.query('SELECT count(*) AS n FROM fv WHERE rid BETWEEN ? AND ?').get(...ridRange(ix)) as { n: number }).n
      }
      const ids = (from: number, n: number) => Array.from({ length: n }, (_, i) => `d${from + i}`)
      for (let at = 0; at < REFRESH_DOCS - 1; at += 1000)
        await store.bulk({ body: creates(ids(at, Math.min(1000, REFRESH_DOCS - 1 - at))), durability: 'deferred' })
      expect(indexed()).toBe(0)
      await store.bulk({ body: creates(ids(REFRESH_DOCS - 1, 2)), durability: 'deferred' })
      // One `id` and one `n` value per document: the oldest REFRESH_STEP documents have their rows.
      expect(indexed()).toBe(2 * REFRESH_STEP)
      const all = await store.count({ index: 'found', body: { query: { prefix: { id: 'd' } } } })
      expect(all.count).toBe(REFRESH_DOCS + 1)
      expect(indexed()).toBe(2 * (REFRESH_DOCS + 1))
    } finally {
      await store.close()
    }
  })
})

// The store file's log is checkpointed by a thread of its own: under a stream of commits the log
// stays bounded although the node thread's own threshold is raised to a backstop far above it, and
// a closed store leaves no log behind (the thread let go of its connection first).
import { afterEach, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BACKSTOP_CHECKPOINT_PAGES } from '../../src/store/embedded/checkpointer'
import { openEmbeddedStore } from '../../src/store/embedded'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'checkpointer-'))
  dirs.push(dir)
  return join(dir, 'store.db')
}

const MiB = 1024 * 1024

test('the log stays bounded under a stream of commits, checkpointed off the node thread', async () => {
  const file = fresh()
  const store = openEmbeddedStore(file)
  try {
    // The node thread alone would let the log grow to its backstop before checkpointing.
    expect(BACKSTOP_CHECKPOINT_PAGES * 16 * 1024).toBeGreaterThan(128 * MiB)
    await store.createIndex({ index: 'big', body: { mappings: { dynamic: false } } })
    const text = 'x'.repeat(MiB)
    let largest = 0
    // 64 MiB of documents, a MiB per commit, with pauses the thread can checkpoint in.
    for (let i = 0; i < 64; i++) {
      await store.index({ index: 'big', id: `d${i}`, body: { text, i } })
      if (i % 4 === 3) await Bun.sleep(150)
      largest = Math.max(largest, statSync(`${file}-wal`).size)
    }
    expect(largest).toBeLessThan(24 * MiB)
    expect(await store.get({ index: 'big', id: 'd63' })).toMatchObject({ found: true, _source: { text, i: 63 } })
  } finally {
    await store.close()
  }
})

test('a closed store leaves no log behind, and opens again with every write', async () => {
  const file = fresh()
  const store = openEmbeddedStore(file)
  await store.createIndex({ index: 'ev' })
  await store.bulk({ body: Array.from({ length: 200 }, (_, i) => [{ index: { _index: 'ev', _id: `e${i}` } }, { n: i }]).flat() })
  await store.close()
  expect(existsSync(`${file}-wal`)).toBe(false)
  const again = openEmbeddedStore(file)
  try {
    expect((await again.count({ index: 'ev' })).count).toBe(200)
  } finally {
    await again.close()
  }
})

test('a store closed at once after opening does not wait on its checkpoint thread', async () => {
  const file = fresh()
  // Each close waits for the thread to let go of its connection, even one still starting.
  for (let i = 0; i < 5; i++) {
    const store = openEmbeddedStore(file)
    await store.close()
  }
  expect(existsSync(`${file}-wal`)).toBe(false)
})

test('a bulk asked to be durable later commits without a sync of its own; other writes keep theirs', async () => {
  const file = fresh()
  const store = openEmbeddedStore(file)
  const db = (store as unknown as { core: { db: import('bun:sqlite').Database } }).core.db
  // Observed, not changed: the durability statements the store gives its connection.
  const said: string[] = []
  const run = db.run.bind(db)
  db.run = ((sql: string, ...rest: unknown[]) => {
    if (sql.startsWith('PRAGMA synchronous')) said.push(sql)
    return (run as (...a: unknown[]) => unknown)(sql, ...rest)
  }) as typeof db.run
  try {
    await store.createIndex({ index: 'ev' })
    await store.bulk({ body: [{ index: { _index: 'ev', _id: 'a' } }, { n: 1 }] })
    expect(said).toEqual([])
    const r = await store.bulk({ body: [{ index: { _index: 'ev', _id: 'b' } }, { n: 2 }], durability: 'async' })
    expect(r.errors).toBe(false)
    expect(said).toEqual(['PRAGMA synchronous = NORMAL', 'PRAGMA synchronous = FULL'])
    expect((db.query('PRAGMA synchronous').get() as { synchronous: number }).synchronous).toBe(2)
  } finally {
    db.run = run
    await store.close()
  }
  // Acknowledged writes of both kinds are there after a reopen.
  const again = openEmbeddedStore(file)
  try {
    expect((await again.count({ index: 'ev' })).count).toBe(2)
  } finally {
    await again.close()
  }
})

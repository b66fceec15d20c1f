import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type EmbeddedStoreOptions, openEmbeddedStore } from '../../src/store/embedded'
import { MapperParsing, VersionConflict } from '../../src/store/errors'

const dir = mkdtempSync(join(tmpdir(), 'svc-group-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let files = 0
const open = (options: EmbeddedStoreOptions = {}) => {
  const file = join(dir, `store-${files++}.db`)
  const store = openEmbeddedStore(file, options)
  const db = (store as unknown as { db: Database }).db
  return { file, store, db }
}

/** Counts the commits of the store's connection (every transaction ends with a prepared COMMIT). */
function countCommits(db: Database): { commits: number } {
  const seen = { commits: 0 }
  const query = db.query.bind(db)
  db.query = ((sql: string) => {
    const statement = query(sql)
    if (sql !== 'COMMIT') return statement
    return {
      run: () => {
        const r = statement.run()
        seen.commits++
        return r
      },
    }
  }) as typeof db.query
  return seen
}

describe('group commit of single-document writes', () => {
  test('writes issued together commit once, and each settles after that commit, visible to another connection', async () => {
    // A slice no loaded machine outruns: what is asserted is one commit for writes of one turn, not the 5 ms default.
    const { file, store, db } = open({ groupSliceMs: 60_000 })
    await store.createIndex({ index: 'g' })
    const seen = countCommits(db)
    const settledAfter: number[] = []
    const writes = Array.from({ length: 20 }, (_, i) =>
      store.index({ index: 'g', id: `d${i}`, body: { i } }).then((r) => (settledAfter.push(seen.commits), r)),
    )
    const results = await Promise.all(writes)
    expect(seen.commits).toBe(1)
    expect(settledAfter).toEqual(Array(20).fill(1))
    expect(results.map((r) => r._seq_no)).toEqual(Array.from({ length: 20 }, (_, i) => i))
    const other = new Database(file, { readonly: true })
    try {
      expect((other.query('SELECT count(*) AS n FROM docs').get() as { n: number }).n).toBe(20)
    } finally {
      other.close()
    }
    await store.close()
  })

  test('a group stops taking writes after its slice: the rest commit next, in order, and other work runs in between', async () => {
    const { store, db } = open({ groupSliceMs: 0 })
    await store.createIndex({ index: 's' })
    const seen = countCommits(db)
    const order: string[] = []
    // Each write expects the one before it: they only all succeed if they commit in the order issued.
    const writes = Array.from({ length: 5 }, (_, i) =>
      store
        .index({ index: 's', id: 'x', body: { i }, ...(i > 0 ? { if_seq_no: i - 1, if_primary_term: 1 } : {}) })
        .then((r) => (order.push(`w${i}`), r)),
    )
    setImmediate(() => order.push('other'))
    expect((await Promise.all(writes)).map((r) => r._seq_no)).toEqual([0, 1, 2, 3, 4])
    expect(seen.commits).toBe(5)
    expect(order).toEqual(['w0', 'other', 'w1', 'w2', 'w3', 'w4'])
    await store.close()
  })

  test('a write sees the writes issued before it in the same group', async () => {
    const { store } = open()
    const first = store.index({ index: 'seq', id: 'x', body: { v: 1 } })
    const second = store.index({ index: 'seq', id: 'x', body: { v: 2 }, if_seq_no: 0, if_primary_term: 1 })
    const stale = store.index({ index: 'seq', id: 'x', body: { v: 3 }, if_seq_no: 0, if_primary_term: 1 })
    expect((await first)._seq_no).toBe(0)
    expect((await second)._seq_no).toBe(1)
    await expect(stale).rejects.toBeInstanceOf(VersionConflict)
    expect(await store.get({ index: 'seq', id: 'x' })).toMatchObject({ found: true, _source: { v: 2 } })
    await store.close()
  })

  test('a failing write takes back only itself: its rows, sequence number and the data stream it auto-created', async () => {
    const { file, store } = open()
    await store.createIndex({ index: 'strict', body: { mappings: { dynamic: 'strict', properties: { n: { type: 'long' } } } } })
    await store.putIndexTemplate({ name: 'ds', body: { index_patterns: ['ev-*'], data_stream: {} } })
    await store.index({ index: 'strict', id: 'kept', body: { n: 0 } })
    const outcomes = await Promise.allSettled([
      store.index({ index: 'strict', id: 'a', body: { n: 1 } }),
      store.index({ index: 'strict', id: 'b', body: { n: 2, extra: 'x' } }), // strict mapping: refused
      store.create({ index: 'strict', id: 'kept', body: { n: 3 } }), // exists: conflict
      store.index({ index: 'ev-1', body: { no_timestamp: true }, op_type: 'create' }), // creates the stream, then fails
      store.index({ index: 'loose', id: 'c', body: { grown: 'yes' } }), // auto-creates an index
      store.index({ index: 'strict', id: 'd', body: { n: 4 } }),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled'])
    const reasons = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason] : []))
    expect(reasons[0]).toMatchObject({ type: 'strict_dynamic_mapping_exception' })
    expect(reasons[1]).toBeInstanceOf(VersionConflict)
    expect(reasons[2]).toBeInstanceOf(MapperParsing)
    const values = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value._seq_no] : []))
    expect(values).toEqual([1, 0, 2]) // no sequence number spent on the failed writes
    expect((await store.getDataStream()).data_streams).toEqual([])
    expect(await store.resolve('*')).toEqual(['loose', 'strict'])
    expect((await store.count({ index: 'strict' })).count).toBe(3)
    expect((await store.get({ index: 'strict', id: 'b' })).found).toBe(false)
    await store.close()
    // What the failed write put in the file before failing went with its savepoint.
    const reopened = openEmbeddedStore(file)
    try {
      expect((await reopened.getDataStream()).data_streams).toEqual([])
      expect(await reopened.resolve('*')).toEqual(['loose', 'strict'])
    } finally {
      await reopened.close()
    }
  })

  test('a failed commit fails every write of the group and leaves no trace in memory or on disk', async () => {
    const { file, store, db } = open()
    await store.index({ index: 'c', id: 'before', body: { n: 0 } })
    // A deferred foreign key is only checked at COMMIT: every insert into docs makes the commit fail.
    db.run('PRAGMA foreign_keys = ON')
    db.run('CREATE TEMP TABLE parent (id INTEGER PRIMARY KEY)')
    db.run('CREATE TEMP TABLE child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED)')
    db.run('CREATE TEMP TRIGGER boom AFTER INSERT ON main.docs BEGIN INSERT INTO child (p) VALUES (1); END')
    const failed = await Promise.allSettled([
      store.index({ index: 'c', id: 'x', body: { n: 1 } }),
      store.index({ index: 'new', id: 'y', body: { n: 2 } }),
    ])
    expect(failed.map((o) => o.status)).toEqual(['rejected', 'rejected'])
    expect(String((failed[0] as PromiseRejectedResult).reason)).toContain('FOREIGN KEY')
    db.run('DROP TRIGGER boom')
    expect(await store.resolve('*')).toEqual(['c'])
    expect((await store.count({ index: 'c' })).count).toBe(1)
    const next = await store.index({ index: 'c', id: 'x', body: { n: 1 } })
    expect([next._seq_no, next._version, next.result]).toEqual([1, 1, 'created'])
    await store.close()
    const reopened = openEmbeddedStore(file)
    try {
      expect((await reopened.count({ index: 'c' })).count).toBe(2)
      expect((await reopened.index({ index: 'c', id: 'z', body: { n: 3 } }))._seq_no).toBe(2)
    } finally {
      await reopened.close()
    }
  })

  test('an operation issued after queued writes runs after them, and close commits what is queued', async () => {
    const { file, store } = open()
    const write = store.index({ index: 'auto', id: '1', body: { n: 1 } })
    await expect(store.createIndex({ index: 'auto' })).rejects.toThrow('already exists')
    expect((await write).result).toBe('created')
    const last = store.index({ index: 'auto', id: '2', body: { n: 2 } })
    await store.close()
    expect((await last).result).toBe('created')
    const reopened = openEmbeddedStore(file)
    try {
      expect((await reopened.count({ index: 'auto' })).count).toBe(2)
    } finally {
      await reopened.close()
    }
  })
})

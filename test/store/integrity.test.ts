// Store files from before markers existed: adopted when whole, refused when only their WAL is left.
import { expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { copyFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { markerPath, openEmbeddedStore } from '../../src/store/embedded'

test('a store without a marker is adopted: it gets an identity and a marker', async () => {
  const file = join(mkdtempSync(join(tmpdir(), 'svc-integrity-')), 'store.db')
  const a = openEmbeddedStore(file)
  await a.index({ index: 'old', id: '1', body: { n: 1 } })
  await a.close()
  rmSync(markerPath(file)) // as a store written before markers existed
  const b = openEmbeddedStore(file)
  try {
    expect((await b.get({ index: 'old', id: '1' })).found).toBe(true)
  } finally {
    await b.close()
  }
  const marker = JSON.parse(await Bun.file(markerPath(file)).text())
  expect(marker.store_uuid).toMatch(/^[0-9a-f-]{36}$/)
  expect(marker.generation).toBeGreaterThan(0)
})

test('without a marker, a write-ahead log whose store file is gone, or an empty store file, is refused', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-integrity-'))
  const file = join(dir, 'store.db')
  // A WAL with content, its database deleted (the WAL of a live connection, copied aside).
  const db = new Database(join(dir, 'live.db'))
  db.run('PRAGMA journal_mode = WAL')
  db.run('CREATE TABLE t (x)')
  db.run('INSERT INTO t VALUES (1)')
  copyFileSync(join(dir, 'live.db-wal'), `${file}-wal`)
  db.close()
  expect(() => openEmbeddedStore(file)).toThrow(`store file ${file} is missing but its write-ahead log`)
  expect(existsSync(file)).toBe(false) // nothing was created
  rmSync(`${file}-wal`)
  writeFileSync(file, '')
  expect(() => openEmbeddedStore(file)).toThrow('is empty (0 bytes)')
})

test('a copy taken while the store ran is refused after a crash once progress was recorded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-integrity-'))
  const file = join(dir, 'store.db')
  const store = openEmbeddedStore(file, { progressIntervalMs: 20 })
  await store.index({ index: 'live', id: '1', body: { n: 1 } })
  await Bun.sleep(60) // a tick records the write
  // The operator's copy, mid-run (file and WAL together, as a filesystem snapshot would take them).
  for (const s of ['', '-wal']) if (existsSync(file + s)) copyFileSync(file + s, join(dir, `copy.db${s}`))
  await store.index({ index: 'live', id: '2', body: { n: 2 } })
  await Bun.sleep(60)
  const before = JSON.parse(await Bun.file(markerPath(file)).text()).generation
  expect(before).toBeGreaterThanOrEqual(3) // open, then one tick per write burst
  // A crash (no clean close): the live files are replaced by the copy.
  ;(store as unknown as { db: Database }).db.close(false)
  for (const s of ['', '-wal', '-shm']) rmSync(file + s, { force: true })
  for (const s of ['', '-wal']) if (existsSync(join(dir, `copy.db${s}`))) copyFileSync(join(dir, `copy.db${s}`), file + s)
  expect(() => openEmbeddedStore(file)).toThrow('older than the generation')
})

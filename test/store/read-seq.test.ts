// readSeq: how a detector reads what is new on the embedded store — stored texts in `_seq_no`
// order after a seq_no, bounded by count and by characters, equal to what a search returns; and
// seqSource, where a worker thread reads the same rows on a connection of its own.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { StoredBatch } from '../../src/store/port'
import { openSeqReader } from '../../src/store/embedded/seq-read'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const store = openEmbeddedStore(':memory:')
const texts = (b: StoredBatch) => b.sources

beforeAll(async () => {
  await store.createIndex({ index: 'ev' })
  await store.createIndex({ index: 'other' })
  await store.bulk({
    refresh: true,
    body: Array.from({ length: 30 }, (_, i) => [
      { index: { _index: i % 3 === 0 ? 'other' : 'ev', _id: `d${i}` } },
      { n: i, text: `événement ${i} ✓ ${'x'.repeat(i * 10)}` },
    ]).flat(),
  })
  // An update moves a document to the end of the seq_no order.
  await store.index({ index: 'ev', id: 'd1', body: { n: 1, text: 'updated' }, refresh: true })
})
afterAll(() => store.close())

describe('readSeq', () => {
  test('every document after a seq_no, oldest first, with the source a search returns', async () => {
    const all = await store.readSeq!({ index: 'ev', after: -1, size: 1000, maxChars: 1 << 20 })
    const search = await store.search({ index: 'ev', body: { size: 100, sort: [{ _seq_no: 'asc' }], seq_no_primary_term: true } })
    expect(all.ids).toEqual(search.hits.hits.map((h) => h._id))
    expect(all.seqNos).toEqual(search.hits.hits.map((h) => h._seq_no!))
    expect(texts(all).map((t) => JSON.parse(t))).toEqual(search.hits.hits.map((h) => h._source))
    expect(all.ids[all.ids.length - 1]).toBe('d1')
    const after = await store.readSeq!({ index: 'ev', after: all.seqNos[4], size: 1000, maxChars: 1 << 20 })
    expect(after.ids).toEqual(all.ids.slice(5))
  })

  test('at most `size` documents, and a batch stops once its texts pass `maxChars`', async () => {
    const all = await store.readSeq!({ index: 'ev', after: -1, size: 1000, maxChars: 1 << 20 })
    expect((await store.readSeq!({ index: 'ev', after: -1, size: 3, maxChars: 1 << 20 })).ids).toEqual(all.ids.slice(0, 3))
    const cut = await store.readSeq!({ index: 'ev', after: -1, size: 1000, maxChars: 300 })
    expect(cut.ids.length).toBeGreaterThan(0)
    expect(cut.ids.length).toBeLessThan(all.ids.length)
    // The document that crossed the budget is in; nothing after it.
    const chars = cut.sources.map((t) => t.length)
    expect(chars.slice(0, -1).reduce((a, n) => a + n, 0)).toBeLessThan(300)
    expect(chars.reduce((a, n) => a + n, 0)).toBeGreaterThanOrEqual(300)
    expect(texts(cut)).toEqual(texts(all).slice(0, cut.ids.length))
  })

  test('an index that does not exist is index_not_found, a closed one index_closed_exception (as a search)', async () => {
    await expect(store.readSeq!({ index: 'nope', after: -1, size: 10, maxChars: 1000 })).rejects.toMatchObject({ status: 404 })
    await store.closeIndex({ index: 'other' })
    await expect(store.readSeq!({ index: 'other', after: -1, size: 10, maxChars: 1000 })).rejects.toMatchObject({
      type: 'index_closed_exception',
    })
  })
})

describe('seqSource', () => {
  test('a file store names its file: a reader of its own reads what readSeq gives, committed writes included', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'seq-source-'))
    const file = openEmbeddedStore(join(dir, 'store.db'))
    try {
      await file.createIndex({ index: 'ev' })
      await file.bulk({
        body: Array.from({ length: 20 }, (_, i) => [{ index: { _index: 'ev', _id: `d${i}` } }, { n: i, text: `é ${i}` }]).flat(),
      })
      const source = (await file.seqSource!('ev'))!
      expect(source.file).toBe(join(dir, 'store.db'))
      const reader = openSeqReader(source.file)
      try {
        const direct = await file.readSeq!({ index: 'ev', after: -1, size: 100, maxChars: 1 << 20 })
        expect(reader.read(source.ix, -1, 100, 1 << 20)).toEqual(direct)
        // A write acknowledged after the reader opened is visible to its next read.
        await file.index({ index: 'ev', id: 'late', body: { n: 99 } })
        const after = reader.read(source.ix, direct.seqNos[19], 100, 1 << 20)
        expect(after.ids).toEqual(['late'])
      } finally {
        reader.close()
      }
      await file.closeIndex({ index: 'ev' })
      await expect(file.seqSource!('ev')).rejects.toMatchObject({ type: 'index_closed_exception' })
      await expect(file.seqSource!('nope')).rejects.toMatchObject({ status: 404 })
    } finally {
      await file.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('an in-memory store has no file a thread could read', async () => {
    expect(await store.seqSource!('ev')).toBeUndefined()
  })
})

// readSeq: how a detector reads what is new on the embedded store — stored texts in `_seq_no`
// order after a seq_no, bounded by count and by bytes, equal to what a search returns.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { StoredBatch } from '../../src/store/port'

const store = openEmbeddedStore(':memory:')
const utf8 = new TextDecoder()
const texts = (b: StoredBatch) => Array.from(b.ends, (end, i) => utf8.decode(b.sources.subarray(i === 0 ? 0 : b.ends[i - 1], end)))

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
    const all = await store.readSeq!({ index: 'ev', after: -1, size: 1000, maxBytes: 1 << 20 })
    const search = await store.search({ index: 'ev', body: { size: 100, sort: [{ _seq_no: 'asc' }], seq_no_primary_term: true } })
    expect(all.ids).toEqual(search.hits.hits.map((h) => h._id))
    expect(all.seqNos).toEqual(search.hits.hits.map((h) => h._seq_no!))
    expect(texts(all).map((t) => JSON.parse(t))).toEqual(search.hits.hits.map((h) => h._source))
    expect(all.ids[all.ids.length - 1]).toBe('d1')
    const after = await store.readSeq!({ index: 'ev', after: all.seqNos[4], size: 1000, maxBytes: 1 << 20 })
    expect(after.ids).toEqual(all.ids.slice(5))
  })

  test('at most `size` documents, and a batch stops once its texts pass `maxBytes`', async () => {
    const all = await store.readSeq!({ index: 'ev', after: -1, size: 1000, maxBytes: 1 << 20 })
    expect((await store.readSeq!({ index: 'ev', after: -1, size: 3, maxBytes: 1 << 20 })).ids).toEqual(all.ids.slice(0, 3))
    const cut = await store.readSeq!({ index: 'ev', after: -1, size: 1000, maxBytes: 300 })
    expect(cut.ids.length).toBeGreaterThan(0)
    expect(cut.ids.length).toBeLessThan(all.ids.length)
    // The document that crossed the budget is in; nothing after it.
    expect(cut.ends[cut.ends.length - 2]).toBeLessThan(300)
    expect(cut.sources.length).toBeGreaterThanOrEqual(300)
    expect(texts(cut)).toEqual(texts(all).slice(0, cut.ids.length))
  })

  test('an index that does not exist is index_not_found, a closed one index_closed_exception (as a search)', async () => {
    await expect(store.readSeq!({ index: 'nope', after: -1, size: 10, maxBytes: 1000 })).rejects.toMatchObject({ status: 404 })
    await store.closeIndex({ index: 'other' })
    await expect(store.readSeq!({ index: 'other', after: -1, size: 10, maxBytes: 1000 })).rejects.toMatchObject({
      type: 'index_closed_exception',
    })
  })
})

// A rewritten document changes only the field-value keys that differ (doc-write.ts): searches
// through those keys must then see exactly the new values, kept, added and removed alike.
import { afterAll, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'

const store = openEmbeddedStore(':memory:')
afterAll(() => store.close())

const ids = async (query: Record<string, unknown>) =>
  (await store.search({ index: 'lists', body: { query, size: 100 } })).hits.hits.map((h) => h._id).sort()

test('after rewrites, term searches find the document by its current values only', async () => {
  await store.createIndex({ index: 'lists', body: { mappings: { properties: { rules: { type: 'keyword' }, n: { type: 'long' } } } } })
  let seed = 5
  const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000
  const current = new Map<string, { rules: string[]; n: number }>()
  for (let step = 0; step < 200; step++) {
    const id = `d${Math.floor(rnd() * 5)}`
    const doc = { rules: Array.from({ length: Math.floor(rnd() * 6) }, () => `r${Math.floor(rnd() * 8)}`), n: Math.floor(rnd() * 3) }
    await store.index({ index: 'lists', id, body: doc, refresh: true })
    current.set(id, doc)
  }
  for (let r = 0; r < 8; r++) {
    const want = [...current]
      .filter(([, d]) => d.rules.includes(`r${r}`))
      .map(([id]) => id)
      .sort()
    expect({ r, ids: await ids({ term: { rules: `r${r}` } }) }).toEqual({ r, ids: want })
  }
  for (let n = 0; n < 3; n++) {
    const want = [...current]
      .filter(([, d]) => d.n === n)
      .map(([id]) => id)
      .sort()
    expect({ n, ids: await ids({ term: { n } }) }).toEqual({ n, ids: want })
  }
})

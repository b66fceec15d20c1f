// A rewritten document changes only the field-value keys that differ (doc-write.ts): searches
// through those keys must then see exactly the new values, kept, added and removed alike.
import { afterAll, expect, test } from 'bun:test'
import { openEmbeddedStore } from '../../src/store/embedded'
import { nextSeed } from '../../scripts/bench/lib/random'

const store = openEmbeddedStore(':memory:')
afterAll(() => store.close())

const ids = async (query: Record<string, unknown>) =>
  (await store.search({ index: 'lists', body: { query, size: 100 } })).hits.hits.map((h) => h._id).sort()

test('after rewrites, term searches find the document by its current values only', async () => {
  await store.createIndex({ index: 'lists', body: { mappings: { properties: { rules: { type: 'keyword' }, n: { type: 'long' } } } } })
  let seed = 5
  const rnd = () => (seed = nextSeed(seed)) / 0x80000000
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

// Long lists (kept-keys.ts): rewrites of a list of hundreds of values diff it position by position
// against the keys kept of the row's last version. Appends, removals anywhere, duplicates, a value
// moved, the document deleted and written again, partial updates in between: after each, a term
// search finds the document by every value it holds and by none it no longer holds.
test('long lists rewritten many ways: searches see the added, kept and removed values', async () => {
  await store.createIndex({ index: 'long', body: { mappings: { properties: { rules: { type: 'keyword' }, tag: { type: 'keyword' } } } } })
  let seed = 11
  const rnd = () => (seed = nextSeed(seed)) / 0x80000000
  const pick = () => `v${Math.floor(rnd() * 700)}`
  let rules = Array.from({ length: 300 }, (_, i) => `v${i}`)
  let tag = 't0'
  let seqNo: number | undefined
  const everSeen = new Set(rules)
  const put = async () => {
    const cas = seqNo === undefined ? {} : { if_seq_no: seqNo, if_primary_term: 1 }
    seqNo = (await store.index({ index: 'long', id: 'doc', body: { rules, tag }, refresh: true, ...cas }))._seq_no
  }
  const check = async (step: number) => {
    const holds = new Set(rules)
    // Every value no longer held, and a seventh of the others (each of them every seven steps).
    for (const v of [...everSeen].filter((v, i) => !holds.has(v) || i % 7 === step % 7))
      expect({ step, v, found: (await store.count({ index: 'long', body: { query: { term: { rules: v } } } })).count }).toEqual({
        step,
        v,
        found: holds.has(v) ? 1 : 0,
      })
    expect((await store.count({ index: 'long', body: { query: { term: { tag } } } })).count).toBe(1)
  }
  await put()
  const changes: Array<() => void> = [
    () => (rules = [...rules, pick()]), // append (maybe a value already listed)
    () => (rules = [...rules, `new${Math.floor(rnd() * 1e6)}`]),
    () => (rules = rules.toSpliced(Math.floor(rnd() * rules.length), 1)), // remove one occurrence
    () => (rules = rules.toSpliced(Math.floor(rnd() * rules.length), 0, pick())), // insert in the middle
    () => (rules = rules.filter((v) => v !== rules[Math.floor(rnd() * rules.length)])), // remove every occurrence
    () => (rules = [...rules.slice(1), rules[0]]), // move the first to the end
    () => (tag = `t${Math.floor(rnd() * 3)}`),
  ]
  for (let step = 0; step < 120; step++) {
    changes[Math.floor(rnd() * changes.length)]()
    for (const v of rules) everSeen.add(v)
    if (step % 40 === 39) {
      // Written in between by other paths: a partial update, and a delete then a create.
      if (step === 39) {
        tag = 'partial'
        seqNo = (await store.update({ index: 'long', id: 'doc', body: { doc: { tag } }, refresh: true }))._seq_no
      } else {
        await store.delete({ index: 'long', id: 'doc', refresh: true })
        seqNo = undefined
      }
    }
    await put()
    await check(step)
  }
})

// The `keys` column of a long list's rewrite is spliced from the last version's text (kept-keys.ts):
// after any change, it must be the whole list's JSON, with each key's end where it is in that text.
test('a long list’s keys text spliced from the last version is its JSON', async () => {
  const { keysText } = await import('../../src/store/embedded/kept-keys')
  let seed = 3
  const rnd = (n: number) => Math.floor(((seed = nextSeed(seed)) / 0x80000000) * n)
  const key = (): [number, string | number] => [rnd(3), rnd(2) ? `v"${rnd(500)}\u00e9` : rnd(1000)]
  let keys = Array.from({ length: 300 }, key)
  let text = keysText(keys)
  const changes: Array<() => typeof keys> = [
    () => [...keys, key()],
    () => keys.toSpliced(rnd(keys.length), 1),
    () => keys.toSpliced(rnd(keys.length), 0, key(), key()),
    () => [key(), ...keys],
    () => keys.slice(0, rnd(keys.length)),
    () => keys.slice(rnd(keys.length)),
    () => [...keys],
    () => [],
    () => Array.from({ length: 260 + rnd(40) }, key),
  ]
  for (let step = 0; step < 300; step++) {
    keys = changes[rnd(changes.length)]()
    text = keysText(keys, text)
    expect({ step, json: text.json }).toEqual({ step, json: JSON.stringify(keys) })
    const ends = keys.map((_, i) => JSON.stringify(keys.slice(0, i + 1)).length - 1)
    expect({ step, ends: [...text.ends] }).toEqual({ step, ends })
  }
})

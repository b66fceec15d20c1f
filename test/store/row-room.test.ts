// A large row rewritten keeps its size where it can (row-room.ts), so that SQLite writes only the
// pages a rewrite changed: its source and keys end in white space. Every reader must still see
// the document exactly as written (get, search, term lookups through its keys), after appends,
// after a shrink, and after a restart.
import { afterAll, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'

const dir = mkdtempSync(join(tmpdir(), 'row-room-'))
const path = join(dir, 'store.db')
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const idOf = (i: number) => `rule-${String(i).padStart(6, '0')}-${'x'.repeat(24)}`

test('a long list rewritten: the row keeps its size, and reads back exactly', async () => {
  let store = openEmbeddedStore(path)
  await store.createIndex({
    index: 'lists',
    body: { mappings: { properties: { rules: { type: 'keyword' }, title: { type: 'keyword' } } } },
  })
  let rules = Array.from({ length: 2500 }, (_, i) => idOf(i))
  const doc = () => ({ title: 'win', rules, after: { note: 'a field after the list', n: rules.length } })
  await store.index({ index: 'lists', id: 'integration', body: doc(), refresh: true })
  const sql = new Database(path, { readonly: true })
  const sizes = () =>
    sql.query("SELECT octet_length(src) AS s, octet_length(keys) AS k FROM docs WHERE id = 'integration'").get() as { s: number; k: number }
  const check = async (step: string) => {
    const got = (await store.get({ index: 'lists', id: 'integration' })) as { _source?: unknown }
    expect({ step, source: got._source }).toEqual({ step, source: doc() })
    const count = async (v: string) => (await store.count({ index: 'lists', body: { query: { term: { rules: v } } } })).count
    expect({ step, last: await count(rules.at(-1)!), first: await count(rules[0]), gone: await count(idOf(0)) }).toEqual({
      step,
      last: 1,
      first: 1,
      gone: rules[0] === idOf(0) ? 1 : 0,
    })
    const hit = (await store.search({ index: 'lists', body: { query: { term: { title: 'win' } } } })).hits.hits[0]
    expect(hit._source).toEqual(doc())
  }

  const seen = new Set<number>()
  for (let i = 2500; i < 2560; i++) {
    rules = [...rules, idOf(i)]
    await store.index({ index: 'lists', id: 'integration', body: doc(), refresh: true })
    seen.add(sizes().s)
    if (i % 20 === 0) await check(`append ${i}`)
  }
  // 60 appends of 40 bytes: one size (room left after the first rewrite), where each append moved it before.
  expect(seen.size).toBe(1)
  const roomy = sizes()

  // Shrunk by more than a third: written again with room for the smaller list.
  rules = rules.slice(1500)
  await store.index({ index: 'lists', id: 'integration', body: doc(), refresh: true })
  expect(sizes().s).toBeLessThan(roomy.s / 2)
  await check('shrunk')
  sql.close()

  store.close()
  store = openEmbeddedStore(path)
  await check('after a restart')
  rules = [...rules, idOf(9999)]
  await store.index({ index: 'lists', id: 'integration', body: doc(), refresh: true })
  await check('appended after a restart')
  store.close()
})

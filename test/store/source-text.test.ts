/**
 * A source registered with the text it was parsed from (a `_bulk` line, src/store/source-text.ts)
 * is stored as that text; a source without one, and an update's merged source, are serialised.
 */
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import { parsedFrom } from '../../src/store/source-text'

const sourceOf = (r: object) => (r as { _source?: unknown })._source
const dir = mkdtempSync(join(tmpdir(), 'svc-source-text-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('a registered source is stored as its text; others and updates are serialised', async () => {
  const path = join(dir, 'store.db')
  const store = openEmbeddedStore(path)
  const sent = '{"n": 1.0, "k" : "a"}'
  const registered = JSON.parse(sent) as Record<string, unknown>
  parsedFrom(registered, sent)
  const r = await store.bulk({
    index: 'src',
    body: [{ index: { _id: '1' } }, registered, { index: { _id: '2' } }, { n: 2, k: 'b' }, { update: { _id: '1' } }, { doc: { k: 'c' } }],
  })
  expect(r.errors).toBe(false)
  await store.bulk({ index: 'src', body: [{ index: { _id: '3' } }, registered] })
  expect(sourceOf(await store.get({ index: 'src', id: '3' }))).toEqual({ n: 1, k: 'a' })
  expect(sourceOf(await store.get({ index: 'src', id: '1' }))).toEqual({ n: 1, k: 'c' })
  await store.close()
  const db = new Database(path, { readonly: true })
  try {
    const src = Object.fromEntries(db.query('SELECT id, src FROM docs').values() as Array<[string, string]>)
    expect(src).toEqual({ '1': '{"n":1,"k":"c"}', '2': '{"n":2,"k":"b"}', '3': sent })
  } finally {
    db.close()
  }
})

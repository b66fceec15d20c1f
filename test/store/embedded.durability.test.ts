import { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'

const dir = mkdtempSync(join(tmpdir(), 'svc-store-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('embedded store on disk', () => {
  test('acknowledged writes (and the deferred bulks before them) survive kill -9 of the writing process', async () => {
    const path = join(dir, 'kill9.db')
    const child = Bun.spawn([process.execPath, join(import.meta.dir, 'fixtures', 'acking-writer.ts'), path], {
      stdout: 'pipe',
      stderr: 'inherit',
    })
    let acked = -1
    const decoder = new TextDecoder()
    let buf = ''
    const reader = child.stdout.getReader()
    while (acked < 150) {
      const { value, done } = await reader.read()
      if (done) throw new Error('writer exited early')
      buf += decoder.decode(value)
      const lines = buf.split('\n')
      buf = lines.pop()!
      for (const l of lines) if (l.startsWith('ack ')) acked = Number(l.slice(4))
    }
    child.kill(9)
    await child.exited
    expect(child.signalCode).toBe('SIGKILL')

    const store = openEmbeddedStore(path)
    try {
      for (let i = 0; i <= acked; i++) {
        const got = await store.get({ index: 'durable', id: `doc-${i}` })
        expect(got.found).toBe(true)
        if (i % 7 === 0) expect((await store.get({ index: 'durable', id: `bulk-${i}` })).found).toBe(true)
        if (i % 5 === 0) expect((await store.get({ index: 'durable', id: `deferred-${i}` })).found).toBe(true)
      }
      // The store stays consistent and writable: sequence numbers continue after the last one.
      const { count } = await store.count({ index: 'durable' })
      expect(count).toBeGreaterThanOrEqual(acked + 1 + Math.floor(acked / 7) + 1 + Math.floor(acked / 5) + 1)
      const next = await store.index({ index: 'durable', id: 'after', body: { i: -1 } })
      expect(next._seq_no).toBeGreaterThanOrEqual(count)
      expect((await store.search({ index: 'durable', body: { query: { term: { i: 42 } } } })).hits.hits.map((h) => h._id).sort()).toEqual([
        'bulk-42',
        'doc-42',
      ])
    } finally {
      await store.close()
    }
    // The text index and its BM25 counters were written with each document: searching them gives
    // what reading every document gives.
    const ranked = async (scanOnly: boolean) => {
      const s = openEmbeddedStore(path, { scanOnly })
      try {
        const r = await s.search({ index: 'durable', body: { query: { match: { pad: 'x'.repeat(200) } }, size: 5 } })
        return { total: r.hits.total, hits: r.hits.hits.map((h) => [h._id, h._score]) }
      } finally {
        await s.close()
      }
    }
    const indexed = await ranked(false)
    expect(indexed.hits.length).toBe(5)
    expect(indexed).toEqual(await ranked(true))
  })

  test('indices, aliases, templates, data streams and mappings persist across reopen', async () => {
    const path = join(dir, 'reopen.db')
    const a = openEmbeddedStore(path)
    await a.createIndex({
      index: 'keep',
      body: { aliases: { k: {} }, mappings: { dynamic: 'strict', properties: { n: { type: 'long' } } } },
    })
    await a.index({ index: 'k', id: '1', body: { n: 5 } })
    await a.putIndexTemplate({ name: 'ds', body: { index_patterns: ['ev-*'], data_stream: {} } })
    await a.index({ index: 'ev-1', body: { '@timestamp': '2024-01-01T00:00:00Z' }, op_type: 'create' })
    await a.close()

    const b = openEmbeddedStore(path)
    try {
      expect(await b.resolve('k')).toEqual(['keep'])
      expect((await b.search({ index: 'keep', body: { query: { range: { n: { gte: 5 } } } } })).hits.hits.map((h) => h._id)).toEqual(['1'])
      await expect(b.index({ index: 'keep', body: { other: 1 } })).rejects.toThrow('strict')
      expect((await b.getDataStream()).data_streams.map((d) => d.name)).toEqual(['ev-1'])
      const w = await b.index({ index: 'keep', id: '2', body: { n: 6 } })
      expect(w._seq_no).toBe(1)
    } finally {
      await b.close()
    }
  })

  test('a closed index stays closed across reopen; stores from before closing existed still open', async () => {
    const path = join(dir, 'closed.db')
    const a = openEmbeddedStore(path)
    await a.index({ index: 'shut', id: '1', body: { n: 1 } })
    await a.index({ index: 'live', id: '1', body: { n: 1 } })
    await a.closeIndex({ index: 'shut' })
    await a.close()
    const b = openEmbeddedStore(path)
    try {
      expect((await b.stats({ index: 'shut,live' })).map((s) => [s.index, s.status])).toEqual([
        ['live', 'open'],
        ['shut', 'close'],
      ])
      await b.openIndex({ index: 'shut' })
    } finally {
      await b.close()
    }
    // A store file written before the `closed` column existed: the column is added on open.
    const old = new Database(path)
    old.run('ALTER TABLE indices DROP COLUMN closed')
    old.run('PRAGMA user_version = 0') // files of that time carried no schema version
    old.close()
    const c = openEmbeddedStore(path)
    try {
      expect((await c.stats({ index: 'shut,live' })).map((s) => s.status)).toEqual(['open', 'open'])
      expect((await c.get({ index: 'shut', id: '1' })).found).toBe(true)
    } finally {
      await c.close()
    }
  })
})

/**
 * Reading "what is new" by `_seq_no` (how detector runs page a source index: sort `_seq_no` asc,
 * `search_after`, no totals) must cost what it returns, not the size of the index. For indices of
 * 20,000 and 200,000 ~1 KB documents (some of them updated, so seq_no order is not insertion
 * order), the median time to read the newest 1,000 documents through the Store, against the same
 * read from a plain bun:sqlite table with an index on seq, measured in the same run.
 *
 *   node_modules/.bin/bun scripts/bench/store-seq.bench.ts [--docs N] [--new N]
 */
import { Database } from 'bun:sqlite'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { BulkLine } from '../../src/store/port'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const BIG = arg('--docs', 200_000)
const NEW = arg('--new', 1_000)
const ROUNDS = 15

const PAD = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(16)
const doc = (i: number) => ({
  '@timestamp': new Date(1_700_000_000_000 + i * 1000).toISOString(),
  host: `host-${i % 997}`,
  n: i,
  message: `${i} ${PAD}`,
})

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]

async function measure(dir: string, docs: number): Promise<{ store: number; raw: number }> {
  const store = openEmbeddedStore(join(dir, `store-${docs}.db`))
  const raw = new Database(join(dir, `raw-${docs}.db`))
  raw.run('PRAGMA journal_mode = WAL')
  raw.run('CREATE TABLE docs (rid INTEGER PRIMARY KEY, id TEXT, seq INTEGER, src TEXT)')
  raw.run('CREATE INDEX docs_seq ON docs (seq)')
  raw.run('CREATE UNIQUE INDEX docs_id ON docs (id)')
  try {
    await store.createIndex({ index: 'ev', body: { mappings: { properties: { host: { type: 'keyword' }, n: { type: 'long' } } } } })
    const insert = raw.query('INSERT INTO docs (id, seq, src) VALUES (?, ?, ?)')
    let seq = 0
    for (let at = 0; at < docs; at += 1000) {
      const lines: BulkLine[] = []
      for (let i = at; i < Math.min(docs, at + 1000); i++) lines.push({ index: { _id: String(i) } }, doc(i))
      if ((await store.bulk({ index: 'ev', body: lines })).errors) throw new Error('bulk errors')
      raw.transaction(() => {
        for (let i = at; i < Math.min(docs, at + 1000); i++) insert.run(String(i), seq++, JSON.stringify(doc(i)))
      })()
    }
    // Some old documents change: their seq_no moves to the end, as in a live index.
    const move = raw.query('UPDATE docs SET seq = ?, src = ? WHERE id = ?')
    const updates: BulkLine[] = []
    raw.transaction(() => {
      for (let i = 0; i < docs; i += 97) {
        updates.push({ update: { _id: String(i) } }, { doc: { touched: true } })
        move.run(seq++, JSON.stringify({ ...doc(i), touched: true }), String(i))
      }
    })()
    if ((await store.bulk({ index: 'ev', body: updates })).errors) throw new Error('update errors')
    const last = (
      await store.search({
        index: 'ev',
        body: { size: 1, sort: [{ _seq_no: 'desc' }], seq_no_primary_term: true, track_total_hits: false },
      })
    ).hits.hits[0]._seq_no!
    const after = last - NEW
    const read = raw.query('SELECT rid, id, seq, src FROM docs WHERE seq > ? ORDER BY seq LIMIT ?')

    const storeTimes: number[] = []
    const rawTimes: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      let t = performance.now()
      const page = await store.search({
        index: 'ev',
        body: { size: 10_000, sort: [{ _seq_no: 'asc' }], search_after: [after], seq_no_primary_term: true, track_total_hits: false },
      })
      storeTimes.push(performance.now() - t)
      t = performance.now()
      const rows = read.all(seq - NEW - 1, 10_000) as Array<{ src: string }>
      for (const row of rows) JSON.parse(row.src)
      rawTimes.push(performance.now() - t)
      // Seq numbers of superseded versions hold no document: both sides return the same survivors.
      if (page.hits.hits.length !== rows.length || rows.length < NEW * 0.9)
        throw new Error(`read ${page.hits.hits.length} vs ${rows.length} of ${NEW}`)
    }
    return { store: median(storeTimes), raw: median(rawTimes) }
  } finally {
    await store.close()
    raw.close()
  }
}

const dir = mkdtempSync(join(tmpdir(), 'svc-seq-bench-'))
try {
  const small = await measure(dir, Math.max(NEW * 2, Math.floor(BIG / 10)))
  const big = await measure(dir, BIG)
  const row = (label: string, m: { store: number; raw: number }) =>
    `${label.padEnd(52)}${m.store.toFixed(2).padStart(10)}${m.raw.toFixed(2).padStart(10)}${(m.raw / m.store).toFixed(2).padStart(26)}`
  console.log(`${'benchmark'.padEnd(52)}${'store'.padStart(10)}${'baseline'.padStart(10)}${'ratio (higher is better)'.padStart(26)}`)
  console.log(row(`newest ${NEW} by _seq_no of ${Math.max(NEW * 2, Math.floor(BIG / 10))} docs, median ms`, small))
  console.log(row(`newest ${NEW} by _seq_no of ${BIG} docs, median ms`, big))
  console.log(
    `growth with index size (x${(BIG / Math.max(NEW * 2, Math.floor(BIG / 10))).toFixed(0)} documents): store x${(big.store / small.store).toFixed(2)}, baseline x${(big.raw / small.raw).toFixed(2)}`,
  )
} finally {
  rmSync(dir, { recursive: true, force: true })
}

/**
 * Aggregation benchmark (issue 16, item 6): a `date_histogram` (1h) x `terms` (host) aggregation
 * over N documents in the embedded store, against the equivalent GROUP BY on a plain bun:sqlite
 * table holding the same rows, measured in the same run. Reports the median of the runs and
 * the ratio (goal: at most 2x). Each side runs once untimed first (JIT and page cache warm), as a
 * long-running node is.
 *
 *   node_modules/.bin/bun scripts/bench/aggs.bench.ts [--docs N] [--runs R]
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
const DOCS = arg('--docs', 1_000_000)
const RUNS = arg('--runs', 7)
const HOSTS = 20
const BASE = Date.UTC(2026, 0, 1)
const STEP = 7_000 // ms between events: 1M events span about 81 days

const docAt = (i: number) => ({ '@timestamp': BASE + i * STEP, host: `host-${i % HOSTS}`, level: i % 7 === 0 ? 'error' : 'info' })

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'aggs-bench-'))
  try {
    // Raw SQLite: the same rows in a plain table, grouped by hour and host.
    const raw = new Database(join(dir, 'raw.db'))
    raw.run('PRAGMA journal_mode = WAL')
    raw.run('CREATE TABLE events (ts INTEGER NOT NULL, host TEXT NOT NULL, level TEXT NOT NULL)')
    const ins = raw.prepare('INSERT INTO events VALUES (?, ?, ?)')
    raw.transaction(() => {
      for (let i = 0; i < DOCS; i++) {
        const d = docAt(i)
        ins.run(d['@timestamp'], d.host, d.level)
      }
    })()
    const sql = raw.prepare('SELECT ts - ts % 3600000 AS bucket, host, count(*) AS n FROM events GROUP BY bucket, host ORDER BY bucket')
    const store = openEmbeddedStore(join(dir, 'store.db'))
    await store.createIndex({
      index: 'events',
      body: { mappings: { properties: { '@timestamp': { type: 'date' }, host: { type: 'keyword' }, level: { type: 'keyword' } } } },
    })
    const started = performance.now()
    for (let from = 0; from < DOCS; from += 5000) {
      const lines: BulkLine[] = []
      for (let i = from; i < Math.min(DOCS, from + 5000); i++) lines.push({ index: { _id: String(i) } }, docAt(i))
      await store.bulk({ index: 'events', body: lines })
    }
    console.log(`ingested ${DOCS} documents in ${((performance.now() - started) / 1000).toFixed(1)} s`)
    const body = {
      size: 0,
      aggs: {
        per_hour: {
          date_histogram: { field: '@timestamp', fixed_interval: '1h', min_doc_count: 1 },
          aggs: { hosts: { terms: { field: 'host', size: HOSTS } } },
        },
      },
    }
    // Alternating runs, so that the load of a shared machine weighs on both sides alike.
    const rawTimes: number[] = []
    const ourTimes: number[] = []
    let rawGroups = 0
    let ourGroups = 0
    sql.all()
    await store.search({ index: 'events', body })
    for (let r = 0; r < RUNS; r++) {
      let t = performance.now()
      rawGroups = (sql.all() as unknown[]).length
      rawTimes.push(performance.now() - t)
      t = performance.now()
      const res = await store.search({ index: 'events', body })
      ourTimes.push(performance.now() - t)
      const buckets = (res.aggregations!.per_hour as { buckets: Array<{ hosts: { buckets: unknown[] } }> }).buckets
      ourGroups = buckets.reduce((n, b) => n + b.hosts.buckets.length, 0)
    }
    if (ourGroups !== rawGroups) throw new Error(`group counts differ: store ${ourGroups}, raw SQLite ${rawGroups}`)
    const a = median(ourTimes)
    const b = median(rawTimes)
    console.log(`date_histogram x terms over ${DOCS} docs (${ourGroups} groups), median of ${RUNS}:`)
    console.log(`  store aggregation  ${a.toFixed(1)} ms`)
    console.log(`  raw SQLite GROUP BY ${b.toFixed(1)} ms`)
    console.log(`  ratio ${(a / b).toFixed(2)}x (goal <= 2x)`)
    await store.close()
    raw.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

await main()

/**
 * Embedded store benchmarks (issue 3, benchmark 5), each against a baseline measured in the
 * same run on the same machine:
 *  (a) bulk ingest of 100,000 ~1 KB documents (keyword, date, long + text) in bulks of 1,000
 *      (and once more with the text field not indexed, as before the text index),
 *      vs. inserting the same JSON into a plain bun:sqlite table in one transaction, the two
 *      alternating round by round (--rounds, 3) and compared by their medians;
 *  (b) median latency of a selective term query and a range query over those documents,
 *      vs. the equivalent query on an indexed plain table (rows fetched and JSON-parsed);
 *  (c) peak RSS of a child process ingesting 1,000,000 documents in bulks of 1,000;
 *  (d) bulk items/s of Windows-like events an event stream refuses (a nested object outside the
 *      schema, under `strict_allow_templates`) vs. the same events accepted: a refused item
 *      should cost no more than an accepted one (ratio >= 1).
 * Both sides use WAL with synchronous=FULL (the store's default durability).
 *
 *   node_modules/.bin/bun scripts/bench/store.bench.ts [--docs N] [--rounds R] [--rss-docs N] [--refused-docs N]
 */
import { Database } from 'bun:sqlite'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { BulkLine, Store } from '../../src/store/port'
import { EVENTS_MAPPINGS } from '../../src/setup/indices/streams'
import { nextSeed } from './lib/random'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}

const WORDS =
  'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango'.split(' ')
const HOSTS = 10_000
const BASE_TS = Date.UTC(2024, 0, 1)

/** Deterministic ~1 KB event. */
function makeDoc(i: number): Record<string, unknown> {
  let msg = ''
  let x = i * 2654435761
  while (msg.length < 880) {
    x = nextSeed(x)
    msg += `${WORDS[(x >>> 8) % WORDS.length]} `
  }
  return {
    host: `host-${i % HOSTS}`,
    '@timestamp': new Date(BASE_TS + i * 1000).toISOString(),
    bytes: i,
    message: msg,
    level: i % 5 === 0 ? 'error' : 'info',
  }
}

const MAPPINGS = {
  properties: {
    host: { type: 'keyword' },
    '@timestamp': { type: 'date' },
    bytes: { type: 'long' },
    message: { type: 'text' },
    level: { type: 'keyword' },
  },
} as const

/**
 * The same documents with `message` kept in the source but not indexed (`index: false`): the work
 * the store did when the ratios of row (a) were first taken, before text fields had an index (its
 * cost is search.bench's ingest row), so the store's other paths compare with raw bun:sqlite alone.
 */
const MAPPINGS_NO_TEXT = { properties: { ...MAPPINGS.properties, message: { type: 'text', index: false } } } as const

/** A Windows logon failure; `refused` adds the `winlog` object the event schema does not hold. */
function windowsEvent(i: number, refused: boolean): Record<string, unknown> {
  return {
    '@timestamp': new Date(BASE_TS + i * 1000).toISOString(),
    event: { code: '4625', action: 'logon-failed', provider: 'Microsoft-Windows-Security-Auditing' },
    host: { name: `host-${i % HOSTS}` },
    user: { name: `user-${i % 100}` },
    process: { pid: i, name: 'lsass.exe' },
    message: 'An account failed to log on.',
    ...(refused
      ? { winlog: { channel: 'Security', event_data: { TargetUserName: `user-${i}`, LogonType: '3', Status: '0xc000006d' } } }
      : {}),
  }
}

function bulkLines(from: number, n: number): BulkLine[] {
  const lines: BulkLine[] = []
  for (let i = from; i < from + n; i++) lines.push({ index: { _id: String(i) } }, makeDoc(i))
  return lines
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function rssChild(path: string, docs: number): Promise<void> {
  const store = openEmbeddedStore(path)
  await store.createIndex({ index: 'rss', body: { mappings: MAPPINGS } })
  let peak = process.memoryUsage().rss
  const t0 = performance.now()
  for (let i = 0; i < docs; i += 1000) {
    const r = await store.bulk({ index: 'rss', body: bulkLines(i, Math.min(1000, docs - i)) })
    if (r.errors) throw new Error('bulk errors')
    const rss = process.memoryUsage().rss
    if (rss > peak) peak = rss
  }
  const secs = (performance.now() - t0) / 1000
  await store.close()
  console.log(JSON.stringify({ peak, docs, secs }))
}

/** Milliseconds `f` takes. */
async function timed(f: () => unknown): Promise<number> {
  const s = performance.now()
  await f()
  return performance.now() - s
}

/** A plain bun:sqlite table in a fresh file, the same JSON inserted in one transaction: the ingest baseline, in seconds. */
function rawIngest(file: string, docs: ReadonlyArray<Record<string, unknown>>): number {
  const raw = new Database(file)
  raw.run('PRAGMA journal_mode = WAL')
  raw.run('PRAGMA synchronous = FULL')
  raw.run('CREATE TABLE plain (id INTEGER PRIMARY KEY, doc TEXT NOT NULL)')
  const insPlain = raw.query('INSERT INTO plain (doc) VALUES (?)')
  const t0 = performance.now()
  raw.transaction(() => {
    for (const d of docs) insPlain.run(JSON.stringify(d))
  })()
  const secs = (performance.now() - t0) / 1000
  raw.close()
  return secs
}

/** The store: bulks of 1,000 (one transaction and one fsync each), with auto ids (the usual log-ingest path) or explicit ids (each checked for existence); in seconds. */
async function storeIngest(
  store: Store,
  index: string,
  docs: ReadonlyArray<Record<string, unknown>>,
  explicitIds: boolean,
  mappings: Record<string, unknown> = MAPPINGS,
): Promise<number> {
  await store.createIndex({ index, body: { mappings } })
  const start = performance.now()
  for (let i = 0; i < docs.length; i += 1000) {
    const lines: BulkLine[] = []
    for (let j = i; j < Math.min(docs.length, i + 1000); j++) lines.push({ index: explicitIds ? { _id: String(j) } : {} }, docs[j])
    const r = await store.bulk({ index, body: lines })
    if (r.errors) throw new Error('bulk errors')
  }
  // Until searchable: the field values of the last documents go in at the refresh.
  await store.refresh({ index })
  return (performance.now() - start) / 1000
}

async function main(): Promise<void> {
  if (process.argv.includes('--rss-child')) {
    const i = process.argv.indexOf('--rss-child')
    return rssChild(process.argv[i + 1], Number(process.argv[i + 2]))
  }
  const N = arg('--docs', 100_000)
  const RSS_DOCS = arg('--rss-docs', 1_000_000)
  // The baseline and the store alternate, round by round (or query by query), and each side's
  // median is compared: measured minutes apart, a loaded machine swung the ratios twofold.
  const ROUNDS = arg('--rounds', 3)
  const dir = mkdtempSync(join(tmpdir(), 'store-bench-'))
  const rows: Array<[string, string, string, string]> = []
  try {
    // Same documents for both sides, generated up front so neither pays for generation.
    const docs = Array.from({ length: N }, (_, i) => makeDoc(i))

    // (a) each round: the baseline, then the store with auto and with explicit ids, each in a fresh file
    const base: number[] = []
    const auto: number[] = []
    const explicit: number[] = []
    const noText: number[] = []
    let store: Store | undefined
    for (let r = 0; r < ROUNDS; r++) {
      base.push(rawIngest(join(dir, `raw-${r}.db`), docs))
      rmSync(join(dir, `raw-${r}.db`), { force: true })
      if (store) await store.close()
      rmSync(join(dir, `store-${r - 1}`), { recursive: true, force: true })
      mkdirSync(join(dir, `store-${r}`))
      store = openEmbeddedStore(join(dir, `store-${r}`, 'store.db'))
      auto.push(await storeIngest(store, 'bench-auto', docs, false))
      explicit.push(await storeIngest(store, 'bench', docs, true))
      noText.push(await storeIngest(store, 'bench-no-text', docs, false, MAPPINGS_NO_TEXT))
    }
    const opened = store!
    const baseRate = N / median(base)
    const autoRate = N / median(auto)
    const storeRate = N / median(explicit)
    const spread = (xs: number[]) => `${ROUNDS} rounds, ${(N / Math.max(...xs)).toFixed(0)}-${(N / Math.min(...xs)).toFixed(0)}`
    const noTextRate = N / median(noText)
    console.log(
      `(a) baseline ${spread(base)}; auto ids ${spread(auto)}; explicit ids ${spread(explicit)}; message not indexed ${spread(noText)} docs/s`,
    )
    rows.push(['(a) bulk ingest docs/s, auto ids', autoRate.toFixed(0), baseRate.toFixed(0), (autoRate / baseRate).toFixed(2)])
    rows.push(['(a) bulk ingest docs/s, explicit ids', storeRate.toFixed(0), baseRate.toFixed(0), (storeRate / baseRate).toFixed(2)])
    rows.push(['(a) ... auto ids, message not indexed', noTextRate.toFixed(0), baseRate.toFixed(0), (noTextRate / baseRate).toFixed(2)])

    // (b) baseline: indexed plain table with the same fields as columns
    const raw = new Database(join(dir, 'raw.db'))
    raw.run('PRAGMA journal_mode = WAL')
    raw.run('CREATE TABLE events (id INTEGER PRIMARY KEY, host TEXT, bytes INTEGER, ts INTEGER, doc TEXT)')
    const insEv = raw.query('INSERT INTO events (host, bytes, ts, doc) VALUES (?, ?, ?, ?)')
    raw.transaction(() => {
      for (const d of docs) insEv.run(d.host as string, d.bytes as number, Date.parse(d['@timestamp'] as string), JSON.stringify(d))
    })()
    raw.run('CREATE INDEX ev_host ON events (host)')
    raw.run('CREATE INDEX ev_bytes ON events (bytes)')
    const rawTerm = raw.query('SELECT doc FROM events WHERE host = ? LIMIT 10')
    const rawRange = raw.query('SELECT doc FROM events WHERE bytes >= ? AND bytes < ? ORDER BY id LIMIT 10')
    const rawCount = raw.query('SELECT count(*) AS n FROM events WHERE bytes >= ? AND bytes < ?')

    const REPS = 200
    /** Median ms of the store's and of the baseline's query, one of each in turn. */
    const pair = async (mine: (i: number) => unknown, theirs: (i: number) => unknown): Promise<[number, number]> => {
      const a: number[] = []
      const b: number[] = []
      for (let i = 0; i < REPS; i++) {
        a.push(await timed(() => mine(i)))
        b.push(await timed(() => theirs(i)))
      }
      return [median(a), median(b)]
    }
    const host = (i: number) => `host-${(i * 7919) % HOSTS}`
    const lo = (i: number) => (i * 4999) % (N - 100)
    // Warm up both sides once.
    await opened.search({ index: 'bench', body: { query: { term: { host: host(1) } } } })
    rawTerm.all(host(1))

    const [termStore, termRaw] = await pair(
      (i) => opened.search({ index: 'bench', body: { query: { term: { host: host(i) } } } }),
      (i) => (rawTerm.all(host(i)) as Array<{ doc: string }>).map((r) => JSON.parse(r.doc)),
    )
    rows.push(['(b) term query median ms (10 hits)', termStore.toFixed(3), termRaw.toFixed(3), (termRaw / termStore).toFixed(2)])

    const [rangeStore, rangeRaw] = await pair(
      (i) => opened.search({ index: 'bench', body: { query: { range: { bytes: { gte: lo(i), lt: lo(i) + 100 } } } } }),
      (i) => {
        const hits = (rawRange.all(lo(i), lo(i) + 100) as Array<{ doc: string }>).map((r) => JSON.parse(r.doc))
        return [hits, rawCount.get(lo(i), lo(i) + 100)]
      },
    )
    rows.push([
      '(b) range query median ms (100 matches, top 10)',
      rangeStore.toFixed(3),
      rangeRaw.toFixed(3),
      (rangeRaw / rangeStore).toFixed(2),
    ])
    // (d) refused vs accepted items on the event streams' mapping, in bulks of 500, alternating
    const REFUSED_DOCS = arg('--refused-docs', 20_000)
    await opened.createIndex({ index: 'bench-events', body: { mappings: EVENTS_MAPPINGS } })
    const eventsSecs = async (refused: boolean) => {
      const start = performance.now()
      for (let i = 0; i < REFUSED_DOCS; i += 500) {
        const lines: BulkLine[] = []
        for (let j = i; j < Math.min(REFUSED_DOCS, i + 500); j++) lines.push({ create: {} }, windowsEvent(j, refused))
        const r = await opened.bulk({ index: 'bench-events', body: lines })
        if (r.items.some((item) => (item.create?.error !== undefined) !== refused)) throw new Error('unexpected bulk outcome')
      }
      return (performance.now() - start) / 1000
    }
    await eventsSecs(false) // maps the schema fields once, as a running stream has
    const accepted: number[] = []
    const refused: number[] = []
    for (let r = 0; r < ROUNDS; r++) {
      accepted.push(await eventsSecs(false))
      refused.push(await eventsSecs(true))
    }
    const acceptedRate = REFUSED_DOCS / median(accepted)
    const refusedRate = REFUSED_DOCS / median(refused)
    rows.push([
      '(d) refused bulk items/s vs accepted',
      refusedRate.toFixed(0),
      acceptedRate.toFixed(0),
      (refusedRate / acceptedRate).toFixed(2),
    ])
    await opened.close()
    raw.close()

    // (c) peak RSS in a child process
    const child = Bun.spawn([process.execPath, import.meta.path, '--rss-child', join(dir, 'rss.db'), String(RSS_DOCS)], {
      stdout: 'pipe',
      stderr: 'inherit',
    })
    const out = await new Response(child.stdout).text()
    await child.exited
    const { peak, secs } = JSON.parse(out.trim().split('\n').pop()!) as { peak: number; secs: number }
    rows.push([
      `(c) peak RSS MiB ingesting ${RSS_DOCS.toLocaleString('en')} docs`,
      (peak / 2 ** 20).toFixed(0),
      '300 (aim)',
      (300 / (peak / 2 ** 20)).toFixed(2),
    ])
    rows.push([`(c) ingest docs/s during the RSS run`, (RSS_DOCS / secs).toFixed(0), '', ''])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }

  const head: [string, string, string, string] = ['benchmark', 'store', 'baseline', 'ratio (higher is better)']
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
  console.log(line(head))
  for (const r of rows) console.log(line(r))
}

await main()

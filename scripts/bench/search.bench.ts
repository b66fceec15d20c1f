/**
 * Search benchmark (issue 32): small documents in 5 dynamically mapped indices (strings become
 * `text` + `.keyword`, as a user's first bulk gets), searched as a user does: `match` on a rare
 * and on a common word, `term` on a text field, `query_string` on a keyword and on text, and the
 * newest-10 view (`match_all` sorted on a date). Reports bulk ingest rate, store file bytes per
 * document and the median latency of each query at BENCH_DOCS documents and at a tenth of it,
 * so that growth (ratio of the two) shows whether a query follows its matches or the index size.
 *
 *   BENCH_DOCS=150000 node_modules/.bin/bun scripts/bench/search.bench.ts [--runs R] [--rounds N]
 *   BENCH_DOCS=1000000 ... --rounds 1   (the 1M row: queries at 100k and 1M)
 */
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import type { BulkLine, SearchBody } from '../../src/store/port'
import { nextSeed } from './lib/random'

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const DOCS = Number(process.env.BENCH_DOCS ?? 150_000)
const RUNS = arg('--runs', 5)
// Rounds of ingest at BENCH_DOCS, with and without the text index in turn (1 is enough for a long 1M run).
const ROUNDS = arg('--rounds', Number(process.env.BENCH_ROUNDS ?? 3))
const INDICES = 5
const BASE = Date.UTC(2026, 0, 1)

const COMMON = ['the', 'error', 'user', 'login']
const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra'.split(
  ' ',
)

/** Deterministic small event: ~10 words of text, a keyword-like string, a number and a date. */
function makeDoc(i: number): Record<string, unknown> {
  let x = (i * 2654435761) >>> 0
  const next = () => (x = nextSeed(x)) >>> 8
  const words: string[] = []
  // "the" is in about a third of the documents; a `tok<n>` token is in about one in 10,000.
  if (i % 3 === 0) words.push('the')
  for (let w = 0; w < 8; w++) words.push(WORDS[next() % WORDS.length])
  words.push(`tok${next() % Math.max(1, Math.floor(DOCS / 10))}`)
  words.push(COMMON[1 + (i % 3)])
  return { msg: words.join(' '), k: `v${i % 1000}`, n: i, ts: new Date(BASE + i * 1000).toISOString() }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

const QUERIES: Array<[string, SearchBody]> = [
  ['match rare', { query: { match: { msg: 'tok7' } } }],
  ['match common', { query: { match: { msg: 'the' } } }],
  ['term on text', { query: { term: { msg: 'golf' } } }],
  ['query_string keyword', { query: { query_string: { query: 'k.keyword:v7' } } }],
  ['query_string text', { query: { query_string: { query: 'msg:tok7 OR msg:tok8' } } }],
  ['query_string free', { query: { query_string: { query: 'tok9' } } }],
  ['newest-10', { query: { match_all: {} }, sort: [{ ts: 'desc' }], size: 10 }],
  ['newest-10 after', { query: { match_all: {} }, sort: [{ n: 'desc' }], size: 10, search_after: [DOCS / 2] }],
  // An event browser's view: a time range as Dashboards writes it, the newest 500, a histogram, the exact total.
  [
    'Discover view',
    {
      size: 500,
      sort: [{ ts: { order: 'desc', unmapped_type: 'boolean' } }],
      track_total_hits: true,
      query: {
        bool: {
          filter: [
            { match_all: {} },
            {
              range: {
                ts: {
                  gte: new Date(BASE + DOCS * 100).toISOString(),
                  lte: new Date(BASE + DOCS * 1000).toISOString(),
                  format: 'strict_date_optional_time',
                },
              },
            },
          ],
        },
      },
      aggs: { t: { date_histogram: { field: 'ts', fixed_interval: '1h', min_doc_count: 1 } } },
    },
  ],
  ['terms agg', { size: 0, aggs: { k: { terms: { field: 'k.keyword', size: 10 } } } }],
  [
    'date_histogram agg, text query',
    { size: 0, query: { match: { msg: 'error' } }, aggs: { t: { date_histogram: { field: 'ts', fixed_interval: '1h' } } } },
  ],
]

/**
 * Ingest and query times at `docs` documents. `withoutTextIndex` maps every string as `keyword`
 * only: the index work the store did before it had a text index (the `.keyword` sub-field was
 * indexed, the text field was not), so ingest with and without the text index compare in one run.
 */
async function measure(
  docs: number,
  withoutTextIndex = false,
  queries = !withoutTextIndex,
): Promise<{ ingest: number; bytesPerDoc: number; times: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'search-bench-'))
  try {
    const file = join(dir, 'store.db')
    const store = openEmbeddedStore(file)
    if (withoutTextIndex)
      for (let ix = 0; ix < INDICES; ix++)
        await store.createIndex({
          index: `logs-${ix}`,
          body: { mappings: { dynamic_templates: [{ strings: { match_mapping_type: 'string', mapping: { type: 'keyword' } } }] } },
        })
    const started = performance.now()
    const per = Math.ceil(docs / INDICES)
    for (let ix = 0; ix < INDICES; ix++)
      for (let from = 0; from < per; from += 1000) {
        const lines: BulkLine[] = []
        for (let i = from; i < Math.min(per, from + 1000); i++) lines.push({ index: { _id: String(i) } }, makeDoc(ix * per + i))
        await store.bulk({ index: `logs-${ix}`, body: lines })
      }
    // Until searchable: the field values of the last documents go in at the refresh.
    await store.refresh({ index: 'logs-*' })
    const ingest = docs / ((performance.now() - started) / 1000)
    const times = new Map<string, number>()
    for (const [name, body] of queries ? QUERIES : []) {
      await store.search({ index: 'logs-*', body }) // warm
      const ts: number[] = []
      for (let r = 0; r < RUNS; r++) {
        const t = performance.now()
        await store.search({ index: 'logs-*', body })
        ts.push(performance.now() - t)
      }
      times.set(name, median(ts))
    }
    await store.close()
    const size = ['', '-wal'].reduce((n, s) => n + (existsSync(file + s) ? statSync(file + s).size : 0), 0)
    return { ingest, bytesPerDoc: size / docs, times }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const small = await measure(Math.floor(DOCS / 10))
// Ingest with and without the text index alternate, round by round, and their medians compare:
// measured minutes apart on a loaded machine, the ratio swung from 0.46 to 0.78.
const withText: Array<Awaited<ReturnType<typeof measure>>> = []
const plains: Array<Awaited<ReturnType<typeof measure>>> = []
for (let r = 0; r < ROUNDS; r++) {
  withText.push(await measure(DOCS, false, r === ROUNDS - 1))
  plains.push(await measure(DOCS, true))
}
const rates = (xs: typeof withText) => xs.map((x) => x.ingest)
const big = { ...withText[withText.length - 1], ingest: median(rates(withText)) }
const plain = { ...plains[0], ingest: median(rates(plains)) }
const range = (xs: typeof withText) => `${Math.min(...rates(xs)).toFixed(0)}-${Math.max(...rates(xs)).toFixed(0)}`
console.log(`ingest rounds (${ROUNDS}, alternating): with the text index ${range(withText)} docs/s, keyword only ${range(plains)} docs/s`)
console.log(`ingest: ${big.ingest.toFixed(0)} docs/s at ${DOCS}; store file ${big.bytesPerDoc.toFixed(0)} bytes/doc`)
console.log(
  `without the text index (strings mapped keyword only): ${plain.ingest.toFixed(0)} docs/s, ${plain.bytesPerDoc.toFixed(0)} bytes/doc; ` +
    `ingest with / without ${(big.ingest / plain.ingest).toFixed(2)} (target >= 0.8), store file ${(big.bytesPerDoc / plain.bytesPerDoc).toFixed(2)}x (target <= 2)`,
)
console.log(`${'query'.padEnd(32)} ${String(DOCS / 10).padStart(8)} docs ${String(DOCS).padStart(8)} docs   growth (x${10})`)
for (const [name] of QUERIES) {
  const a = small.times.get(name)!
  const b = big.times.get(name)!
  console.log(`${name.padEnd(32)} ${a.toFixed(1).padStart(10)} ms ${b.toFixed(1).padStart(10)} ms   ${(b / a).toFixed(2)}x`)
}

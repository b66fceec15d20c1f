/**
 * svc-ext's embedded store against a one-node OpenSearch, on the same machine in the same run
 * (issue 26), both over HTTP with the same requests:
 *  - bulk ingest of security events into a data stream with the full event schema (bulks of 1,000);
 *  - median latency of term, range, bool, match and query_string searches, and of a
 *    date_histogram x terms aggregation over every event;
 *  - peak RSS of the svc-ext process against the OpenSearch JVM's.
 * Ratios are OpenSearch / embedded for times and memory, embedded / OpenSearch for rates: 1 or more
 * means the embedded store is at least as good (the memory target is 4).
 *
 * OpenSearch is started here with the JVM's production defaults (G1, full JIT; `--heap` MiB, 1024 by
 * default), or attached with `--state <file>` of a running `npm run opensearch` (its RSS then
 * includes whatever it did before). Skipped with one line where Java or Maven is missing.
 *
 *   node_modules/.bin/bun scripts/bench/opensearch.bench.ts [--events N] [--runs R] [--heap MiB] [--state file]
 */
import { readFileSync } from 'node:fs'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startServer } from '../conformance/target'
import { attachOpenSearch, missingPrerequisites, startOpenSearch, type RunningOpenSearch } from '../opensearch/cluster'
import { EVENTS_MAPPINGS } from '../../src/setup/indices/streams'
import { event, FIRST_EVENT_MS } from './lib/security-events'

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name)
  return i > 0 ? process.argv[i + 1] : fallback
}
// `bun run bench` passes no arguments: BENCH_OS_EVENTS sizes the run there.
const EVENTS = Number(arg('--events', process.env.BENCH_OS_EVENTS ?? '1000000'))
const RUNS = Number(arg('--runs', '21'))
const STREAM = 'bench-events'

interface Target {
  name: string
  url: string
  authorization?: string
  pid: number
}

async function call(t: Target, method: string, path: string, body?: unknown, ndjson?: string): Promise<any> {
  const headers: Record<string, string> = { 'content-type': ndjson ? 'application/x-ndjson' : 'application/json' }
  if (t.authorization) headers.authorization = t.authorization
  const res = await fetch(t.url + path, { method, headers, body: ndjson ?? (body === undefined ? undefined : JSON.stringify(body)) })
  const json = await res.json()
  if (res.status >= 300) throw new Error(`${t.name} ${method} ${path}: ${res.status} ${JSON.stringify(json).slice(0, 500)}`)
  return json
}

/** The stream and its template gone (a previous run's, on an attached node), so every run ingests into an empty stream. */
async function dropStream(t: Target): Promise<void> {
  for (const path of [`/_data_stream/${STREAM}`, `/_index_template/${STREAM}`]) {
    const res = await fetch(t.url + path, { method: 'DELETE', headers: t.authorization ? { authorization: t.authorization } : {} })
    if (res.status >= 300 && res.status !== 404) throw new Error(`${t.name} DELETE ${path}: ${res.status} ${await res.text()}`)
  }
}

/** The same data stream on both: the event schema's mappings, one shard, no replica. */
async function createStream(t: Target): Promise<void> {
  await dropStream(t)
  await call(t, 'PUT', `/_index_template/${STREAM}`, {
    index_patterns: [`${STREAM}*`],
    data_stream: {},
    priority: 500,
    template: { settings: { number_of_shards: 1, number_of_replicas: 0 }, mappings: EVENTS_MAPPINGS },
  })
  await call(t, 'PUT', `/_data_stream/${STREAM}`)
}

async function ingest(t: Target): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < EVENTS; i += 1000) {
    let body = ''
    for (let j = i; j < Math.min(EVENTS, i + 1000); j++) body += `{"create":{}}\n${JSON.stringify(event(j))}\n`
    const r = await call(t, 'POST', `/${STREAM}/_bulk`, undefined, body)
    if (r.errors) throw new Error(`${t.name}: bulk errors: ${JSON.stringify(r.items.find((x: any) => x.create?.error))}`)
  }
  // Until searchable, on both: their refreshes write what the bulks left to them.
  await call(t, 'POST', `/${STREAM}/_refresh`)
  return EVENTS / ((performance.now() - started) / 1000)
}

// An event browser's view (OpenSearch Dashboards' Discover): the last nine tenths of the events as
// its time picker writes them, the newest 500 by time, an hourly histogram beside them.
const TIME_FILTER = {
  bool: {
    must: [],
    filter: [
      { match_all: {} },
      {
        range: {
          '@timestamp': {
            gte: new Date(FIRST_EVENT_MS + EVENTS * 100).toISOString(),
            lte: new Date(FIRST_EVENT_MS + EVENTS * 1000).toISOString(),
            format: 'strict_date_optional_time',
          },
        },
      },
    ],
    should: [],
    must_not: [],
  },
}
const NEWEST = { size: 500, sort: [{ '@timestamp': { order: 'desc', unmapped_type: 'boolean' } }], query: TIME_FILTER }

const SEARCHES: Array<[string, unknown]> = [
  ['term', { query: { term: { 'user.name': 'postgres' } } }],
  ['range', { query: { range: { 'source.port': { gte: 20_000, lt: 20_100 } } } }],
  [
    'bool',
    {
      query: {
        bool: {
          must: [{ term: { 'event.action': 'sudo' } }],
          filter: [{ range: { '@timestamp': { gte: '2026-05-28T00:00:00Z' } } }],
          must_not: [{ term: { 'event.outcome': 'success' } }],
        },
      },
    },
  ],
  ['match', { query: { match: { 'process.command_line': '/etc/shadow' } } }],
  ['query_string', { query: { query_string: { query: 'event.action:login AND user.name:root AND host.name:host-42' } } }],
  ['newest 500 in a time range', NEWEST],
  [
    'Discover view (+ histogram, exact total)',
    {
      ...NEWEST,
      track_total_hits: true,
      aggs: { 2: { date_histogram: { field: '@timestamp', fixed_interval: '1h', time_zone: 'UTC', min_doc_count: 1 } } },
    },
  ],
  [
    'Discover view, negated pill',
    {
      ...NEWEST,
      track_total_hits: true,
      query: { bool: { ...TIME_FILTER.bool, must_not: [{ match_phrase: { 'event.outcome': 'success' } }] } },
      aggs: { 2: { date_histogram: { field: '@timestamp', fixed_interval: '1h', time_zone: 'UTC', min_doc_count: 1 } } },
    },
  ],
  [
    'date_histogram x terms',
    {
      size: 0,
      aggs: { h: { date_histogram: { field: '@timestamp', fixed_interval: '1h' }, aggs: { t: { terms: { field: 'host.name' } } } } },
    },
  ],
]

async function medianMs(t: Target, body: unknown): Promise<number> {
  await call(t, 'POST', `/${STREAM}/_search`, body)
  const xs: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now()
    await call(t, 'POST', `/${STREAM}/_search`, body)
    xs.push(performance.now() - s)
  }
  return xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]
}

/** Peak resident memory of a process (VmHWM), in MiB. */
function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  return m ? Number(m[1]) / 1024 : Number.NaN
}

async function openSearch(scratch: string): Promise<RunningOpenSearch> {
  const state = arg('--state', '')
  if (state) return attachOpenSearch(JSON.parse(readFileSync(state, 'utf8')))
  return startOpenSearch({
    basePath: join(scratch, 'opensearch'),
    nodes: 1,
    secure: false,
    clusterName: 'svc-bench',
    jvm: 'server',
    heapMiB: Number(arg('--heap', '1024')),
    log: (l) => process.stderr.write(l + '\n'),
  })
}

async function main(): Promise<void> {
  const missing = arg('--state', '') ? null : missingPrerequisites()
  if (missing) {
    console.log(`SKIPPED (a real OpenSearch cannot start here: ${missing})`)
    return
  }
  const scratch = mkdtempSync(join(tmpdir(), 'svc-os-bench-'))
  const os = await openSearch(scratch)
  const svc = await startServer(resolve(import.meta.dir, '..', '..'), (l) => process.stderr.write(l + '\n'))
  try {
    const nodes = (await (await fetch(`${os.urls[0]}/_nodes/process`)).json()) as { nodes: Record<string, { process: { id: number } }> }
    const osPid = Object.values(nodes.nodes)[0].process.id
    const embedded: Target = {
      name: 'embedded',
      url: svc.baseUrl,
      authorization: `Basic ${btoa(`${svc.user}:${svc.password}`)}`,
      pid: svc.pid,
    }
    const platform: Target = { name: 'opensearch', url: os.urls[0], pid: osPid }
    const rows: string[][] = []
    const row = (name: string, mine: number, theirs: number, ratio: number, unit: string) =>
      rows.push([
        name,
        `${mine.toFixed(unit === 'docs/s' ? 0 : 2)} ${unit}`,
        `${theirs.toFixed(unit === 'docs/s' ? 0 : 2)} ${unit}`,
        ratio.toFixed(2),
      ])
    for (const t of [embedded, platform]) await createStream(t)
    const rates = [await ingest(embedded), await ingest(platform)]
    row(`bulk ingest, ${EVENTS.toLocaleString('en')} events`, rates[0], rates[1], rates[0] / rates[1], 'docs/s')
    for (const [name, body] of SEARCHES) {
      const mine = await medianMs(embedded, body)
      const theirs = await medianMs(platform, body)
      row(`${name} (median)`, mine, theirs, theirs / mine, 'ms')
    }
    const rss = [peakRssMiB(embedded.pid), peakRssMiB(platform.pid)]
    row('peak RSS', rss[0], rss[1], rss[1] / rss[0], 'MiB')
    const head = ['benchmark', 'embedded', 'opensearch', 'ratio (>= 1: embedded as good)']
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
    const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')
    console.log(line(head))
    for (const r of rows) console.log(line(r))
    console.log('the 1,000-rule detector run over 100k events in both modes: detector-platform.bench')
    await dropStream(platform)
  } finally {
    await svc.stop()
    if (!arg('--state', '')) await os.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}

await main()

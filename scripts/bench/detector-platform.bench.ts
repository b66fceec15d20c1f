/**
 * The same detector run on the embedded store and on a real one-node OpenSearch (issue 26): a
 * Ruleset Management with 1,000 generated rules (lib/security-events.ts) over 100,000 stored
 * security events, once with the embedded store and once with the platform adapter talking to
 * OpenSearch, in the same process and run. Reported: documents/s of each run (read by `_seq_no`,
 * evaluate, write the findings, checkpoint) and their ratio embedded / platform (1 or more: the
 * embedded store is at least as fast); the findings must be equal.
 *
 * OpenSearch is started here with the JVM's production defaults and a 1 GiB heap, or attached with
 * `--state <file>` of `npm run opensearch -- --no-security`. Skipped with one line where Java or
 * Maven is missing. BENCH_DOCS and BENCH_RULES size the run.
 *
 *   node_modules/.bin/bun scripts/bench/detector-platform.bench.ts [--state file]
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openEmbeddedStore } from '../../src/store/embedded'
import { openPlatformStore } from '../../src/store/platform'
import type { Store } from '../../src/store/port'
import { attachOpenSearch, missingPrerequisites, startOpenSearch, type RunningOpenSearch } from '../opensearch/cluster'
import { createBenchDetector, indexEvents, openBenchRuleset, reseed } from './lib/security-events'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const EVENTS = 'svc-events-v5-security'
const state = (() => {
  const i = process.argv.indexOf('--state')
  return i > 0 ? process.argv[i + 1] : ''
})()

async function openSearch(scratch: string): Promise<RunningOpenSearch> {
  if (state) return attachOpenSearch(JSON.parse(readFileSync(state, 'utf8')))
  return startOpenSearch({
    basePath: join(scratch, 'opensearch'),
    nodes: 1,
    secure: false,
    clusterName: 'svc-bench-detector',
    jvm: 'server',
    heapMiB: 1024,
    log: (l) => process.stderr.write(l + '\n'),
  })
}

/** Indexes the events, runs the detector once over them: its documents/s and findings. */
async function run(label: string, root: string, store: Store): Promise<{ rate: number; findings: number }> {
  reseed()
  const bench = await openBenchRuleset(root, RULES, store)
  await createBenchDetector(bench, RULES)
  let t = performance.now()
  await indexEvents(store, EVENTS, DOCS)
  await store.refresh({ index: EVENTS })
  const ingest = DOCS / ((performance.now() - t) / 1000)
  t = performance.now()
  const outcome = await bench.ruleset.scheduler.runLeased('int-linux')
  const seconds = (performance.now() - t) / 1000
  if (!outcome || outcome.status !== 'ran' || outcome.documents !== DOCS) throw new Error(`${label}: run ${JSON.stringify(outcome)}`)
  const rate = DOCS / seconds
  console.log(
    `${label}: ingest ${ingest.toFixed(0)} events/s; detector run, ${RULES} rules over ${DOCS} events: ` +
      `${rate.toFixed(0)} documents/s (${seconds.toFixed(2)} s), ${outcome.findings} findings`,
  )
  return { rate, findings: outcome.findings ?? 0 }
}

const missing = state ? null : missingPrerequisites()
if (missing) {
  console.log(`SKIPPED (a real OpenSearch cannot start here: ${missing})`)
} else {
  const scratch = mkdtempSync(join(tmpdir(), 'svc-detector-platform-'))
  const os = await openSearch(scratch)
  try {
    const platform = openPlatformStore({ url: os.urls, username: os.admin.name, password: os.admin.password })
    // An attached node may hold an earlier run's indices.
    await os.request('DELETE', '/_data_stream/svc-*')
    await os.request('DELETE', '/.platform-sap-*?expand_wildcards=all')
    for (const dir of ['embedded', 'platform']) mkdirSync(join(scratch, dir))
    const embedded = await run('embedded store', join(scratch, 'embedded'), openEmbeddedStore(join(scratch, 'embedded', 'store.db')))
    const remote = await run(`platform mode, OpenSearch ${os.version}`, join(scratch, 'platform'), platform)
    if (embedded.findings !== remote.findings)
      throw new Error(`findings differ: embedded ${embedded.findings}, platform ${remote.findings}`)
    console.log(`detector run embedded / platform: ${(embedded.rate / remote.rate).toFixed(2)} (target >= 1)`)
    await platform.close()
  } finally {
    if (!state) await os.stop()
    rmSync(scratch, { recursive: true, force: true })
  }
}

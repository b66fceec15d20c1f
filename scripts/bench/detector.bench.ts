// A detector run over 100,000 stored security events (~1 KB each) with 1,000 rules, on the
// embedded store: documents/s of the run (read new documents by `_seq_no`, evaluate each against
// the indexed rule set, write the findings, checkpoint), against a baseline in the same run: the
// same paged read of the same documents without evaluating anything. While the run goes, an HTTP
// server in the same process answers `GET /` in a loop: its p99 latency shows whether the run
// lets the node serve. Peak RSS is reported for the run alone (the kernel's VmHWM, reset before it)
// and for the whole process (BENCH_DOCS=1000000 for the figure). Measured twice: the first
// run of a fresh node (its evaluator thread starts and warms up within it), then the next run over
// as many new documents (BENCH_NEXT_RUN=0 skips it), then a run with `threat_intel_enabled` over as
// many more (BENCH_THREAT_INTEL=0 skips it): its ratio to the next run is threat intel's share.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SCAN_BATCH } from '../../src/ruleset/detection/evaluator-protocol'
import { event, indexEvents, openBenchRuleset } from './lib/security-events'
import { DETECTORS_INDEX } from '../../src/ruleset/indices'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const EVENTS = 'svc-events-v5-security'

/** A counter of /proc/self/status, in KiB. */
const vmKiB = (key: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1])

const root = mkdtempSync(join(tmpdir(), 'svc-detector-bench-'))
const { store, settings, ruleset } = await openBenchRuleset(root, RULES)
try {
  await settings.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': Math.max(50, RULES) } })
  await ruleset.sync.upsertDetector({
    integrationId: 'int-linux',
    logType: 'linux',
    category: 'security',
    ruleIds: Array.from({ length: RULES }, (_, n) => `bench-${n}`),
    enabled: true,
  })

  let t = performance.now()
  await indexEvents(store, EVENTS, DOCS)
  const bytes = JSON.stringify(event(1)).length
  console.log(`indexed ${DOCS} documents of ~${bytes} bytes in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  const [backing] = await store.resolve(EVENTS)

  /** The baseline then the run over the DOCS documents after `from`; the `_seq_no` of the last one. */
  const measure = async (label: string, from: number): Promise<number> => {
    // Baseline: the same paged read by `_seq_no`, nothing evaluated or written; the faster of two
    // passes (the first may meet the store still checkpointing the indexing). The indexing's
    // garbage is collected before it and before the run, so neither pays for it (nor counts it).
    let scanned = 0
    let after = from
    let scanSeconds = Infinity
    for (let pass = 0; pass < 2; pass++) {
      Bun.gc(true)
      const t = performance.now()
      after = from
      scanned = 0
      for (;;) {
        const page = await store.search({
          index: backing,
          body: { size: SCAN_BATCH, sort: [{ _seq_no: 'asc' }], search_after: [after], seq_no_primary_term: true, track_total_hits: false },
        })
        const hits = page.hits.hits
        for (const h of hits) if (h._source) scanned++
        if (hits.length === 0) break
        after = hits[hits.length - 1]._seq_no!
        if (hits.length < SCAN_BATCH) break
      }
      scanSeconds = Math.min(scanSeconds, (performance.now() - t) / 1000)
    }

    // A trivial route on the same event loop, asked continuously while the run goes.
    const http = Bun.serve({ port: 0, fetch: () => new Response('{"ok":true}') })
    const latencies: number[] = []
    let running = true
    const prober = (async () => {
      while (running) {
        const t0 = performance.now()
        await (await fetch(`http://127.0.0.1:${http.port}/`)).text()
        latencies.push(performance.now() - t0)
        await Bun.sleep(5)
      }
    })()
    // The kernel's peak-RSS counter restarts here, so the run's own peak is told apart from the
    // indexing and the baseline scan before it (which the process peak includes).
    Bun.gc(true)
    const beforeRun = vmKiB('VmRSS')
    writeFileSync('/proc/self/clear_refs', '5')
    const t = performance.now()
    const outcome = await ruleset.scheduler.runLeased('int-linux')
    const runPeak = vmKiB('VmHWM')
    const runSeconds = (performance.now() - t) / 1000
    running = false
    await prober
    http.stop(true)
    latencies.sort((a, b) => a - b)
    const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((latencies.length * p) / 100))] ?? NaN
    if (!outcome || outcome.status !== 'ran') throw new Error(`run ${outcome?.status}`)
    if (outcome.documents !== DOCS || scanned !== DOCS) throw new Error(`read ${outcome.documents} / scanned ${scanned} of ${DOCS}`)

    const scanRate = DOCS / scanSeconds
    const runRate = DOCS / runSeconds
    console.log(`${label}:`)
    console.log(`  baseline scan (no evaluation, faster of 2 passes): ${scanRate.toFixed(0)} documents/s (${scanSeconds.toFixed(2)} s)`)
    console.log(
      `  detector run, ${RULES} rules: ${runRate.toFixed(0)} documents/s (${runSeconds.toFixed(2)} s), ${outcome.findings} findings written`,
    )
    console.log(
      `  ratio run/baseline: ${(runRate / scanRate).toFixed(2)} (evaluation and findings cost ${(((runSeconds - scanSeconds) / runSeconds) * 100).toFixed(0)}% of the run)`,
    )
    console.log(
      `  GET / during the run: ${latencies.length} requests, p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${latencies[latencies.length - 1]?.toFixed(1)} ms`,
    )
    console.log(
      `  peak RSS during the run: ${(runPeak / 1024).toFixed(0)} MiB (${(beforeRun / 1024).toFixed(0)} MiB before it); ` +
        `of the whole process so far (indexing and baselines included): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
    )
    return after
  }

  // The first run of the node (its evaluator thread starts and warms up in it), then the next one
  // over as many new documents, as a detector's runs go on a node that keeps running.
  const end = await measure('first run on a fresh node', -1)
  let last = end
  if (process.env.BENCH_NEXT_RUN !== '0') {
    await indexEvents(store, EVENTS, DOCS, DOCS)
    last = await measure('next run (the node has run the detector before)', end)
  }
  if (process.env.BENCH_THREAT_INTEL !== '0') {
    // The same detector with `threat_intel_enabled` (its log type's IoC field `source.ip`) against
    // BENCH_IOCS synced IoCs, over as many new documents: compare with the next run above.
    const IOCS = Number(process.env.BENCH_IOCS ?? 100_000)
    const physical = 'svc-threatintel-enrichments-a'
    await store.createIndex({ index: physical, body: { aliases: { 'svc-threatintel-enrichments': {} } } })
    for (let at = 0; at < IOCS; at += 5000) {
      const lines = []
      // Addresses of the events' 10.0.0.0/8 space that no event uses (last octet 7 and up), but one
      // in a thousand that some do: matches are rare, as in real traffic.
      for (let i = at; i < Math.min(IOCS, at + 5000); i++) {
        const name = i % 1000 === 0 ? event(2 * DOCS + (i % DOCS)).source.ip : `10.${i % 256}.${(i >> 8) % 256}.${7 + (i % 249)}`
        lines.push({ index: { _index: physical, _id: `ioc-${i}` } }, { document: { id: `ioc-${i}`, name, type: 'ip' } })
      }
      await store.bulk({ body: lines, refresh: at + 5000 >= IOCS })
    }
    await ruleset.sync.upsertIntegration(
      'standard',
      { id: 'int-linux', metadata: { title: 'linux' }, category: 'security', ioc_fields: [{ ioc: 'ip', fields: ['source.ip'] }] },
      false,
    )
    const got = await store.get({ index: DETECTORS_INDEX, id: 'int-linux' })
    if (!got.found) throw new Error('the detector is not stored')
    const stored = got._source as { detector: Record<string, unknown> }
    await store.index({
      index: DETECTORS_INDEX,
      id: 'int-linux',
      body: { ...stored, detector: { ...stored.detector, threat_intel_enabled: true } },
      refresh: true,
    })
    // The IoC index is loaded once per node, at the first threat-intel run: not part of the run measured.
    const t = performance.now()
    await ruleset.iocs.current()
    console.log(`IoC index of ${IOCS} IoCs loaded from the store in ${((performance.now() - t) / 1000).toFixed(2)} s`)
    const t2 = performance.now()
    await ruleset.iocs.current()
    console.log(`  IoC index checked again (within a minute of its last check: no store read): ${(performance.now() - t2).toFixed(0)} ms`)
    await indexEvents(store, EVENTS, DOCS, 2 * DOCS)
    await measure(`next run with threat_intel_enabled (${IOCS} IoCs, field source.ip)`, last)
    const found = await store.search({
      index: '.opensearch-sap-ioc-findings',
      ignore_unavailable: true,
      body: { size: 0, track_total_hits: true },
    })
    console.log(`  IoC findings written: ${JSON.stringify(found.hits.total)}`)
  }
} finally {
  await store.close()
  rmSync(root, { recursive: true, force: true })
}

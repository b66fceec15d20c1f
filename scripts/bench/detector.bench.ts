// A detector run over 100,000 stored security events (~1 KB each) with 1,000 rules, on the
// embedded store: documents/s of the run (read new documents by `_seq_no`, evaluate each against
// the indexed rule set, write the findings, checkpoint), against a baseline in the same run: the
// same paged read of the same documents without evaluating anything. While the run goes, an HTTP
// server in the same process answers `GET /` in a loop: its p99 latency shows whether the run
// lets the node serve. Peak RSS is reported for the run alone (the kernel's VmHWM, reset before it)
// and for the whole process (BENCH_DOCS=1000000 for the issue's figure). Measured twice: the first
// run of a fresh node (its evaluator thread starts and warms up within it), then the next run over
// as many new documents (BENCH_NEXT_RUN=0 skips it).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SCAN_BATCH } from '../../src/ruleset/detection/evaluator-protocol'
import { loadCheckpoint } from '../../src/ruleset/detection/checkpoint'
import type { BulkLine } from '../../src/store/port'
import { createBenchDetector, event, indexEvents, openBenchRuleset, reseed, seedNow, setThreatIntel } from './lib/security-events'
import { loadWindowsRules } from './lib/sigma-rules'
import { schemaEvent, WINDOWS_FIELDS, windowsEventStream } from './lib/windows-events'
import { benchIoc } from './lib/iocs'
import { IOC_ALIAS } from '../../src/ruleset/threat-intel/synced-iocs'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const EVENTS = 'svc-events-v5-security'
const THREAT_INTEL_LISTED = 50

/** Clock ticks (10 ms) a thread of this process ran, user and system, from its /proc stat line. */
function ticks(stat: string): number {
  // utime and stime: fields 14 and 15 of proc(5), 12 and 13 after the name.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[11]) + Number(fields[12])
}

/**
 * CPU seconds of the process (every thread), of its main thread, of the evaluator thread, and of
 * JavaScriptCore's parallel collector threads (HeapHelper: a collection of the node's heap, IoC
 * index and all, shows there): on a loaded machine they vary less than the wall clock.
 */
function cpuSeconds(): { all: number; node: number; gc: number; evaluator: number } {
  const { user, system } = process.cpuUsage()
  let gc = 0
  let evaluator = 0
  for (const task of readdirSync('/proc/self/task'))
    try {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8')
      if (stat.includes('(HeapHelper')) gc += ticks(stat)
      else if (stat.includes('(Worker')) evaluator += ticks(stat)
    } catch {
      // the thread ended
    }
  const node = ticks(readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8')) / 100
  return { all: (user + system) / 1e6, node, gc: gc / 100, evaluator: evaluator / 100 }
}

/** A counter of /proc/self/status, in KiB. */
const vmKiB = (key: 'VmRSS' | 'VmHWM') => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync('/proc/self/status', 'utf8'))![1])

type Bench = Awaited<ReturnType<typeof openBenchRuleset>>

/** The baseline then the run of `detector` over the DOCS documents after `from`: the `_seq_no` of the last one, the run's documents/s. */
async function measure(
  label: string,
  from: number,
  { store, ruleset }: Bench,
  detector: string,
  rules: number,
): Promise<{ after: number; runRate: number; scanRate: number; cpu: ReturnType<typeof cpuSeconds> }> {
  const [backing] = await store.resolve(EVENTS)
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

  // A trivial route and the detector's state document on the same event loop, asked continuously
  // while the run goes, and for two seconds before it (what the machine alone costs them).
  const http = Bun.serve({
    port: 0,
    fetch: async (req) =>
      new URL(req.url).pathname === '/state' ? Response.json(await loadCheckpoint(store, detector)) : new Response('{"ok":true}'),
  })
  const probe = (path: string, out: number[], until: () => boolean) =>
    (async () => {
      while (!until()) {
        const t0 = performance.now()
        await (await fetch(`http://127.0.0.1:${http.port}${path}`)).text()
        out.push(performance.now() - t0)
        await Bun.sleep(5)
      }
    })()
  const idle: number[] = []
  const idleUntil = performance.now() + 2000
  await probe('/', idle, () => performance.now() >= idleUntil)
  const latencies: number[] = []
  const stateLatencies: number[] = []
  let running = true
  const prober = Promise.all([probe('/', latencies, () => !running), probe('/state', stateLatencies, () => !running)])
  // The kernel's peak-RSS counter restarts here, so the run's own peak is told apart from the
  // indexing and the baseline scan before it (which the process peak includes).
  Bun.gc(true)
  const beforeRun = vmKiB('VmRSS')
  writeFileSync('/proc/self/clear_refs', '5')
  const t = performance.now()
  const cpuBefore = cpuSeconds()
  const outcome = await ruleset.scheduler.runLeased(detector)
  const runPeak = vmKiB('VmHWM')
  const runSeconds = (performance.now() - t) / 1000
  const cpuAfter = cpuSeconds()
  const cpu = {
    all: cpuAfter.all - cpuBefore.all,
    node: cpuAfter.node - cpuBefore.node,
    gc: cpuAfter.gc - cpuBefore.gc,
    evaluator: cpuAfter.evaluator - cpuBefore.evaluator,
  }
  running = false
  await prober
  http.stop(true)
  for (const l of [latencies, stateLatencies, idle]) l.sort((a, b) => a - b)
  const pct = (p: number, l = latencies) => l[Math.min(l.length - 1, Math.floor((l.length * p) / 100))] ?? NaN
  if (!outcome || outcome.status !== 'ran') throw new Error(`run ${outcome?.status}`)
  if (outcome.documents !== DOCS || scanned !== DOCS) throw new Error(`read ${outcome.documents} / scanned ${scanned} of ${DOCS}`)

  const scanRate = DOCS / scanSeconds
  const runRate = DOCS / runSeconds
  console.log(`${label}:`)
  console.log(`  baseline scan (no evaluation, faster of 2 passes): ${scanRate.toFixed(0)} documents/s (${scanSeconds.toFixed(2)} s)`)
  console.log(
    `  detector run, ${rules} rules: ${runRate.toFixed(0)} documents/s (${runSeconds.toFixed(2)} s), ${outcome.findings} findings written`,
  )
  console.log(
    `  CPU of the run: ${cpu.all.toFixed(2)} s in all, ${cpu.node.toFixed(2)} s of it on the node thread (the probes of GET / included), ` +
      `${cpu.evaluator.toFixed(2)} s on the evaluator thread, ${cpu.gc.toFixed(2)} s in the collector's helper threads`,
  )
  console.log(
    `  ratio run/baseline: ${(runRate / scanRate).toFixed(2)} (evaluation and findings cost ${(((runSeconds - scanSeconds) / runSeconds) * 100).toFixed(0)}% of the run)`,
  )
  console.log(
    `  GET / during the run: ${latencies.length} requests, p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${latencies[latencies.length - 1]?.toFixed(1)} ms` +
      ` (the 2 s before the run: p99 ${pct(99, idle).toFixed(1)} ms)`,
  )
  console.log(
    `  GET of the detector's state document during the run: ${stateLatencies.length} requests, p50 ${pct(50, stateLatencies).toFixed(1)} ms, ` +
      `p99 ${pct(99, stateLatencies).toFixed(1)} ms, max ${stateLatencies[stateLatencies.length - 1]?.toFixed(1)} ms`,
  )
  console.log(
    `  peak RSS during the run: ${(runPeak / 1024).toFixed(0)} MiB (${(beforeRun / 1024).toFixed(0)} MiB before it); ` +
      `of the whole process so far (indexing and baselines included): ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`,
  )
  if (outcome.ioc_findings !== undefined) console.log(`  IoC findings written: ${outcome.ioc_findings}`)
  return { after, runRate, scanRate, cpu }
}

// The generated rules (not in the processes that run one real rule count or threat intel).
if (!process.env.BENCH_REAL_RULES && !process.env.BENCH_THREAT_INTEL) {
  const root = mkdtempSync(join(tmpdir(), 'svc-detector-bench-'))
  const bench = await openBenchRuleset(root, RULES)
  const { store, ruleset } = bench
  try {
    await createBenchDetector(bench, RULES)

    const t = performance.now()
    await indexEvents(store, EVENTS, DOCS)
    const bytes = JSON.stringify(event(1)).length
    console.log(`indexed ${DOCS} documents of ~${bytes} bytes in ${((performance.now() - t) / 1000).toFixed(1)} s`)

    // The first run of the node (its evaluator thread starts and warms up in it), then the next one
    // over as many new documents, as a detector's runs go on a node that keeps running.
    const { after: end } = await measure('first run on a fresh node', -1, bench, 'int-linux', RULES)
    if (process.env.BENCH_NEXT_RUN !== '0') {
      await indexEvents(store, EVENTS, DOCS, DOCS)
      await measure('next run (the node has run the detector before)', end, bench, 'int-linux', RULES)
    }
  } finally {
    await store.close()
    rmSync(root, { recursive: true, force: true })
  }
}

/**
 * SigmaHQ's first `count` Windows rules loaded as a user loads them (Ruleset Management's rule
 * sync, a Windows log type mapping their fields to the schema's), a detector on them, and its
 * first run over DOCS Windows-like events (lib/windows-events.ts) on a fresh store.
 */
async function realRun(windows: NonNullable<ReturnType<typeof loadWindowsRules>>, count: number) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-detector-bench-real-'))
  const real = await openBenchRuleset(dir, 0)
  try {
    const { ruleset: rs, settings: st, store: db } = real
    await rs.sync.upsertIntegration('standard', { id: 'int-win', metadata: { title: 'windows' }, category: 'security' }, false)
    const mappings = Object.entries(WINDOWS_FIELDS).map(([raw_field, ecs]) => ({ raw_field, ecs }))
    await rs.logTypes.upsert('standard', { id: 'int-win', name: 'windows', category: 'Security', mappings })
    const ids: string[] = []
    for (const [i, doc] of windows.slice(0, count).entries()) {
      const body = {
        id: `win-${i}`,
        metadata: { title: doc.title },
        level: doc.level ?? 'medium',
        status: 'stable',
        logsource: doc.logsource,
        detection: doc.detection,
      }
      try {
        await rs.sync.upsertRule('standard', body, 'int-win', false)
        ids.push(body.id)
      } catch {
        // refused by the rule sync (not counted in the run)
      }
    }
    await st.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': Math.max(50, count) } })
    const { skippedRules } = await rs.sync.upsertDetector({
      integrationId: 'int-win',
      logType: 'windows',
      category: 'security',
      ruleIds: ids,
      enabled: true,
    })
    // Two runs' worth of events, each run's indexed before it.
    const events = windowsEventStream(windows, 2 * DOCS)
    const indexWindows = async (from: number) => {
      for (let at = from; at < from + DOCS; at += 5000) {
        const lines: BulkLine[] = []
        for (let k = at; k < Math.min(from + DOCS, at + 5000); k++)
          lines.push(
            { create: { _index: EVENTS } },
            { '@timestamp': new Date(1_780_000_000_000 + k * 1000).toISOString(), ...schemaEvent(events.next().value!) },
          )
        const r = await db.bulk({ body: lines })
        if (r.errors) throw new Error('bulk of Windows-like events failed')
      }
    }
    await indexWindows(0)
    const held = ids.length - skippedRules.length
    const label = `SigmaHQ Windows rules, first ${count}: ${held} held by the detector (${count - ids.length} refused by the rule sync)`
    // The first run of a fresh node (the evaluator thread indexes the set and warms up in it),
    // then the next one over as many new events, as the generated rules' runs are measured.
    const { after } = await measure(`${label}, first run on a fresh node`, -1, real, 'int-win', held)
    if (process.env.BENCH_NEXT_RUN !== '0') {
      await indexWindows(DOCS)
      await measure(`${label}, next run`, after, real, 'int-win', held)
    }
  } finally {
    await real.store.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * Threat intel on events: the same 1,000-rule detector's run over DOCS new events with
 * `threat_intel_enabled` (the log type naming `source.ip` an IoC field) and BENCH_IOCS IoCs in the
 * node's IoC index (default 1,000,000; THREAT_INTEL_LISTED of the events' addresses among them,
 * stored, so their findings are written), against its previous run over as many events with the
 * flag off; after a first run that warms the node, four runs in the order off, on, on, off (see
 * below), all over the same events (indexed again each time, under new ids): the generator's
 * batches differ in what the rules find (one had 12% more findings, and cost its run as much as
 * threat intel did), which the flag must not be charged with. Target: on/off >= 0.9, as the
 * runs' total seconds.
 */
async function threatIntelRun() {
  const root = mkdtempSync(join(tmpdir(), 'svc-detector-bench-ti-'))
  const bench = await openBenchRuleset(root, RULES)
  const { store, settings, ruleset } = bench
  const iocCount = Number(process.env.BENCH_IOCS ?? 1_000_000)
  try {
    await ruleset.sync.upsertIntegration(
      'standard',
      { id: 'int-linux', metadata: { title: 'linux' }, category: 'security', ioc_fields: [{ ioc: 'ip', fields: ['source.ip'] }] },
      true,
    )
    await settings.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': Math.max(50, RULES) } })
    const ruleIds = Array.from({ length: RULES }, (_, n) => `bench-${n}`)
    await ruleset.sync.upsertDetector({ integrationId: 'int-linux', logType: 'linux', category: 'security', ruleIds, enabled: true })
    // Addresses of events of the second batch (both runs read it), stored as the sync stores IoCs.
    const listed = Array.from({ length: THREAT_INTEL_LISTED }, (_, k) => DOCS + k * Math.floor(DOCS / THREAT_INTEL_LISTED))
    await store.bulk({
      refresh: true,
      body: listed.flatMap((i, k) => [
        { index: { _index: IOC_ALIAS, _id: `listed-${k}` } },
        { document: { id: `listed-${k}`, name: (event(i).source as { ip: string }).ip, type: 'ip', feed: { name: 'bench' } } },
      ]),
    })
    await ruleset.iocs.current()
    const t = performance.now()
    const batch = new Map<string, Record<string, unknown>>()
    for (let i = 0; i < iocCount - THREAT_INTEL_LISTED; i++) {
      const e = benchIoc(i)
      batch.set(e.id, { document: { name: e.value, type: e.type } })
    }
    ruleset.iocs.changed(batch)
    batch.clear()
    console.log(
      `IoC index: ${(await ruleset.iocs.current()).size.toLocaleString()} IoCs (${((performance.now() - t) / 1000).toFixed(1)} s to generate and apply)`,
    )
    await indexEvents(store, EVENTS, DOCS)
    const warm = await measure('threat intel bench: first run on a fresh node (warm-up, threat intel off)', -1, bench, 'int-linux', RULES)
    // Off, on, on, off: a run's cost drifts with its place in the sequence (the store grows; in
    // one sequence of three the last run paid a full collection of the node's heap, IoC index
    // and all, with threat intel off as on), which the order cancels to first order.
    const second = seedNow()
    const seconds = { on: [] as number[], off: [] as number[] }
    const own = { on: [] as number[], off: [] as number[] }
    const cpu = { on: [] as number[], off: [] as number[] }
    const nodeCpu = { on: [] as number[], off: [] as number[] }
    const evaluatorCpu = { on: [] as number[], off: [] as number[] }
    let after = warm.after
    // BENCH_TI_SEQUENCES=n: the sequence n times over (a loaded machine's noise averages out).
    const order = Array.from({ length: Number(process.env.BENCH_TI_SEQUENCES ?? 1) }, () => ['off', 'on', 'on', 'off'] as const).flat()
    for (const [k, mode] of order.entries()) {
      await setThreatIntel(store, mode === 'on')
      reseed(second)
      await indexEvents(store, EVENTS, DOCS, DOCS)
      const label = `threat intel ${mode}${mode === 'on' ? `, ${iocCount.toLocaleString()} IoCs` : ''} (run ${k + 1} of ${order.length} over the same events)`
      const r = await measure(label, after, bench, 'int-linux', RULES)
      after = r.after
      seconds[mode].push(DOCS / r.runRate)
      own[mode].push(DOCS / r.runRate - DOCS / r.scanRate)
      cpu[mode].push(r.cpu.all)
      nodeCpu[mode].push(r.cpu.node)
      evaluatorCpu[mode].push(r.cpu.evaluator)
    }
    const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
    const ratio = (m: typeof seconds) => (sum(m.off) / sum(m.on)).toFixed(2)
    console.log(
      `threat intel on/off, ${RULES} rules, ${DOCS} events: ${ratio(seconds)} (target >= 0.9; runs ${seconds.off.map((x) => x.toFixed(2)).join(' / ')} s off, ` +
        `${seconds.on.map((x) => x.toFixed(2)).join(' / ')} s on); beyond each run's own baseline scan: ${ratio(own)}; CPU seconds: ${ratio(cpu)} ` +
        `(node thread ${ratio(nodeCpu)}, evaluator thread ${ratio(evaluatorCpu)})`,
    )
  } finally {
    await store.close()
    rmSync(root, { recursive: true, force: true })
  }
}

// Each rule count (and threat intel) in a process of its own: its peak RSS is that run's, not what earlier runs left.
const only = process.env.BENCH_REAL_RULES
const windows = loadWindowsRules()
const spawn = (env: Record<string, string>) =>
  Bun.spawnSync([process.execPath, import.meta.path], { stdout: 'inherit', stderr: 'inherit', env: { ...process.env, ...env } })
if (process.env.BENCH_THREAT_INTEL) await threatIntelRun()
else if (only) {
  if (windows) await realRun(windows, Math.min(Number(only), windows.length))
} else if (process.env.BENCH_CHILDREN !== '0') {
  // BENCH_CHILDREN=0: the generated rules' run alone (memory.bench measures it so).
  spawn({ BENCH_THREAT_INTEL: '1' })
  if (windows) for (const count of [100, 1000, windows.length]) spawn({ BENCH_REAL_RULES: String(count) })
}

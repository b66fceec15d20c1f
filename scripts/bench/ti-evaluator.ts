// The evaluator thread's per-batch work, on the main thread, with threat intel off and on:
// the threat-intel bench's detector (1,000 generated rules), events and 1M IoCs, the batches'
// texts read once, then rounds alternating off and on over them (CPU seconds of this thread per
// round, and the on/off ratio). `--cpu-prof-md` profiles it (Bun profiles only the main thread).
// BENCH_TI_MODE=on|off runs only that mode (for a profile of one).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { EvaluatorThread } from '../../src/ruleset/detection/evaluator'
import { scanHere, type ScanRequest } from '../../src/ruleset/detection/scan'
import { SCAN_BATCH, BATCH_CHARS } from '../../src/ruleset/detection/evaluator-protocol'
import { scanBatch } from '../../src/ruleset/detection/scan-batch'
import { ruleSet } from '../../src/ruleset/sigma'
import { IocFilter } from '../../src/ruleset/threat-intel/ioc-filter'
import { createBenchDetector, event, indexEvents, openBenchRuleset, reseed, setThreatIntel } from './lib/security-events'
import { benchIoc } from './lib/iocs'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6)
const MODE = process.env.BENCH_TI_MODE
const EVENTS = 'svc-events-v5-security'
const LISTED = 50

const root = mkdtempSync(join(tmpdir(), 'svc-ti-evaluator-'))
const bench = await openBenchRuleset(root, RULES)
const { store, ruleset } = bench
let captured: ScanRequest | undefined
const realScanner = EvaluatorThread.prototype.scanner
// The run's scan request (rules, mapping, IoC fields and filter) as the thread would get it.
EvaluatorThread.prototype.scanner = async function (scan: ScanRequest) {
  if (scan.iocFields) captured ??= scan
  return scanHere(scan)
}
try {
  await ruleset.sync.upsertIntegration(
    'standard',
    { id: 'int-linux', metadata: { title: 'linux' }, category: 'security', ioc_fields: [{ ioc: 'ip', fields: ['source.ip'] }] },
    true,
  )
  await createBenchDetector(bench, RULES)
  await ruleset.iocs.current()
  const batch = new Map<string, Record<string, unknown>>()
  for (let i = 0; i < 1_000_000 - LISTED; i++) {
    const e = benchIoc(i)
    batch.set(e.id, { document: { name: e.value, type: e.type } })
  }
  // Addresses of the events scanned, as the detector bench lists them.
  for (let k = 0; k < LISTED; k++)
    batch.set(`listed-${k}`, { document: { name: (event(10 + k * (DOCS / LISTED)).source as { ip: string }).ip, type: 'ip' } })
  ruleset.iocs.changed(batch)
  batch.clear()
  await ruleset.iocs.current()
  await setThreatIntel(store, true)
  await indexEvents(store, EVENTS, 10)
  await ruleset.scheduler.runLeased('int-linux')
  if (!captured?.iocFields) throw new Error('no scan request with IoC fields captured')
  const [backing] = await store.resolve(EVENTS)
  reseed()
  await indexEvents(store, EVENTS, DOCS, 10)
  const batches: Array<{ ids: string[]; seqNos: number[]; sources: string[] }> = []
  for (let after = 9; ;) {
    const b = await store.readSeq!({ index: backing, after, size: SCAN_BATCH, maxChars: BATCH_CHARS })
    if (b.ids.length === 0) break
    batches.push(b)
    after = b.seqNos[b.ids.length - 1]
  }
  const set = ruleSet(captured.rules, captured.fieldTypes)
  // As the thread holds it: one filter over the index's buffer.
  const filter = new IocFilter(captured.iocFilter!())
  const cpu = () => {
    const u = process.cpuUsage()
    return (u.user + u.system) / 1e6
  }
  const round = (on: boolean) => {
    const c = cpu()
    let candidates = 0
    let matches = 0
    for (const b of batches) {
      const each = (fn: (id: string, seq: number, text: string) => void) => {
        for (let k = 0; k < b.ids.length; k++) fn(b.ids[k], b.seqNos[k], b.sources[k])
        return 0
      }
      const { scanned } = scanBatch(set, each, -1, on ? captured!.iocFields : undefined, on ? filter : undefined)
      // What the thread's postMessage does with it.
      const copy = structuredClone(scanned)
      candidates += copy.iocs?.values.length ?? 0
      matches += copy.matches.length / 2
    }
    return { seconds: cpu() - c, candidates, matches }
  }
  // BENCH_TI_THREAD=1: the same scan through the evaluator thread, its own CPU (from /proc) per round.
  const thread = new EvaluatorThread()
  const threadCpu = () => {
    const out: Record<string, number> = {}
    for (const t of readdirSync('/proc/self/task'))
      try {
        const stat = readFileSync(`/proc/self/task/${t}/stat`, 'utf8')
        const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'))
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
        out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) / 100
      } catch {
        // the thread ended
      }
    return out
  }
  const threadRound = async (on: boolean) => {
    const before = threadCpu()
    const scanner = await thread.scanner({ ...captured!, ...(on ? {} : { iocFields: undefined, iocFilter: undefined }) })
    let candidates = 0
    let matches = 0
    for (let after = 9; ;) {
      const page = await scanner.next(after)
      candidates += page.iocs?.values.length ?? 0
      matches += page.matches.length / 2
      if (!page.full || page.size === 0) break
      after = page.last
    }
    scanner.close()
    const after = threadCpu()
    const spent = Object.fromEntries(Object.keys(after).map((k) => [k, +(after[k] - (before[k] ?? 0)).toFixed(2)]))
    if (process.env.BENCH_TI_VERBOSE) console.log('  threads:', JSON.stringify(spent))
    return {
      seconds: (spent['Worker'] ?? 0) + (spent['bun'] ?? 0),
      worker: spent['Worker'] ?? 0,
      node: spent['bun'] ?? 0,
      candidates,
      matches,
    }
  }
  if (process.env.BENCH_TI_THREAD) EvaluatorThread.prototype.scanner = realScanner
  const seconds = { on: [] as number[], off: [] as number[] }
  const parts = { on: { worker: [] as number[], node: [] as number[] }, off: { worker: [] as number[], node: [] as number[] } }
  // A first round of each mode warms up (JIT, the thread's rule set), not counted.
  if (process.env.BENCH_TI_THREAD) {
    await threadRound(false)
    await threadRound(true)
  } else {
    round(false)
    round(true)
  }
  for (let r = 0; r < ROUNDS; r++) {
    const on = MODE ? MODE === 'on' : r % 4 === 1 || r % 4 === 2
    const x = process.env.BENCH_TI_THREAD ? await threadRound(on) : round(on)
    seconds[on ? 'on' : 'off'].push(x.seconds)
    if ('worker' in x && 'node' in x) {
      parts[on ? 'on' : 'off'].worker.push(x.worker as number)
      parts[on ? 'on' : 'off'].node.push(x.node as number)
    }
    console.log(`round ${r + 1} ${on ? 'on ' : 'off'}: ${x.seconds.toFixed(3)} s CPU, ${x.matches} matches, ${x.candidates} IoC candidates`)
  }
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0)
  const mean = (xs: number[]) => sum(xs) / xs.length
  if (!MODE)
    console.log(
      `on/off CPU: ${(mean(seconds.off) / mean(seconds.on)).toFixed(3)} (mean ${mean(seconds.on).toFixed(3)} s on, ${mean(seconds.off).toFixed(3)} s off)`,
    )
  if (process.env.BENCH_TI_THREAD && !MODE)
    console.log(
      `  evaluator thread: ${mean(parts.on.worker).toFixed(3)} s on, ${mean(parts.off.worker).toFixed(3)} s off; ` +
        `node thread: ${mean(parts.on.node).toFixed(3)} s on, ${mean(parts.off.node).toFixed(3)} s off`,
    )
} finally {
  await store.close()
  rmSync(root, { recursive: true, force: true })
}

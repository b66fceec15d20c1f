/**
 * Peak RSS of the node in the phases issue 29 (item 6) names, each on a fresh process, read from
 * the kernel's peak counter (VmHWM, reset through clear_refs when the phase starts, so the start-up
 * and the preparation do not count):
 *  - rules-2407: SigmaHQ's Windows rules created one by one through the content manager (the
 *    binary, Engine mocked), then promoted draft -> test; then logtest/detection over them;
 *  - run-2407, run-1000: a detector run of that many real rules over 100k Windows-like events
 *    (detector.bench's in-process node: its store, ruleset and evaluator thread);
 *  - run-1m: the 1,000 generated rules' run over 1M events (detector.bench);
 *  - sync: a content sync of 100k vulnerabilities and 50k IoCs from the CTI test server (the binary).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { payloads, startCtiServer } from '../../../test/fixtures/cti/server'
import { benchIoc } from './iocs'
import { spawnBinary } from './processes'
import { loadWindowsRules } from './sigma-rules'

const PREFIX = '/_plugins/_content_manager'
const MiB = 1024 * 1024
type Node = Awaited<ReturnType<typeof spawnBinary>>
type Row = { phase: string; peak: number; target: number; note?: string }

const kib = (pid: number, key: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024
const resetPeak = (pid: number) => writeFileSync(`/proc/${pid}/clear_refs`, '5')

async function call(n: Node, method: string, path: string, body?: unknown) {
  const res = await fetch(n.url + path, {
    method,
    headers: { authorization: n.auth, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : undefined }
}

/** Rules created, then logtest over them: two rows. */
async function rulesPhase(): Promise<Row[]> {
  const windows = loadWindowsRules()
  if (!windows) return []
  const node = await spawnBinary({
    env: { SVC_SETTING_plugins__content_manager__engine__mock: 'true', SVC_SETTING_plugins__content_manager__max_rules: '20000' },
  })
  try {
    const integration = await call(node, 'POST', `${PREFIX}/integrations`, {
      resource: { metadata: { title: 'win', author: 'bench' }, category: 'security' },
    })
    const parent = integration.body.message as string
    await Bun.sleep(500)
    const idle = kib(node.pid, 'VmRSS')
    resetPeak(node.pid)
    const t = performance.now()
    let refused = 0
    for (const [i, doc] of windows.entries()) {
      const r = await call(node, 'POST', `${PREFIX}/rules`, {
        integration: parent,
        resource: {
          metadata: { title: `${doc.title} #${i}`, author: 'bench' },
          level: typeof doc.level === 'string' ? doc.level : 'medium',
          logsource: { ...(doc.logsource ?? {}), product: 'win' },
          detection: doc.detection,
        },
      })
      if (r.status !== 201) refused++
    }
    const created = kib(node.pid, 'VmHWM')
    const seconds = (performance.now() - t) / 1000
    const preview = await call(node, 'GET', `${PREFIX}/promote?space=draft`)
    await call(node, 'POST', `${PREFIX}/promote`, { space: 'draft', ...preview.body })
    Bun.gc(true)
    await Bun.sleep(500)
    const beforeLogtest = kib(node.pid, 'VmRSS')
    resetPeak(node.pid)
    const input = {
      Image: 'C:\\Windows\\System32\\certutil.exe',
      CommandLine: 'certutil.exe -urlcache -split -f http://example.test/a.exe a.exe',
      ParentImage: 'C:\\Windows\\System32\\cmd.exe',
      EventID: 1,
    }
    let calls = 0
    let evaluated = 0
    const started = performance.now()
    while (calls < 20 || performance.now() - started < 5000) {
      const r = await call(node, 'POST', `${PREFIX}/logtest/detection`, { space: 'test', integration: parent, input })
      evaluated = r.body?.message?.rules_evaluated ?? evaluated
      calls++
    }
    const logtest = kib(node.pid, 'VmHWM')
    return [
      {
        phase: `create ${windows.length} rules (content manager)`,
        peak: created,
        target: 400,
        note: `${refused} refused, ${seconds.toFixed(0)} s, idle ${(idle / MiB).toFixed(0)} MiB`,
      },
      {
        phase: `logtest/detection, ${evaluated} rules`,
        peak: logtest,
        target: 400,
        note: `${calls} calls, ${(beforeLogtest / MiB).toFixed(0)} MiB before`,
      },
    ]
  } finally {
    await node.stop()
  }
}

/** detector.bench in a process of its own; its line `peak RSS during the run: N MiB` is the row. */
function detectorPhase(phase: string, env: Record<string, string>, target: number): Row[] {
  const proc = Bun.spawnSync([process.execPath, join(import.meta.dir, '..', 'detector.bench.ts')], {
    stdout: 'pipe',
    stderr: 'inherit',
    env: { ...process.env, BENCH_CHILDREN: '0', BENCH_NEXT_RUN: '0', ...env },
  })
  const out = proc.stdout.toString()
  process.stdout.write(out)
  const m = /peak RSS during the run: (\d+) MiB \((\d+) MiB before it\)/.exec(out)
  if (!m) return [{ phase, peak: NaN, target, note: `no figure (exit ${proc.exitCode})` }]
  const found = /(\d+) findings written/.exec(out)
  return [{ phase, peak: Number(m[1]) * MiB, target, note: `${m[2]} MiB before the run, ${found?.[1] ?? '?'} findings` }]
}

/** 100k vulnerabilities and 50k IoCs synced in one pass on a fresh binary. */
async function syncPhase(): Promise<Row[]> {
  const cves = Number(process.env.BENCH_MEMORY_CVES ?? 100_000)
  const iocs = Number(process.env.BENCH_MEMORY_IOCS ?? 50_000)
  const cti = startCtiServer()
  const vd = cti.consumer('t1-vd-5', 'public-vd-5')
  vd.generate({
    snapshot: cves,
    document: (i) => {
      const id = `CVE-2024-${i}`
      return { resource: id, payload: payloads.cve(id, { cvss: { score: (i % 100) / 10 }, references: [`https://nvd.example/${id}`] }) }
    },
  })
  const ioc = cti.consumer('t1-iocs-5', 'public-iocs-5')
  ioc.generate({
    snapshot: iocs,
    document: (i) => {
      const e = benchIoc(i)
      return { resource: e.id, payload: payloads.ioc(e.id, { name: e.value, type: e.type }) }
    },
  })
  // The IoC export goes beside the Engine's socket (default under /usr/share): one of this node's own.
  const engineDir = mkdtempSync(join(tmpdir(), 'svc-mem-engine-'))
  const node = await spawnBinary({
    env: {
      SVC_SETTING_plugins__content_manager__engine__socket_path: join(engineDir, 'sockets', 'engine.sock'),
      SVC_SETTING_plugins__content_manager__cti__api: cti.base,
      SVC_SETTING_plugins__content_manager__engine__mock: 'true',
      SVC_SETTING_plugins__content_manager__catalog__update_on_schedule: 'false',
      SVC_SETTING_plugins__content_manager__catalog__vulnerabilities: vd.url,
      SVC_SETTING_plugins__content_manager__catalog__iocs: ioc.url,
    },
  })
  try {
    await Bun.sleep(3000) // the start-up's bootstrap is not the sync
    const before = kib(node.pid, 'VmRSS')
    resetPeak(node.pid)
    const t = performance.now()
    await call(node, 'POST', `${PREFIX}/update`)
    for (const [type, offset] of [
      ['cti:catalog:consumer:vulnerabilities', vd.lastOffset],
      ['cti:catalog:consumer:iocs', ioc.lastOffset],
    ] as const)
      for (;;) {
        const s = (await call(node, 'GET', `/.svc-cti-consumers/_doc/${encodeURIComponent(type)}`)).body?._source
        if (s?.status === 'failed') throw new Error(`${type} failed: ${JSON.stringify(s.last_pass)}`)
        if (s?.status === 'ready' && s.local_offset >= offset && !s.post_sync_pending) break
        await Bun.sleep(50)
      }
    const peak = kib(node.pid, 'VmHWM')
    const note = `${((performance.now() - t) / 1000).toFixed(0)} s, ${(before / MiB).toFixed(0)} MiB before`
    return [{ phase: `sync ${cves / 1000}k vulnerabilities + ${iocs / 1000}k IoCs`, peak, target: 300, note }]
  } finally {
    await node.stop()
    await cti.stop()
    rmSync(engineDir, { recursive: true, force: true })
  }
}

const PHASES: Record<string, () => Promise<Row[]> | Row[]> = {
  'rules-2407': rulesPhase,
  'run-2407': () => detectorPhase('detector run, 2,407 real rules, 100k events', { BENCH_REAL_RULES: '100000' }, 400),
  'run-1000': () => detectorPhase('detector run, 1,000 real rules, 100k events', { BENCH_REAL_RULES: '1000' }, 300),
  'run-1m': () => detectorPhase('detector run, 1,000 generated rules, 1M events', { BENCH_DOCS: '1000000' }, 300),
  sync: syncPhase,
}

/** Runs the named phases (all when none) and prints their table. */
export async function runPhases(only?: string[]): Promise<void> {
  const rows: Row[] = []
  const line = (r: Row) =>
    `  ${r.phase.padEnd(52)} ${(r.peak / MiB).toFixed(0).padStart(5)} MiB  (target < ${r.target}${r.peak / MiB < r.target ? ', met' : ''})  ${r.note ?? ''}`
  for (const [name, phase] of Object.entries(PHASES)) {
    if (only && !only.includes(name)) continue
    console.log(`\n--- memory phase ${name}`)
    try {
      const got = await phase()
      for (const r of got) console.log(line(r))
      rows.push(...got)
    } catch (e) {
      console.log(`!!! phase ${name} failed: ${(e as Error).message}`)
      rows.push({ phase: name, peak: NaN, target: NaN, note: 'failed' })
    }
  }
  console.log('\npeak RSS per phase (VmHWM from the phase start):')
  for (const r of rows) console.log(line(r))
}

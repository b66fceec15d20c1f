// A detector run over 100,000 stored security events (~1 KB each) with 1,000 rules, on the
// embedded store: documents/s of the run (read new documents by `_seq_no`, evaluate each against
// the indexed rule set, write the findings, checkpoint), against a baseline in the same run: the
// same paged read of the same documents without evaluating anything. While the run goes, an HTTP
// server in the same process answers `GET /` in a loop: its p99 latency shows whether the run
// lets the node serve. Peak RSS is reported at the end (BENCH_DOCS=1000000 for the figure).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { createLogger } from '../../src/http/log'
import { createRuleset } from '../../src/ruleset'
import { SCAN_BATCH } from '../../src/ruleset/detection/run'
import { EVENT_STREAMS, FINDING_STREAMS } from '../../src/setup/indices'
import { openEmbeddedStore } from '../../src/store/embedded'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const EVENTS = 'svc-events-v5-security'

let seed = 7
const rnd = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]
const ACTIONS = ['login', 'logout', 'exec', 'file_open', 'connect', 'sudo', 'passwd_change', 'cron_run']
const OUTCOMES = ['success', 'failure', 'unknown']
const USERS = ['alice', 'bob', 'root', 'daemon', 'www-data', 'postgres', 'svc_backup']
const BINS = ['/usr/bin/curl', '/usr/bin/wget', '/bin/bash', '/usr/bin/python3', '/usr/sbin/sshd', '/usr/bin/nc', '/usr/bin/base64']
const PAD = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(8)

function event(i: number) {
  const bin = pick(BINS)
  return {
    '@timestamp': new Date(1_780_000_000_000 + i * 1000).toISOString(),
    agent: { id: String(i % 997), name: `host-${i % 997}` },
    host: { name: `host-${i % 997}`, os: { family: 'linux', version: '6.1' } },
    event: { action: pick(ACTIONS), outcome: pick(OUTCOMES), category: 'process', kind: 'event' },
    user: { name: pick(USERS) },
    process: {
      executable: bin,
      name: bin.split('/').pop(),
      pid: i % 65536,
      command_line: `${bin} ${pick(['-O', '-c', '--quiet', '-e'])} ${pick(['http://x.example/a', '/etc/shadow', 'id', 'sh -i', 'backup.tar'])}`,
    },
    source: { ip: `10.${i % 256}.${(i >> 8) % 256}.${i % 7}`, port: 1024 + (i % 60000) },
    svc: { integration: { name: 'linux', category: 'security' } },
    message: `${i} ${PAD}`,
  }
}

// Rules as selective as real ones: each also names one of ~1,000 hosts, so a few percent of the
// documents match something (a finding-per-document stream would measure the writer, not detection).
function rule(n: number) {
  const host = { 'host.name': `host-${(n * 37) % 997}` }
  const kinds = [
    { sel: { 'event.action': pick(ACTIONS), 'event.outcome': 'failure', 'user.name': pick(USERS), ...host }, condition: 'sel' },
    {
      sel: { 'process.command_line|contains': pick(['/etc/shadow', 'sh -i', 'http://']), ...host },
      filter: { 'user.name': 'root' },
      condition: 'sel and not filter',
    },
    {
      sel: { 'process.executable|endswith': [pick(BINS).split('/').pop(), pick(BINS).split('/').pop()], ...host },
      net: { 'source.port|gte': 30000 },
      condition: 'sel and net',
    },
    { sel: { 'process.command_line|re': `${pick(['curl', 'wget', 'nc'])} .*(http|sh)`, ...host }, condition: 'sel' },
    { a: { 'user.name|startswith': 'svc_', ...host }, b: { 'event.action': ['sudo', 'passwd_change'] }, condition: 'all of them' },
  ]
  return {
    id: `bench-${n}`,
    metadata: { title: `bench rule ${n}` },
    level: 'medium',
    status: 'stable',
    logsource: { product: 'linux' },
    detection: kinds[n % kinds.length],
  }
}

const root = mkdtempSync(join(tmpdir(), 'svc-detector-bench-'))
const store = openEmbeddedStore(join(root, 'store.db'))
try {
  const node = buildNodeConfig({ 'path.data': root }, 'bench', root)
  const settings = new ClusterSettings(node, memoryPersistence(), Date.now, 0)
  const log = createLogger({ level: 'error', write: () => {} })
  for (const def of [...EVENT_STREAMS, ...FINDING_STREAMS].filter((d) => d.name.endsWith('-security'))) {
    await store.putIndexTemplate({ name: def.template.name, body: def.template.body })
    await store.createDataStream({ name: def.name })
  }
  const ruleset = createRuleset({ store, settings, log, now: Date.now, security: { authorizeIndices() {} } })
  await ruleset.sync.upsertIntegration('standard', { id: 'int-linux', metadata: { title: 'linux' }, category: 'security' }, false)
  for (let n = 0; n < RULES; n++) await ruleset.sync.upsertRule('standard', rule(n), 'int-linux', false)
  await settings.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': Math.max(50, RULES) } })
  await ruleset.sync.upsertDetector({
    integrationId: 'int-linux',
    logType: 'linux',
    category: 'security',
    ruleIds: Array.from({ length: RULES }, (_, n) => `bench-${n}`),
    enabled: true,
  })

  let t = performance.now()
  for (let at = 0; at < DOCS; at += 5000) {
    const lines = []
    for (let i = at; i < Math.min(DOCS, at + 5000); i++) lines.push({ create: { _index: EVENTS } }, event(i))
    const r = await store.bulk({ body: lines })
    if (r.errors) throw new Error('bulk failed')
  }
  const bytes = JSON.stringify(event(1)).length
  console.log(`indexed ${DOCS} documents of ~${bytes} bytes in ${((performance.now() - t) / 1000).toFixed(1)} s`)

  // Baseline: the same paged read by `_seq_no`, nothing evaluated or written.
  const [backing] = await store.resolve(EVENTS)
  t = performance.now()
  let after = -1
  let scanned = 0
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
  const scanSeconds = (performance.now() - t) / 1000

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
  t = performance.now()
  const outcome = await ruleset.scheduler.runLeased('int-linux')
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
  console.log(`baseline scan (no evaluation): ${scanRate.toFixed(0)} documents/s (${scanSeconds.toFixed(2)} s)`)
  console.log(
    `detector run, ${RULES} rules: ${runRate.toFixed(0)} documents/s (${runSeconds.toFixed(2)} s), ${outcome.findings} findings written`,
  )
  console.log(
    `ratio run/baseline: ${(runRate / scanRate).toFixed(2)} (evaluation and findings cost ${(((runSeconds - scanSeconds) / runSeconds) * 100).toFixed(0)}% of the run)`,
  )
  console.log(
    `GET / during the run: ${latencies.length} requests, p50 ${pct(50).toFixed(1)} ms, p99 ${pct(99).toFixed(1)} ms, max ${latencies[latencies.length - 1]?.toFixed(1)} ms`,
  )
  console.log(`peak RSS of the process: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`)
} finally {
  await store.close()
  rmSync(root, { recursive: true, force: true })
}

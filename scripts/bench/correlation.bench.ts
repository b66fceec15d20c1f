// Sigma correlation rules in a detector run: 1,000 rules plus 100 correlation rules (event_count,
// value_count, temporal, temporal_ordered over the rules that match most) over 100,000 stored
// events on the embedded store, against the same run without the correlation rules, in the same
// process over the same documents (two detectors, so neither finds the other's findings).
// The issue asks for a ratio of at least 0.5. BENCH_DOCS / BENCH_RULES / BENCH_CORRELATIONS for
// shorter variants.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ClusterSettings, memoryPersistence } from '../../src/config/cluster-settings'
import { buildNodeConfig } from '../../src/config/node-config'
import { createLogger } from '../../src/http/log'
import { createRuleset } from '../../src/ruleset'
import { EVENT_STREAMS, FINDING_STREAMS } from '../../src/setup/indices'
import { openEmbeddedStore } from '../../src/store/embedded'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const CORRELATIONS = Number(process.env.BENCH_CORRELATIONS ?? 100)
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
    { sel: { 'event.action': pick(ACTIONS), 'event.outcome': 'failure', 'user.name': pick(USERS) }, condition: 'sel' },
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

/** Correlation rule `n` over the unrestricted (most matching) rules: every fifth rule. */
function correlation(n: number): string {
  const base = (k: number) => `bench-${((n * 3 + k * 5) * 5) % RULES}`
  const kinds = [
    `type: event_count\n  rules: [${base(0)}]\n  group-by: [user.name]\n  timespan: 10m\n  condition: {gte: 3}`,
    `type: value_count\n  rules: [${base(0)}, ${base(1)}]\n  group-by: [event.action]\n  timespan: 1h\n  condition: {field: host.name, gt: 4}`,
    `type: temporal\n  rules: [${base(0)}, ${base(1)}]\n  group-by: [user.name]\n  timespan: 30m`,
    `type: temporal_ordered\n  rules: [${base(0)}, ${base(1)}, ${base(2)}]\n  group-by: [user.name]\n  timespan: 1h`,
  ]
  return `title: bench correlation ${n}\nid: corr-${n}\nlevel: high\ncorrelation:\n  ${kinds[n % kinds.length]}\n`
}

const root = mkdtempSync(join(tmpdir(), 'svc-correlation-bench-'))
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
  for (let n = 0; n < CORRELATIONS; n++)
    await ruleset.rules.upsert('standard', { body: correlation(n), ctiId: `corr-${n}`, category: 'linux' })
  await settings.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': RULES + CORRELATIONS } })
  const plain = Array.from({ length: RULES }, (_, n) => `bench-${n}`)
  const both = [...plain, ...Array.from({ length: CORRELATIONS }, (_, n) => `corr-${n}`)]
  await ruleset.sync.upsertDetector({ integrationId: 'det-plain', logType: 'linux', category: 'security', ruleIds: plain, enabled: true })
  await ruleset.sync.upsertDetector({ integrationId: 'det-corr', logType: 'linux', category: 'security', ruleIds: both, enabled: true })

  let t = performance.now()
  for (let at = 0; at < DOCS; at += 5000) {
    const lines = []
    for (let i = at; i < Math.min(DOCS, at + 5000); i++) lines.push({ create: { _index: EVENTS } }, event(i))
    const r = await store.bulk({ body: lines })
    if (r.errors) throw new Error('bulk failed')
  }
  console.log(`indexed ${DOCS} documents in ${((performance.now() - t) / 1000).toFixed(1)} s`)

  // Warm the store's caches with one paged read, so the first detector run is not the cold one.
  for (let after = -1; ;) {
    const page = await store.search({
      index: EVENTS,
      body: { size: 10_000, sort: [{ _seq_no: 'asc' }], search_after: [after], seq_no_primary_term: true, track_total_hits: false },
    })
    if (page.hits.hits.length === 0) break
    after = page.hits.hits[page.hits.hits.length - 1]._seq_no!
  }

  const run = async (id: string) => {
    const t0 = performance.now()
    const outcome = await ruleset.scheduler.runLeased(id)
    const seconds = (performance.now() - t0) / 1000
    if (!outcome || outcome.status !== 'ran' || outcome.documents !== DOCS) throw new Error(`run ${id}: ${JSON.stringify(outcome)}`)
    if (outcome.skipped_rules.length > 0) throw new Error(`run ${id} skipped ${outcome.skipped_rules.length} rules`)
    return { seconds, findings: outcome.findings }
  }
  const plainRun = await run('det-plain')
  const corrRun = await run('det-corr')
  const found = await store.count({ index: 'svc-findings-v5-security', body: { query: { exists: { field: 'svc.correlation' } } } })
  console.log(
    `without correlations, ${RULES} rules: ${(DOCS / plainRun.seconds).toFixed(0)} documents/s (${plainRun.seconds.toFixed(2)} s), ${plainRun.findings} findings`,
  )
  console.log(
    `with ${CORRELATIONS} correlation rules: ${(DOCS / corrRun.seconds).toFixed(0)} documents/s (${corrRun.seconds.toFixed(2)} s), ${corrRun.findings} findings (${found.count} correlation findings)`,
  )
  console.log(`ratio with/without correlations: ${(plainRun.seconds / corrRun.seconds).toFixed(2)} (the issue asks >= 0.5)`)
} finally {
  await store.close()
  rmSync(root, { recursive: true, force: true })
}

// Sigma correlation rules in a detector run: 1,000 rules plus 100 correlation rules (event_count,
// value_count, temporal, temporal_ordered) over 100,000 stored
// events on the embedded store, against the same run without the correlation rules, in the same
// process over the same documents (two detectors, so neither finds the other's findings).
// The issue asks for a ratio of at least 0.5. BENCH_DOCS / BENCH_RULES / BENCH_CORRELATIONS for
// shorter variants; BENCH_BROAD (default 20) how many broad rules the correlations read.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { indexEvents, openBenchRuleset } from './lib/security-events'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const RULES = Number(process.env.BENCH_RULES ?? 1000)
const CORRELATIONS = Number(process.env.BENCH_CORRELATIONS ?? 100)
const EVENTS = 'svc-events-v5-security'

/**
 * The first BROAD rules are replaced by broad ones (an action and an outcome: ~1 in 24 documents),
 * so the correlations see many matches (~80,000 over 100,000 documents): the bench rules otherwise
 * each name one of ~1,000 hosts.
 */
const BROAD = Number(process.env.BENCH_BROAD ?? 20)
const ACTIONS = ['login', 'logout', 'exec', 'file_open', 'connect', 'sudo', 'passwd_change', 'cron_run']
const broad = (n: number) => ({
  id: `bench-${n}`,
  metadata: { title: `broad bench rule ${n}` },
  level: 'low',
  status: 'stable',
  logsource: { product: 'linux' },
  detection: { sel: { 'event.action': ACTIONS[n % ACTIONS.length], 'event.outcome': n % 2 ? 'failure' : 'success' }, condition: 'sel' },
})

/** Correlation rule `n` over the broad rules. */
function correlation(n: number): string {
  // BENCH_BROAD=0: over the bench's own rules (each names one host, so they match rarely).
  const base = (k: number) => `bench-${BROAD > 0 ? (n + k * 7) % BROAD : (n * 10 + k) % RULES}`
  // Realistic rules fire rarely: thresholds above what a group usually sees in its window.
  const kinds = [
    `type: event_count\n  rules: [${base(0)}]\n  group-by: [user.name]\n  timespan: 10m\n  condition: {gte: 12}`,
    `type: value_count\n  rules: [${base(0)}, ${base(1)}]\n  group-by: [user.name]\n  timespan: 10m\n  condition: {field: host.name, gt: 14}`,
    `type: temporal\n  rules: [${base(0)}, ${base(1)}]\n  group-by: [host.name]\n  timespan: 30m`,
    `type: temporal_ordered\n  rules: [${base(0)}, ${base(1)}, ${base(2)}]\n  group-by: [host.name]\n  timespan: 1h`,
  ]
  return `title: bench correlation ${n}\nid: corr-${n}\nlevel: high\ncorrelation:\n  ${kinds[n % kinds.length]}\n`
}

const root = mkdtempSync(join(tmpdir(), 'svc-correlation-bench-'))
const { store, settings, ruleset } = await openBenchRuleset(root, RULES)
try {
  for (let n = 0; n < BROAD; n++) await ruleset.sync.upsertRule('standard', broad(n), 'int-linux', false)
  for (let n = 0; n < CORRELATIONS; n++)
    await ruleset.rules.upsert('standard', { body: correlation(n), ctiId: `corr-${n}`, category: 'linux' })
  await settings.update({ persistent: { 'plugins.security_analytics.max_rules_per_detector': RULES + CORRELATIONS } })
  const plain = Array.from({ length: RULES }, (_, n) => `bench-${n}`)
  const both = [...plain, ...Array.from({ length: CORRELATIONS }, (_, n) => `corr-${n}`)]
  await ruleset.sync.upsertDetector({ integrationId: 'det-plain', logType: 'linux', category: 'security', ruleIds: plain, enabled: true })
  await ruleset.sync.upsertDetector({ integrationId: 'det-corr', logType: 'linux', category: 'security', ruleIds: both, enabled: true })

  let t = performance.now()
  await indexEvents(store, EVENTS, DOCS)
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

// Threat-intel retro-hunt (src/ruleset/threat-intel/retro-hunt.ts) at volume, in process on the
// embedded store: BENCH_RETRO_IOCS (default 50,000) new IoCs arriving as one sync change window
// (50 of them addresses the stored events hold) searched for in BENCH_DOCS (default 100,000;
// 1,000,000 for the figure) stored security events of a threat-intel detector. Reported:
// the hunt's time (target <= 30 s at 1M events) and events/s against a baseline measured in the
// same run (the same paged read of the same events as the hunt's, the range tested as it reads,
// nothing matched), and `GET /` on the same
// event loop during the hunt (target p99 < 100 ms), at the default pace
// (`retro_hunt.events_per_second`, 50,000).
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DETECTORS_INDEX } from '../../src/ruleset/indices'
import { IOC_ALIAS } from '../../src/ruleset/threat-intel/synced-iocs'
import { eventsInRange } from '../../src/ruleset/detection/stored-events'
import { benchIoc } from './lib/iocs'
import type { IocEntry } from '../../src/ruleset/threat-intel/ioc-index'
import { probeEventLoop } from './lib/load'
import { event, indexEvents, openBenchRuleset } from './lib/security-events'

const DOCS = Number(process.env.BENCH_DOCS ?? 100_000)
const IOCS = Number(process.env.BENCH_RETRO_IOCS ?? 50_000)
const LISTED = 50
const EVENTS = 'svc-events-v5-security'

const root = mkdtempSync(join(tmpdir(), 'svc-retro-hunt-bench-'))
const { store, settings, ruleset } = await openBenchRuleset(root, 10)
try {
  await ruleset.sync.upsertIntegration(
    'standard',
    { id: 'int-linux', metadata: { title: 'linux' }, category: 'security', ioc_fields: [{ ioc: 'ip', fields: ['source.ip'] }] },
    true,
  )
  const ruleIds = Array.from({ length: 10 }, (_, n) => `bench-${n}`)
  await ruleset.sync.upsertDetector({ integrationId: 'int-linux', logType: 'linux', category: 'security', ruleIds, enabled: true })
  // The bench events are dated from 2026-05-28 on: a look-back that holds them all.
  await settings.update({ persistent: { 'plugins.security_analytics.threat_intel.retro_hunt.lookback_days': 365 } })
  let t = performance.now()
  await indexEvents(store, EVENTS, DOCS)
  console.log(`indexed ${DOCS.toLocaleString()} events in ${((performance.now() - t) / 1000).toFixed(1)} s`)
  // The detector's live run reads them all: its checkpoint is past them, so they are the hunt's.
  const got = await store.get({ index: DETECTORS_INDEX, id: 'int-linux' })
  if (!got.found) throw new Error('the bench detector is missing')
  const detector = (got._source as { detector: Record<string, unknown> }).detector
  await store.index({
    index: DETECTORS_INDEX,
    id: 'int-linux',
    body: { detector: { ...detector, threat_intel_enabled: true } },
    refresh: true,
  })
  const outcome = await ruleset.scheduler.runLeased('int-linux')
  if (outcome?.status !== 'ran' || outcome.documents !== DOCS) throw new Error(`live run: ${JSON.stringify(outcome)}`)

  // The new IoCs, stored as the sync stores them, and handed over as its change window is.
  const entries: IocEntry[] = []
  for (let at = 0; at < IOCS; at += 5000) {
    const body: Array<Record<string, unknown>> = []
    for (let i = at; i < Math.min(IOCS, at + 5000); i++) {
      const listed = i < LISTED
      const e = listed
        ? { id: `listed-${i}`, type: 'ip', value: String((event(Math.floor((i * DOCS) / LISTED)).source as { ip: string }).ip) }
        : benchIoc(i)
      entries.push(e)
      body.push(
        { index: { _index: IOC_ALIAS, _id: e.id } },
        { document: { id: e.id, name: e.value, type: e.type, feed: { name: 'bench' } } },
      )
    }
    await store.bulk({ body, refresh: at + 5000 >= IOCS })
  }

  // Baseline: the same paged read of the same events (`_seq_no` order, the range tested as read), nothing matched.
  Bun.gc(true)
  t = performance.now()
  let scanned = 0
  for await (const page of eventsInRange(store, [EVENTS], { from: 0, to: Date.now() }, { rangeByReading: true }))
    scanned += page.hits.length
  const scanSeconds = (performance.now() - t) / 1000

  Bun.gc(true)
  const probe = probeEventLoop()
  ruleset.retroHunt.start()
  t = performance.now()
  ruleset.retroHunt.synced(entries)
  await ruleset.retroHunt.idle()
  const huntSeconds = (performance.now() - t) / 1000
  const served = await probe.stop()
  const found = await store.search({ index: '.opensearch-sap-ioc-findings', body: { size: 0, track_total_hits: true } })
  const findings = typeof found.hits.total === 'number' ? found.hits.total : (found.hits.total?.value ?? 0)

  console.log(
    `baseline read of the ${scanned.toLocaleString()} events: ${(scanned / scanSeconds).toFixed(0)} events/s (${scanSeconds.toFixed(2)} s)`,
  )
  console.log(
    `retro-hunt of ${IOCS.toLocaleString()} new IoCs over ${DOCS.toLocaleString()} events: ${huntSeconds.toFixed(1)} s ` +
      `(${(DOCS / huntSeconds).toFixed(0)} events/s, ratio ${(scanSeconds / huntSeconds).toFixed(2)} of the baseline read; target <= 30 s at 1M events), ` +
      `${findings} IoC findings`,
  )
  console.log(
    `GET / during the hunt: ${served.requests} requests, p50 ${served.p50.toFixed(1)} ms, p99 ${served.p99.toFixed(1)} ms (target < 100 ms)`,
  )
} finally {
  await ruleset.stop()
  await store.close()
  rmSync(root, { recursive: true, force: true })
}

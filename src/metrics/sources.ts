/**
 * What the node's state says at scrape time: each source reads what exists (index statistics,
 * detector state documents, consumer documents, this node's Engine loads, the journal's lock
 * records) when Prometheus asks, so no feature keeps counters for the metrics' sake. A source that
 * cannot be read (platform down) reports `svc_metrics_source_up 0`; the scrape itself never fails.
 */
import { Counter, Gauge, type Registry } from 'prom-client'
import type { EngineLoadState } from '../content/policy/engine-load'
import { CONSUMERS } from '../content/sync/consumers'
import type { Journal } from '../journal/journal'
import { DETECTOR_STATE_INDEX } from '../ruleset/indices'
import { CTI_CONSUMERS_INDEX } from '../setup/indices/names'
import { IndexNotFound } from '../store/errors'
import type { Store } from '../store/port'

export interface MetricSources {
  store: Store
  journal: Journal
  /** This node's Engine loads (absent when the Content Manager is not built). */
  engineLoads?: () => EngineLoadState[]
  now: () => number
}

/** Detector state documents read per scrape: far above `plugins.security_analytics.max_detectors`. */
const MAX_DETECTORS_READ = 1000

type Collect = () => Promise<void>

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined)
const obj = (v: unknown): Record<string, unknown> => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {})
/** Epoch milliseconds from a number or an ISO date string. */
const millis = (v: unknown): number | undefined =>
  num(v) ?? (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined)

function gauge(registry: Registry, name: string, help: string, labelNames: string[] = []) {
  return new Gauge({ name, help, labelNames, registers: [registry] })
}

/** Registers the gauges; answers the function that refreshes them all (call it before rendering). */
export function registerSources(registry: Registry, src: MetricSources): () => Promise<void> {
  const up = gauge(registry, 'svc_metrics_source_up', 'Whether the last scrape could read this source (1) or not (0).', ['source'])
  const all: Record<string, Collect> = {
    indices: indexSource(registry, src),
    detectors: detectorSource(registry, src),
    consumers: consumerSource(registry, src),
    engine: engineSource(registry, src),
    locks: lockSource(registry, src),
  }
  // Read together before the registry renders: prom-client runs per-metric `collect` callbacks
  // concurrently, which would render some gauges before their source was read.
  return async () => {
    await Promise.all(
      Object.entries(all).map(async ([source, run]) => {
        try {
          await run()
          up.set({ source }, 1)
        } catch {
          up.set({ source }, 0)
        }
      }),
    )
  }
}

function indexSource(registry: Registry, src: MetricSources): Collect {
  const docs = gauge(registry, 'svc_index_docs', 'Documents per index.', ['index'])
  const bytes = gauge(registry, 'svc_index_store_size_bytes', 'Stored size per index.', ['index'])
  return async () => {
    docs.reset()
    bytes.reset()
    for (const s of await src.store.stats({ index: '*', expand_wildcards: 'all' })) {
      docs.set({ index: s.index }, s.docs_count)
      bytes.set({ index: s.index }, s.store_size_in_bytes)
    }
  }
}

function detectorSource(registry: Registry, src: MetricSources): Collect {
  const det = {
    lastRun: gauge(registry, 'svc_detector_last_run_timestamp_seconds', 'When the detector last ran (start).', ['detector_id']),
    duration: gauge(registry, 'svc_detector_last_run_duration_seconds', 'How long the last run took.', ['detector_id']),
    scanned: gauge(registry, 'svc_detector_last_run_events_scanned', 'Events the last run evaluated.', ['detector_id']),
    findings: gauge(registry, 'svc_detector_last_run_findings', 'Findings the last run wrote.', ['detector_id']),
    errors: gauge(registry, 'svc_detector_last_run_errors', '1 when the latest run ended with an error, else 0.', ['detector_id']),
    lastErrorAt: gauge(registry, 'svc_detector_last_error_timestamp_seconds', "When the detector's latest error happened.", [
      'detector_id',
    ]),
    lag: gauge(
      registry,
      'svc_detector_lag_seconds',
      "How far the detector is behind: the run's own lag when it records one, else the time since its last run ended.",
      ['detector_id'],
    ),
  }
  return async () => {
    for (const g of Object.values(det)) g.reset()
    let hits: Array<{ _id: string; _source?: Record<string, unknown> }>
    try {
      hits = (await src.store.search({ index: DETECTOR_STATE_INDEX, body: { size: MAX_DETECTORS_READ } })).hits.hits
    } catch (e) {
      if (e instanceof IndexNotFound) return // no detector has run yet
      throw e
    }
    for (const h of hits) {
      const s = obj(h._source)
      const run = obj(s.last_run)
      const l = { detector_id: String(s.detector_id ?? h._id) }
      const started = millis(run.started_at) ?? millis(s.last_run_at)
      const took = num(run.took_ms)
      if (started !== undefined) det.lastRun.set(l, started / 1000)
      if (took !== undefined) det.duration.set(l, took / 1000)
      if (num(run.documents) !== undefined) det.scanned.set(l, num(run.documents)!)
      if (num(run.findings) !== undefined) det.findings.set(l, num(run.findings)!)
      // The latest attempt failed when its run recorded an error, or when the detector's last error
      // (kept after later successes) is newer than its last run (a run that failed before finishing).
      const lastError = obj(s.last_error)
      const errorAt = millis(lastError.at)
      const ranUntil = millis(run.finished_at) ?? (started !== undefined ? started + (took ?? 0) : undefined)
      const failedAfter = errorAt !== undefined && (ranUntil === undefined || errorAt > ranUntil)
      det.errors.set(l, run.error || failedAfter ? 1 : 0)
      if (errorAt !== undefined) det.lastErrorAt.set(l, errorAt / 1000)
      const lag = num(run.lag_ms) ?? num(s.lag_ms)
      if (lag !== undefined) det.lag.set(l, lag / 1000)
      else if (ranUntil !== undefined) det.lag.set(l, Math.max(0, src.now() - ranUntil) / 1000)
    }
  }
}

function consumerSource(registry: Registry, src: MetricSources): Collect {
  const con = {
    local: gauge(registry, 'svc_consumer_local_offset', 'The offset this deployment has applied, per CTI consumer.', ['consumer']),
    remote: gauge(registry, 'svc_consumer_remote_offset', 'The newest offset the CTI API announced, per consumer.', ['consumer']),
    status: gauge(registry, 'svc_consumer_status', 'The consumer document status (1 for the current one).', ['consumer', 'status']),
    passDuration: gauge(registry, 'svc_consumer_last_pass_duration_seconds', "The consumer's last finished pass.", ['consumer']),
    passDocuments: gauge(registry, 'svc_consumer_last_pass_documents', 'Documents of the last (or running) pass.', ['consumer']),
    passOk: gauge(registry, 'svc_consumer_last_pass_success', '1 when the last finished pass ended ready, else 0.', ['consumer']),
  }
  const syncDuration = gauge(registry, 'svc_sync_last_pass_duration_seconds', 'The last content sync pass run by this node.')
  const syncAt = gauge(registry, 'svc_sync_last_pass_timestamp_seconds', 'When the last content sync pass run by this node ended.')
  return async () => {
    for (const g of Object.values(con)) g.reset()
    for (const def of Object.values(CONSUMERS)) {
      let source: Record<string, unknown>
      try {
        const got = await src.store.get({ index: CTI_CONSUMERS_INDEX, id: def.type })
        if (!got.found) continue
        source = obj(got._source)
      } catch (e) {
        if (e instanceof IndexNotFound) break // no pass has run yet
        throw e
      }
      const l = { consumer: def.kind }
      if (num(source.local_offset) !== undefined) con.local.set(l, num(source.local_offset)!)
      if (num(source.remote_offset) !== undefined) con.remote.set(l, num(source.remote_offset)!)
      if (typeof source.status === 'string') con.status.set({ ...l, status: source.status }, 1)
      const last = obj(source.last_pass)
      if (num(last.duration_millis) !== undefined) con.passDuration.set(l, num(last.duration_millis)! / 1000)
      if (typeof last.outcome === 'string') con.passOk.set(l, last.outcome === 'ready' ? 1 : 0)
      const documents = num(last.documents) ?? num(obj(source.progress).documents)
      if (documents !== undefined) con.passDocuments.set(l, documents)
    }
    const [pass] = src.journal.entries('sync.pass', 1)
    if (pass) {
      if (num(pass.detail.millis) !== undefined) syncDuration.set(num(pass.detail.millis)! / 1000)
      syncAt.set(pass.at / 1000)
    }
  }
}

function engineSource(registry: Registry, src: MetricSources): Collect {
  const engineLoaded = gauge(registry, 'svc_engine_policy_loaded', '1 for the policy hash the Engine accepted on this node, per space.', [
    'space',
    'hash',
  ])
  const engineLast = gauge(
    registry,
    'svc_engine_policy_last_load',
    "The outcome of this node's last load of a space (1 for the current one).",
    ['space', 'outcome'],
  )
  const engineInFlight = gauge(registry, 'svc_engine_policy_load_in_progress', '1 while a load of the space runs on this node.', ['space'])
  return async () => {
    engineLoaded.reset()
    engineLast.reset()
    engineInFlight.reset()
    for (const s of src.engineLoads?.() ?? []) {
      if (s.loadedHash) engineLoaded.set({ space: s.space, hash: s.loadedHash }, 1)
      if (s.lastOutcome) engineLast.set({ space: s.space, outcome: s.lastOutcome }, 1)
      engineInFlight.set({ space: s.space }, s.inFlight ? 1 : 0)
    }
  }
}

function lockSource(registry: Registry, src: MetricSources): Collect {
  // Counters from the journal: every lock event this node recorded since its data directory was made.
  const lockEvents = new Counter({
    name: 'svc_lock_events_total',
    help: "Lock events recorded in this node's journal, by kind (acquire, wait, steal, release, lost, timeout).",
    labelNames: ['kind'],
    registers: [registry],
  })
  return async () => {
    lockEvents.reset()
    for (const [kind, n] of src.journal.counts('lock.')) lockEvents.inc({ kind: kind.slice('lock.'.length) }, n)
  }
}

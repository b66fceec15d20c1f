/**
 * A threat-intel monitor's run (reference 3.3): the documents indexed into its indices since its
 * cursor are read in `_seq_no` order, the fields `per_ioc_type_scan_input_list` maps for the input
 * index holding them looked up in the node's IoC index, and one IoC finding written per distinct
 * malicious value per run (`related_doc_ids` as `<doc id>:<monitor input index>`). Each trigger
 * whose `ioc_types` (empty: any) holds the finding's type and whose `data_sources` (empty: any)
 * names an input index of its documents alerts on it, one alert per (trigger, IoC type, value) in
 * `.opensearch-sap-threat-intel-alerts`, its actions notified as detector alerts' are.
 *
 * The first run (and the first after the monitor is enabled again) starts after what is stored, as
 * a detector's does. The cursor is saved after the run's findings and alerts, so a crash repeats
 * the run and the derived finding ids make the repeat write nothing twice. Runs come from the
 * monitor's schedule (`ThreatIntelMonitorClock`) or Alerting's `_execute` on the monitor id.
 */
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import { concreteIndices, maxSeqNo } from '../detection/checkpoint'
import { eventsInRange } from '../detection/stored-events'
import { runPacer } from '../detection/scan'
import { ensureIndex, TI_MONITORS_INDEX } from '../indices'
import type { StoredDetector } from '../model'
import { addEventHits } from './collect'
import { buildIocFindings, type IocFinding, type IocHit, writeIocFindings } from './ioc-findings'
import type { IocIndex } from './ioc-index'
import { monitorFields, type StoredMonitor, type ThreatIntelMonitors } from './monitors'

export interface MonitorRunDeps {
  store: Store
  log: Logger
  now: () => number
  iocs: { current(): Promise<IocIndex> }
  monitors: ThreatIntelMonitors
  alerts?: { raiseIoc(detectorId: string, detector: StoredDetector, findings: IocFinding[]): Promise<number> }
}

interface Cursor {
  /** The monitor's `enabled_time` the cursor belongs to: re-enabling starts after what is stored. */
  epoch: number | null
  last_run_at: number
  /** Concrete index -> last `_seq_no` read. */
  indices: Record<string, number>
}

const cursorId = (id: string) => `_cursor:${id}`
const PERIOD_MILLIS: Record<string, number> = { MINUTES: 60_000, HOURS: 3_600_000, DAYS: 86_400_000 }

export const monitorPeriodMillis = (m: StoredMonitor) =>
  m.schedule.period.interval * (PERIOD_MILLIS[m.schedule.period.unit.toUpperCase()] ?? 60_000)

async function loadCursor(store: Store, id: string): Promise<Cursor | undefined> {
  await ensureIndex(store, TI_MONITORS_INDEX)
  const got = await store.get({ index: TI_MONITORS_INDEX, id: cursorId(id) })
  return got.found ? (got._source as unknown as Cursor) : undefined
}

/** A run of the monitor now: the documents it read and the IoC findings it wrote. */
export async function runThreatIntelMonitor(deps: MonitorRunDeps, id: string, monitor: StoredMonitor) {
  const stored = await loadCursor(deps.store, id)
  const fresh = !stored || stored.epoch !== monitor.enabled_time
  const cursor: Cursor = { epoch: monitor.enabled_time, last_run_at: deps.now(), indices: fresh ? {} : { ...stored.indices } }
  const hits = new Map<string, IocHit>()
  const index = await deps.iocs.current()
  const pacer = runPacer()
  let documents = 0
  for (const input of monitor.indices) {
    const fields = monitorFields(monitor, input)
    for (const concrete of await concreteIndices(deps.store, [input])) {
      // Starts after what is stored: at the first run, and for an index that appeared since.
      if (fresh || cursor.indices[concrete] === undefined) {
        cursor.indices[concrete] = await maxSeqNo(deps.store, concrete)
        if (fresh) continue
      }
      if (fields.length === 0) continue
      for await (const page of eventsInRange(deps.store, [concrete], undefined, { position: cursor.indices })) {
        documents += page.hits.length
        for (const hit of page.hits) {
          addEventHits(hits, index, fields, hit._source ?? {}, `${hit._id}:${input}`)
          if (pacer.due()) await pacer.pause()
        }
      }
    }
  }
  const findings = await buildIocFindings(deps.store, [...hits.values()], {
    detectorId: id,
    monitorId: id,
    monitorName: monitor.name,
    now: deps.now(),
  })
  const written = await writeIocFindings(deps.store, findings)
  await raise(deps, id, monitor, findings)
  await deps.store.index({ index: TI_MONITORS_INDEX, id: cursorId(id), body: cursor as unknown as Record<string, unknown>, refresh: true })
  return { documents, findings, written }
}

/** Each trigger's alerts on the findings it selects (reference 3.3: trigger match). */
async function raise(deps: MonitorRunDeps, id: string, monitor: StoredMonitor, findings: IocFinding[]): Promise<void> {
  if (!deps.alerts || findings.length === 0) return
  for (const t of monitor.triggers) {
    const types = t.ioc_types ?? []
    const sources = t.data_sources ?? []
    const selected = findings.filter(
      (f) =>
        (types.length === 0 || types.includes(f.ioc_type)) &&
        (sources.length === 0 || f.related_doc_ids.some((d) => sources.includes(d.slice(d.lastIndexOf(':') + 1)))),
    )
    if (selected.length === 0) continue
    // The alert machinery of detectors, with the trigger as a threat-intel detector trigger.
    const detector = {
      name: monitor.name,
      detector_type: 'threat-intel',
      monitor_id: [id],
      triggers: [{ ...t, id: t.id, severity: t.severity ?? '1', detection_types: ['threat_intel'], actions: t.actions ?? [] }],
    } as unknown as StoredDetector
    await deps.alerts.raiseIoc(id, detector, selected)
  }
}

/** Runs each enabled monitor when its period has passed since its last run (checked every `tickMillis`). */
export class ThreatIntelMonitorClock {
  private timer: ReturnType<typeof setInterval> | undefined
  private running: Promise<void> = Promise.resolve()

  constructor(
    private readonly deps: MonitorRunDeps,
    private readonly tickMillis = 30_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      this.running = this.running
        .then(() => this.tick())
        .catch((e) => this.deps.log.warn('threat intel monitor run failed', { error: e as Error }))
    }, this.tickMillis)
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.running
  }

  private async tick(): Promise<void> {
    for (const { id, monitor } of await this.deps.monitors.all()) {
      if (!monitor.enabled) continue
      const cursor = await loadCursor(this.deps.store, id)
      if (cursor && cursor.epoch === monitor.enabled_time && this.deps.now() - cursor.last_run_at < monitorPeriodMillis(monitor)) continue
      await runThreatIntelMonitor(this.deps, id, monitor)
    }
  }
}

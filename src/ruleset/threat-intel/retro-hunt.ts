/**
 * Retro-hunt (beyond the peer): IoCs the sync adds are searched for in the last
 * `retro_hunt.lookback_days` of stored events, since an indicator published today often matches
 * yesterday's traffic. Live runs match events after each detector's checkpoint with the IoC
 * index as it is then; so a hunt reads each `threat_intel_enabled` detector's events in the
 * range up to its checkpoint when the IoCs arrived (`until`), and matches them against only the
 * new IoCs. Its matches are IoC findings of that detector like live ones (with its alerts).
 *
 * A hunt is a job document (the new IoCs, range, bounds) and its cursor (per detector and index
 * the last `_seq_no` read): written before it runs, its cursor saved after each
 * second's findings (findings first, cursor second, so a crash repeats those pages and the derived
 * finding ids make the repeat a create conflict), deleted when done; a restarted node carries on
 * where the cursor is. Change windows arriving while a job waits join it (up to MAX_JOB_IOCS), its
 * `until` moved to the later checkpoints: a window of events live runs read meanwhile may then be
 * read again (alerts stay one per value; a value may gain a second finding), never missed. It is
 * paced to `retro_hunt.events_per_second` and yields to requests between events, and bounded by
 * `retro_hunt.max_events` per job.
 */
import type { ClusterSettings } from '../../config/cluster-settings'
import type { Logger } from '../../http/log'
import { IndexNotFound } from '../../store/errors'
import type { Store } from '../../store/port'
import { loadCheckpoint } from '../detection/checkpoint'
import { EVENTS_PAGE, eventsInRange, type TimeRange } from '../detection/stored-events'
import { runPacer } from '../detection/scan'
import { DETECTORS_INDEX, ensureIndex, TI_RETRO_HUNT_INDEX } from '../indices'
import type { StoredDetector } from '../model'
import { addEventHits } from './collect'
import { iocFieldsOf, type IocFieldList, type IocFieldsInput } from './ioc-fields'
import { buildIocFindings, type IocFinding, type IocHit, writeIocFindings } from './ioc-findings'
import { type IocEntry, IocIndex } from './ioc-index'

const sa = 'plugins.security_analytics.threat_intel.retro_hunt.'
export const RETRO_HUNT_SETTINGS = {
  enabled: `${sa}enabled`,
  lookbackDays: `${sa}lookback_days`,
  eventsPerSecond: `${sa}events_per_second`,
  maxEvents: `${sa}max_events`,
} as const

const MAX_JOB_IOCS = 100_000
const DAY = 86_400_000
const cursorId = (jobId: string) => `cursor:${jobId}`
/** How often a hunt writes its findings and saves its cursor. */
const FLUSH_MILLIS = 1_000

export interface RetroJob {
  /** When it was queued: jobs run oldest first. */
  queued_at: number
  /** The new IoCs as the sync wrote them (id, feed type, value): no read of them needed. */
  iocs: Array<[string, string, string]>
  range: TimeRange
  started: boolean
  /** Detector -> concrete index -> the checkpoint when the IoCs arrived: live runs matched beyond it. */
  until: Record<string, Record<string, number>>
  // The cursor (kept in a document of its own, `cursor:<job id>`, rewritten as the hunt goes).
  /** Detector -> concrete index -> last `_seq_no` read. */
  position: Record<string, Record<string, number>>
  done: string[]
  events: number
  findings: number
}

export interface RetroHuntDeps {
  store: Store
  settings: ClusterSettings
  log: Logger
  now: () => number
  iocFieldsOfLogType(name: string): Promise<IocFieldsInput | undefined>
  alerts?: { raiseIoc(detectorId: string, detector: StoredDetector, findings: IocFinding[]): Promise<number> }
}

export class RetroHunt {
  /** Queued IoCs and job runs, one at a time. */
  private chain: Promise<void> = Promise.resolve()
  private stopping = false
  private started = false

  constructor(private readonly deps: RetroHuntDeps) {}

  /** New IoCs from a sync change window: queued as (or into) a job, run in turn. */
  synced(ids: IocEntry[]): void {
    this.serially(async () => {
      const settings = await this.deps.settings.snapshot()
      if (!settings.bool(RETRO_HUNT_SETTINGS.enabled)) return
      await this.enqueue(ids, settings.num(RETRO_HUNT_SETTINGS.lookbackDays))
    })
    this.kick()
  }

  /** Runs the jobs stored (a restart's unfinished ones first). */
  start(): void {
    this.started = true
    this.kick()
  }

  async stop(): Promise<void> {
    this.stopping = true
    await this.chain
  }

  /** Resolves once every job queued so far has run (tests and benches wait on it). */
  idle(): Promise<void> {
    return this.chain
  }

  private serially(step: () => Promise<void>): void {
    this.chain = this.chain
      .then(step)
      .catch((e) => this.deps.log.warn('retro-hunt failed; it carries on at the next change', { error: e as Error }))
  }

  private kick(): void {
    if (!this.started) return
    this.serially(async () => {
      for (let job = await this.next(); job && !this.stopping; job = await this.next()) await this.run(job.id, job.job)
    })
  }

  /** The queued jobs, oldest first, each with its cursor (none yet: not started). */
  private async jobs(): Promise<Array<{ id: string; job: RetroJob }>> {
    await ensureIndex(this.deps.store, TI_RETRO_HUNT_INDEX)
    const r = await this.deps.store.search({
      index: TI_RETRO_HUNT_INDEX,
      body: { size: 100, query: { exists: { field: 'queued_at' } }, sort: [{ queued_at: 'asc' }] },
    })
    const out: Array<{ id: string; job: RetroJob }> = []
    for (const h of r.hits.hits) {
      const cursor = await this.deps.store.get({ index: TI_RETRO_HUNT_INDEX, id: cursorId(h._id) })
      const fresh = { started: false, position: {}, done: [], events: 0, findings: 0 }
      out.push({ id: h._id, job: { ...(h._source as unknown as RetroJob), ...(cursor.found ? cursor._source : fresh) } })
    }
    return out
  }

  /** The job's queued part: its IoCs, range and bounds (written when queued or joined). */
  private async saveJob(id: string, job: RetroJob): Promise<void> {
    const { queued_at, iocs, range, until } = job
    await this.deps.store.index({ index: TI_RETRO_HUNT_INDEX, id, body: { queued_at, iocs, range, until }, refresh: true })
  }

  private async next() {
    return (await this.jobs())[0]
  }

  /** The job's cursor. */
  private async save(id: string, job: RetroJob): Promise<void> {
    const { started, position, done, events, findings } = job
    await this.deps.store.index({
      index: TI_RETRO_HUNT_INDEX,
      id: cursorId(id),
      body: { started, position, done, events, findings },
      refresh: true,
    })
  }

  private async enqueue(entries: IocEntry[], lookbackDays: number): Promise<void> {
    const added: RetroJob['iocs'] = entries.map((e) => [e.id, e.type, e.value])
    const detectors = await threatIntelDetectors(this.deps.store)
    if (detectors.length === 0) return
    const until: RetroJob['until'] = {}
    for (const { id } of detectors) until[id] = (await loadCheckpoint(this.deps.store, id))?.checkpoint.indices ?? {}
    const now = this.deps.now()
    const waiting = (await this.jobs()).find((j) => !j.job.started && j.job.iocs.length + added.length <= MAX_JOB_IOCS)
    if (waiting) {
      const job = waiting.job
      await this.saveJob(waiting.id, {
        ...job,
        iocs: [...job.iocs, ...added],
        until: { ...job.until, ...until },
        range: { ...job.range, to: now },
      })
      return
    }
    const job: RetroJob = {
      queued_at: now,
      iocs: added,
      range: { from: now - lookbackDays * DAY, to: now },
      started: false,
      until,
      position: {},
      done: [],
      events: 0,
      findings: 0,
    }
    await this.saveJob(crypto.randomUUID(), job)
  }

  /** One job: every detector it names, from its cursor on; deleted once done (kept when the node stops). */
  private async run(id: string, job: RetroJob): Promise<void> {
    if (!job.started) await this.save(id, (job = { ...job, started: true }))
    const iocs = new IocIndex()
    // Yielding as a run does: up to MAX_JOB_IOCS of them.
    const pacer = runPacer()
    for (const [iocId, type, value] of job.iocs) {
      iocs.put({ id: iocId, type, value })
      if (pacer.due()) await pacer.pause()
    }
    const settings = await this.deps.settings.snapshot()
    const maxEvents = settings.num(RETRO_HUNT_SETTINGS.maxEvents)
    const started = Date.now()
    for (const { id: detectorId, detector } of await threatIntelDetectors(this.deps.store)) {
      if (this.stopping) return
      if (job.done.includes(detectorId) || !job.until[detectorId]) continue
      const fields = iocFieldsOf(detector.detector_type, await this.deps.iocFieldsOfLogType(detector.detector_type))
      if (iocs.size > 0 && fields.length > 0) {
        const finished = await this.hunt(id, job, detectorId, detector, iocs, fields, maxEvents)
        if (!finished) return
      }
      job.done.push(detectorId)
      await this.save(id, job)
    }
    for (const doc of [cursorId(id), id]) await this.deps.store.delete({ index: TI_RETRO_HUNT_INDEX, id: doc, refresh: true })
    this.deps.log.info('retro-hunt done', {
      iocs: job.iocs.length,
      events: job.events,
      findings: job.findings,
      millis: Date.now() - started,
    })
  }

  /** One detector's events of the job; false when the node stops before the end. */
  private async hunt(
    id: string,
    job: RetroJob,
    detectorId: string,
    detector: StoredDetector,
    iocs: IocIndex,
    fields: IocFieldList,
    maxEvents: number,
  ): Promise<boolean> {
    const position = (job.position[detectorId] ??= {})
    const expressions = detector.inputs.flatMap((i) => i.detector_input.indices)
    const pacer = runPacer()
    const rate = (await this.deps.settings.snapshot()).num(RETRO_HUNT_SETTINGS.eventsPerSecond)
    // A page a second at most at a slow pace, so the cursor moves (and a stop is heard) that often.
    const size = Math.min(EVENTS_PAGE, rate)
    let found = new Map<string, IocHit>()
    let flushed = Date.now()
    // The pace holds over the whole hunt, its reads and writes included: a page may start once the
    // events before it have had their share of time, with at most a second's catching up after a
    // slow stretch (so a stall is not followed by a burst).
    let next = Date.now()
    // Findings first, cursor second: once a second (FLUSH_MILLIS), and when the hunt ends or stops.
    const flush = async () => {
      job.findings += await this.write(detectorId, detector, [...found.values()])
      found = new Map()
      flushed = Date.now()
      await this.save(id, job)
    }
    for await (const { index, hits } of eventsInRange(this.deps.store, expressions, job.range, {
      position,
      until: job.until[detectorId],
      size,
      // A hunt reads every event after the look-back's first: the range is tested as it reads.
      rangeByReading: true,
    })) {
      for (const hit of hits) {
        addEventHits(found, iocs, fields, hit._source ?? {}, `${hit._id}:${index}`)
        if (pacer.due()) await pacer.pause()
      }
      job.events += hits.length
      if (job.events >= maxEvents) {
        await flush()
        this.deps.log.warn('retro-hunt stopped at retro_hunt.max_events', { events: job.events, detector: detectorId })
        return true
      }
      if (this.stopping || Date.now() - flushed >= FLUSH_MILLIS) await flush()
      if (this.stopping) return false
      const now = Date.now()
      next = Math.max(next, now - 1000) + (hits.length / rate) * 1000
      if (next > now) await Bun.sleep(next - now)
    }
    await flush()
    return true
  }

  private async write(detectorId: string, detector: StoredDetector, hits: IocHit[]): Promise<number> {
    if (hits.length === 0) return 0
    const findings = await buildIocFindings(this.deps.store, hits, {
      detectorId,
      monitorId: detector.monitor_id?.[0] ?? detectorId,
      monitorName: detector.name,
      now: this.deps.now(),
    })
    const written = await writeIocFindings(this.deps.store, findings)
    await this.deps.alerts?.raiseIoc(detectorId, detector, findings)
    return written
  }
}

/** Enabled detectors with `threat_intel_enabled` (detectors are few: one page). */
async function threatIntelDetectors(store: Store): Promise<Array<{ id: string; detector: StoredDetector }>> {
  try {
    const r = await store.search({ index: DETECTORS_INDEX, body: { size: 10_000 } })
    return r.hits.hits
      .map((h) => ({ id: h._id, detector: (h._source as { detector: StoredDetector }).detector }))
      .filter(({ detector }) => detector?.enabled && detector.threat_intel_enabled)
  } catch (e) {
    if (e instanceof IndexNotFound) return []
    throw e
  }
}

/**
 * Retro-hunt (beyond the peer): IoCs the sync adds are searched for in the last
 * `retro_hunt.lookback_days` of stored events, since an indicator published today often matches
 * yesterday's traffic. Live runs match events after each detector's checkpoint with the IoC
 * index as it is then; so a hunt reads each `threat_intel_enabled` detector's events in the
 * range up to its checkpoint when the IoCs arrived (`until`), and matches them against only the
 * new IoCs. Its matches are IoC findings of that detector like live ones (with its alerts).
 *
 * A hunt is a job document (ids of the new IoCs, range, per
 * detector and index the last `_seq_no` read): written before it runs, its cursor saved after each
 * page's findings (findings first, cursor second, so a crash repeats a page and the derived
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
import { eventMatches, MAX_EVENTS_PER_VALUE } from './collect'
import { iocFieldsOf, type IocFieldList, type IocFieldsInput } from './ioc-fields'
import { buildIocFindings, type IocFinding, type IocHit, IOC_INDICES, writeIocFindings } from './ioc-findings'
import { IocIndex } from './ioc-index'
import { entryOf } from './synced-iocs'

const sa = 'plugins.security_analytics.threat_intel.retro_hunt.'
export const RETRO_HUNT_SETTINGS = {
  enabled: `${sa}enabled`,
  lookbackDays: `${sa}lookback_days`,
  eventsPerSecond: `${sa}events_per_second`,
  maxEvents: `${sa}max_events`,
} as const

const MAX_JOB_IOCS = 100_000
const DAY = 86_400_000
const IOC_PAGE = 1_000

export interface RetroJob {
  /** When it was queued: jobs run oldest first. */
  queued_at: number
  ioc_ids: string[]
  range: TimeRange
  started: boolean
  /** Detector -> concrete index -> the checkpoint when the IoCs arrived: live runs matched beyond it. */
  until: Record<string, Record<string, number>>
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
  synced(ids: string[]): void {
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

  private async jobs(): Promise<Array<{ id: string; job: RetroJob }>> {
    await ensureIndex(this.deps.store, TI_RETRO_HUNT_INDEX)
    const r = await this.deps.store.search({ index: TI_RETRO_HUNT_INDEX, body: { size: 100, sort: [{ queued_at: 'asc' }] } })
    return r.hits.hits.map((h) => ({ id: h._id, job: h._source as unknown as RetroJob }))
  }

  private async next() {
    return (await this.jobs())[0]
  }

  private async save(id: string, job: RetroJob): Promise<void> {
    await this.deps.store.index({ index: TI_RETRO_HUNT_INDEX, id, body: job as unknown as Record<string, unknown>, refresh: true })
  }

  private async enqueue(ids: string[], lookbackDays: number): Promise<void> {
    const detectors = await threatIntelDetectors(this.deps.store)
    if (detectors.length === 0) return
    const until: RetroJob['until'] = {}
    for (const { id } of detectors) until[id] = (await loadCheckpoint(this.deps.store, id))?.checkpoint.indices ?? {}
    const now = this.deps.now()
    const waiting = (await this.jobs()).find((j) => !j.job.started && j.job.ioc_ids.length + ids.length <= MAX_JOB_IOCS)
    if (waiting) {
      const job = waiting.job
      await this.save(waiting.id, {
        ...job,
        ioc_ids: [...new Set([...job.ioc_ids, ...ids])],
        until: { ...job.until, ...until },
        range: { ...job.range, to: now },
      })
      return
    }
    const job: RetroJob = {
      queued_at: now,
      ioc_ids: ids,
      range: { from: now - lookbackDays * DAY, to: now },
      started: false,
      until,
      position: {},
      done: [],
      events: 0,
      findings: 0,
    }
    await this.save(crypto.randomUUID(), job)
  }

  /** One job: every detector it names, from its cursor on; deleted once done (kept when the node stops). */
  private async run(id: string, job: RetroJob): Promise<void> {
    if (!job.started) await this.save(id, (job = { ...job, started: true }))
    const iocs = await newIocs(this.deps.store, job.ioc_ids)
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
    await this.deps.store.delete({ index: TI_RETRO_HUNT_INDEX, id, refresh: true })
    this.deps.log.info('retro-hunt done', {
      iocs: job.ioc_ids.length,
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
    for await (const { index, hits } of eventsInRange(this.deps.store, expressions, job.range, {
      position,
      until: job.until[detectorId],
      size,
    })) {
      const paced = Date.now()
      const found = new Map<string, IocHit>()
      for (const hit of hits) {
        for (const m of eventMatches(iocs, fields, hit._source ?? {})) {
          const key = `${m.type}\0${m.value}`
          let h = found.get(key)
          if (!h) found.set(key, (h = { type: m.type, value: m.value, iocIds: m.iocIds, docs: [] }))
          if (h.docs.length < MAX_EVENTS_PER_VALUE) h.docs.push(`${hit._id}:${index}`)
        }
        if (pacer.due()) await pacer.pause()
      }
      // Findings first, cursor second.
      job.findings += await this.write(detectorId, detector, [...found.values()])
      job.events += hits.length
      await this.save(id, job)
      if (job.events >= maxEvents) {
        this.deps.log.warn('retro-hunt stopped at retro_hunt.max_events', { events: job.events, detector: detectorId })
        return true
      }
      if (this.stopping) return false
      const wait = (hits.length / rate) * 1000 - (Date.now() - paced)
      if (wait > 0) await Bun.sleep(wait)
    }
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

/** An IoC index of just these IoCs, read from the store (a restarted job rebuilds it alike). */
async function newIocs(store: Store, ids: string[]): Promise<IocIndex> {
  const index = new IocIndex()
  for (let at = 0; at < ids.length; at += IOC_PAGE) {
    const page = ids.slice(at, at + IOC_PAGE)
    const r = await store.search({
      index: IOC_INDICES,
      expand_wildcards: 'all',
      ignore_unavailable: true,
      body: { query: { ids: { values: page } }, size: page.length, _source: ['document.name', 'document.type', 'scan'] },
    })
    for (const h of r.hits.hits) {
      const entry = entryOf(h._id, h._source)
      if (entry) index.put(entry)
    }
  }
  return index
}

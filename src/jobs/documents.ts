// Job documents in `.svc-content-manager-jobs` (spec background 3 and 9, reference 5.5), in the
// platform job scheduler's interval shape. They describe the schedules for operators and tools;
// the settings are what each run obeys. Reconciling compares the document with the settings and
// creates it, rewrites it (logging old and new values) or leaves it as it is.
import type { Logger } from '../http/log'
import { CONTENT_MANAGER_JOBS_INDEX } from '../setup/indices'
import { IndexNotFound } from '../store/errors'
import type { Store } from '../store/port'

export const CATALOG_SYNC_JOB_ID = 'svc-catalog-sync-job'
export const TELEMETRY_JOB_ID = 'svc-telemetry-ping-job'

export interface JobDocument {
  name: string
  job_type: string
  schedule: { interval: { start_time: number; period: number; unit: 'Minutes' | 'Days' } }
  enabled: boolean
}

export const syncJobDocument = (periodMinutes: number, enabled: boolean, startTime: number): JobDocument => ({
  name: 'Catalog Sync Periodic Task',
  job_type: 'consumer-sync-task',
  schedule: { interval: { start_time: startTime, period: periodMinutes, unit: 'Minutes' } },
  enabled,
})

export const telemetryJobDocument = (startTime: number): JobDocument => ({
  name: 'Telemetry Ping Periodic Task',
  job_type: 'telemetry-ping-task',
  schedule: { interval: { start_time: startTime, period: 1, unit: 'Days' } },
  enabled: true,
})

/** What matters when comparing: everything but the schedule's anchor time. */
const comparable = (d: Partial<JobDocument>) => ({
  name: d.name,
  job_type: d.job_type,
  period: d.schedule?.interval?.period,
  unit: d.schedule?.interval?.unit,
  enabled: d.enabled,
})

export type Reconciled = 'created' | 'rewritten' | 'unchanged'

export async function readJob(store: Store, id: string): Promise<JobDocument | undefined> {
  try {
    const doc = await store.get({ index: CONTENT_MANAGER_JOBS_INDEX, id })
    return doc.found ? (doc._source as unknown as JobDocument) : undefined
  } catch (e) {
    if (e instanceof IndexNotFound) return undefined
    throw e
  }
}

export async function reconcileJob(store: Store, log: Pick<Logger, 'info'>, id: string, desired: JobDocument): Promise<Reconciled> {
  const current = await readJob(store, id)
  if (current && JSON.stringify(comparable(current)) === JSON.stringify(comparable(desired))) return 'unchanged'
  // A rewrite keeps the original anchor: the schedule changed, not when the job was born.
  const anchor = current?.schedule?.interval?.start_time
  const body: JobDocument = anchor ? { ...desired, schedule: { interval: { ...desired.schedule.interval, start_time: anchor } } } : desired
  await store.index({ index: CONTENT_MANAGER_JOBS_INDEX, id, body, refresh: true })
  if (current) log.info('job document changed', { job: id, old: comparable(current), new: comparable(body) })
  else log.info('job document created', { job: id, ...comparable(body) })
  return current ? 'rewritten' : 'created'
}

/** Deletes a job document; false when there was none. */
export async function removeJob(store: Store, id: string): Promise<boolean> {
  try {
    const r = await store.delete({ index: CONTENT_MANAGER_JOBS_INDEX, id, refresh: true })
    return r.result === 'deleted'
  } catch (e) {
    if (e instanceof IndexNotFound || (e as { status?: number }).status === 404) return false
    throw e
  }
}

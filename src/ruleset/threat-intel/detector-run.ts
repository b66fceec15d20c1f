/**
 * The detector flag `threat_intel_enabled` within one detector run: the values of the log type's
 * IoC fields, gathered by the scan in the same pass as the rules (collect.ts), are looked up in the
 * node's IoC index batch by batch, and the run's matches written as IoC findings (one per distinct
 * value per run), with the alerts of the detector's threat-intel triggers, when the run commits,
 * before its checkpoint moves.
 */
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import type { StoredDetector } from '../model'
import { candidateIds, candidateType, type IocCandidates } from './collect'
import { iocFieldsOf, type IocFieldList, type IocFieldsInput } from './ioc-fields'
import { buildIocFindings, type IocFinding, type IocHit, writeIocFindings } from './ioc-findings'
import type { IocIndex } from './ioc-index'
import { MAX_EVENTS_PER_VALUE } from './collect'

/** What a run needs of the node for threat intel. */
export interface ThreatIntelDeps {
  store: Store
  log: Logger
  now: () => number
  /** The node's IoC index, in step with the stored IoCs. */
  iocs: { current(): Promise<IocIndex> }
  /** Raises the alerts of the detector's threat-intel triggers (absent: none). */
  alerts?: { raiseIoc(detectorId: string, detector: StoredDetector, findings: IocFinding[]): Promise<number> }
  /** The log type's own `ioc_fields`, if it has a list. */
  iocFieldsOfLogType(name: string): Promise<IocFieldsInput | undefined>
}

export class DetectorThreatIntel {
  private readonly hits = new Map<string, IocHit>()
  /** Values whose finding this run already wrote. */
  private readonly written = new Set<string>()
  findings = 0
  /** What the scan gathers for it: the values of its IoC fields that the index's filter may hold. */
  readonly scan: { iocFields: IocFieldList; iocFilter: () => SharedArrayBuffer }

  private constructor(
    private readonly deps: ThreatIntelDeps,
    private readonly id: string,
    private readonly detector: StoredDetector,
    readonly fields: IocFieldList,
    private readonly index: IocIndex,
  ) {
    this.scan = { iocFields: fields, iocFilter: () => index.filter.buffer }
  }

  /** The run's threat intel, or undefined when the flag is off or the log type names no IoC field. */
  static async of(deps: ThreatIntelDeps | undefined, id: string, detector: StoredDetector): Promise<DetectorThreatIntel | undefined> {
    if (!deps || !detector.threat_intel_enabled) return undefined
    const fields = iocFieldsOf(detector.detector_type, await deps.iocFieldsOfLogType(detector.detector_type))
    if (fields.length === 0) return undefined
    return new DetectorThreatIntel(deps, id, detector, fields, await deps.iocs.current())
  }

  /** A batch's candidate values of one source index, looked up now. */
  admit(index: string, found: IocCandidates | undefined): void {
    if (!found) return
    for (let k = 0; k < found.values.length; k++) {
      const type = candidateType(found, k)
      const iocIds = this.index.match(type, found.values[k])
      if (iocIds.length === 0) continue
      const key = `${type}\0${found.values[k]}`
      if (this.written.has(key)) continue
      let hit = this.hits.get(key)
      if (!hit) this.hits.set(key, (hit = { type, value: found.values[k], iocIds, docs: [] }))
      for (const doc of candidateIds(found, k)) if (hit.docs.length < MAX_EVENTS_PER_VALUE) hit.docs.push(`${doc}:${index}`)
    }
  }

  /** Writes the findings of the values matched since the last flush. */
  async flush(): Promise<void> {
    if (this.hits.size === 0) return
    const hits = [...this.hits.values()]
    const findings = await buildIocFindings(this.deps.store, hits, {
      detectorId: this.id,
      monitorId: this.detector.monitor_id?.[0] ?? this.id,
      monitorName: this.detector.name,
      now: this.deps.now(),
    })
    // Durable with the run's checkpoint, written after them (as the rules' findings are).
    this.findings += await writeIocFindings(this.deps.store, findings, { durability: 'async' })
    // After their findings and before the checkpoint, as the rules' alerts.
    await this.deps.alerts?.raiseIoc(this.id, this.detector, findings)
    for (const key of this.hits.keys()) this.written.add(key)
    this.hits.clear()
  }
}

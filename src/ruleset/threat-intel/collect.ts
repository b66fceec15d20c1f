/**
 * The IoC side of a detector's pass over a batch: while each event is evaluated against the rules,
 * the values of its IoC fields are gathered, distinct per (type, value) with the events holding
 * them. Matching them against the IoC index happens on the node thread (the index lives there,
 * shared by all detectors, kept in step by the sync); the batch's events are read once either way.
 */
import type { IocFieldList } from './ioc-fields'
import { IOC_TYPES, type IocType } from './ioc-types'
import type { IocIndex } from './ioc-index'
import type { IocHit } from './ioc-findings'
import { IocFilter } from './ioc-filter'
import { DocView, type FieldPath, fieldPath } from '../../store/query'

/** Events named per value at most: a finding lists these, the count stays exact. */
export const MAX_EVENTS_PER_VALUE = 100

/**
 * Distinct (type, value) of a batch, by position, as the evaluator thread sends them: flat arrays,
 * since a structured clone of an array (and a type string) per value cost more than collecting them.
 */
export interface IocCandidates {
  /** Each value's type, as its position in IOC_TYPES. */
  types: Uint8Array
  values: string[]
  /** The events holding each value (at most MAX_EVENTS_PER_VALUE), value after value: see candidateIds. */
  ids: string[]
  ends: Int32Array
  /** How many events hold each value (not bounded). */
  counts: Int32Array
}

/** The events holding value `k` of a batch's candidates. */
export const candidateIds = (c: IocCandidates, k: number): string[] => c.ids.slice(k === 0 ? 0 : c.ends[k - 1], c.ends[k])
export const candidateType = (c: IocCandidates, k: number): IocType => IOC_TYPES[c.types[k]]

/**
 * The string values of an event's field, through nested objects, flat dotted keys and arrays of
 * objects: the field as the rules and the query evaluator read it (one FieldPath per name, walked
 * without building strings). Given the DocView the rules evaluated, a field they read is not walked again.
 */
export function valuesAt(event: Record<string, unknown> | DocView, path: string | FieldPath): string[] {
  const f = typeof path === 'string' ? fieldPath(path) : path
  const raw = event instanceof DocView ? event.valuesOnce(f) : f.collect(event)
  return raw.filter((v): v is string => typeof v === 'string')
}

/** An IoC list with its fields as FieldPaths and a map of the batch's values per type. */
interface GatheredType {
  type: IocType
  code: number
  paths: FieldPath[]
  /** Position of each value already seen (no composed key: a string built per value costs more than the rest). */
  seen: Map<string, number>
}

export class IocCollector {
  private readonly gathered: GatheredType[]
  private types: number[] = []
  private values: string[] = []
  private ids: string[][] = []
  private counts: number[] = []

  constructor(
    list: IocFieldList,
    /** When given, only the values it may hold are gathered (the others match no IoC). */
    private readonly filter?: Pick<IocFilter, 'mayMatch'>,
  ) {
    this.gathered = list.map(({ type, fields }) => ({ type, code: IOC_TYPES.indexOf(type), paths: fields.map(fieldPath), seen: new Map() }))
  }

  /** The values of an event's IoC fields, read through the DocView its rules were evaluated with. */
  collect(id: string, event: Record<string, unknown> | DocView): void {
    const doc = event instanceof DocView ? event : new DocView(event)
    const filter = this.filter
    for (const g of this.gathered)
      for (const path of g.paths) {
        const values = doc.valuesOnce(path)
        for (let i = 0; i < values.length; i++) {
          const value = values[i]
          if (typeof value !== 'string' || (filter && !filter.mayMatch(g.type, value))) continue
          this.add(g, value, id)
        }
      }
  }

  private add(g: GatheredType, value: string, id: string): void {
    let k = g.seen.get(value)
    if (k === undefined) {
      k = this.values.length
      g.seen.set(value, k)
      this.types.push(g.code)
      this.values.push(value)
      this.ids.push([])
      this.counts.push(0)
    }
    const ids = this.ids[k]
    this.counts[k]++
    if (ids.length < MAX_EVENTS_PER_VALUE && ids[ids.length - 1] !== id) ids.push(id)
  }

  /** The batch's candidates (undefined when none), and a fresh start for the next batch. */
  take(): IocCandidates | undefined {
    if (this.values.length === 0) return undefined
    const ends = new Int32Array(this.ids.length)
    let end = 0
    this.ids.forEach((list, k) => (ends[k] = end += list.length))
    const out: IocCandidates = {
      types: Uint8Array.from(this.types),
      values: this.values,
      ids: this.ids.flat(),
      ends,
      counts: Int32Array.from(this.counts),
    }
    this.types = []
    this.values = []
    this.ids = []
    this.counts = []
    for (const g of this.gathered) g.seen.clear()
    return out
  }
}

/** A batch's collector of `list`, keeping only what the IoC index's filter (or its buffer) may hold when given. */
export const collectorOf = (list: IocFieldList, filter?: SharedArrayBuffer | Pick<IocFilter, 'mayMatch'>) =>
  new IocCollector(list, filter instanceof SharedArrayBuffer ? new IocFilter(filter) : filter)

/** A value of an event's IoC field that the index lists. */
export interface EventMatch {
  type: IocType
  value: string
  field: string
  iocIds: string[]
}

/** Each distinct value of an event's IoC fields that `index` lists (an event at a time: previews, retro-hunts). */
export function eventMatches(index: Pick<IocIndex, 'match'>, list: IocFieldList, event: Record<string, unknown>): EventMatch[] {
  const out: EventMatch[] = []
  const seen = new Set<string>()
  for (const { type, fields } of list)
    for (const field of fields)
      for (const value of valuesAt(event, field)) {
        if (seen.has(value)) continue
        seen.add(value)
        const iocIds = index.match(type, value)
        if (iocIds.length > 0) out.push({ type, value, field, iocIds })
      }
  return out
}

/** An event's matches added to a run's hits, one per (type, value), the event named as `doc` (`<id>:<index>`). */
export function addEventHits(
  hits: Map<string, IocHit>,
  index: Pick<IocIndex, 'match'>,
  list: IocFieldList,
  event: Record<string, unknown>,
  doc: string,
): void {
  for (const m of eventMatches(index, list, event)) {
    const key = `${m.type}\0${m.value}`
    let h = hits.get(key)
    if (!h) hits.set(key, (h = { type: m.type, value: m.value, iocIds: m.iocIds, docs: [] }))
    if (h.docs.length < MAX_EVENTS_PER_VALUE) h.docs.push(doc)
  }
}

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

/** The leaves at a dotted path, through nested objects and arrays, or a flat dotted key. */
export function valuesAt(event: Record<string, unknown>, path: string, out: string[] = []): string[] {
  if (path in event) return leaves(event[path], out)
  const dot = path.indexOf('.')
  if (dot < 0) return out
  // Every split point: `a.b.c` may be stored as {a: {b: {c}}}, {"a.b": {c}} or {a: {"b.c"}}.
  for (let d = dot; d >= 0; d = path.indexOf('.', d + 1)) {
    const head = event[path.slice(0, d)]
    const rest = path.slice(d + 1)
    if (Array.isArray(head)) for (const h of head) if (h && typeof h === 'object') valuesAt(h as Record<string, unknown>, rest, out)
    if (head && typeof head === 'object' && !Array.isArray(head)) valuesAt(head as Record<string, unknown>, rest, out)
  }
  return out
}

function leaves(v: unknown, out: string[]): string[] {
  if (typeof v === 'string') out.push(v)
  else if (Array.isArray(v)) for (const x of v) leaves(x, out)
  return out
}

export class IocCollector {
  /** Position of each value already seen, per type (no composed key: a string built per value costs more than the rest). */
  private readonly at = new Map<IocType, Map<string, number>>()
  private types: number[] = []
  private values: string[] = []
  private ids: string[][] = []
  private counts: number[] = []

  constructor(
    private readonly list: IocFieldList,
    /** When given, only the values it may hold are gathered (the others match no IoC). */
    private readonly filter?: Pick<IocFilter, 'mayMatch'>,
  ) {}

  collect(id: string, event: Record<string, unknown>): void {
    const filter = this.filter
    for (const { type, fields } of this.list) {
      let seen = this.at.get(type)
      if (!seen) this.at.set(type, (seen = new Map()))
      for (const field of fields)
        for (const value of valuesAt(event, field)) {
          if (filter && !filter.mayMatch(type, value)) continue
          let k = seen.get(value)
          if (k === undefined) {
            k = this.values.length
            seen.set(value, k)
            this.types.push(IOC_TYPES.indexOf(type))
            this.values.push(value)
            this.ids.push([])
            this.counts.push(0)
          }
          const ids = this.ids[k]
          this.counts[k]++
          if (ids.length < MAX_EVENTS_PER_VALUE && ids[ids.length - 1] !== id) ids.push(id)
        }
    }
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
    this.at.clear()
    return out
  }
}

/** A batch's collector of `list`, keeping only what the IoC index's filter in `filter` may hold when given. */
export const collectorOf = (list: IocFieldList, filter?: SharedArrayBuffer) => new IocCollector(list, filter && new IocFilter(filter))

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

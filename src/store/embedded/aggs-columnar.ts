/**
 * Aggregations over every document of an index, or over the matches of a query the field-value
 * (or text) index answers exactly, without parsing any source: when a search asks only for
 * aggregations (size 0), and every aggregation reads single-valued
 * keyword, number, date or boolean fields, the values come from the field-value index (`fv`,
 * one B-tree range per field) as columns, and one reusable document view hands each row's
 * values to the same aggregators the general path feeds. Anything else (an inexact query, alias filters,
 * a multi-valued document, aggregations that need the source or count duplicate values) takes
 * the general path, so answers are the same either way.
 */
import { kindOf } from '../query/compile'
import { DocView, type FieldPath, isObject } from '../query/doc'
import { FLAT_OBJECT, flatObjectRoot } from '../query/flat-object'
import { type Agg, type Counting, isPipeline, type Key, type TargetCtx } from './aggs'
import type { Pacer } from './pacer'
import { matchesAll } from './plan'

/** Per document, the position of its value in a list of a column's distinct values (-1: none). */
export interface Ordinals {
  ords: Int32Array
  dict: unknown[]
}

/** Per document (in `rid` order), the value of each requested source path; undefined = none. */
export interface Columns {
  count: number
  byPath: Map<string, unknown[]>
  /** The paths of few distinct values, as ordinals too. */
  ordinals?: Map<string, Ordinals>
  /** The positions of the query's matches (ascending); absent: every document. */
  selected?: Int32Array
}

export interface ColumnSource extends TargetCtx {
  filters: unknown[] | null
  /**
   * The columns of the fields, restricted to the query's matches when the field-value index
   * answers the query exactly; undefined when a document holds several values of one of the
   * fields, or the query cannot be answered so.
   */
  columns?(fields: Array<{ field: string; path: string; boolean: boolean }>, query: unknown): Columns | undefined
}

/** Aggregations whose result is the same whether a value is read once or twice per document. */
const ELIGIBLE = new Set([
  'terms',
  'date_histogram',
  'histogram',
  'range',
  'date_range',
  'missing',
  'min',
  'max',
  'cardinality',
  'composite',
])

function fieldsOf(aggs: unknown, out: Set<string>): boolean {
  if (aggs === undefined) return true
  if (!isObject(aggs)) return false
  for (const def of Object.values(aggs)) {
    if (!isObject(def)) return false
    const types = Object.keys(def).filter((k) => k !== 'aggs' && k !== 'aggregations' && k !== 'meta')
    // Pipelines read no field: they only rework the results.
    if (types.length === 1 && isPipeline(types[0])) continue
    if (types.length !== 1 || !ELIGIBLE.has(types[0])) return false
    const params = def[types[0]]
    if (!isObject(params) || params.script !== undefined) return false
    if (types[0] === 'composite') {
      if (!Array.isArray(params.sources)) return false
      for (const s of params.sources) {
        const inner = isObject(s) ? Object.values(s)[0] : undefined
        const body = isObject(inner) ? Object.values(inner)[0] : undefined
        if (!isObject(body) || typeof body.field !== 'string' || body.script !== undefined) return false
        out.add(body.field)
      }
    } else {
      if (typeof params.field !== 'string') return false
      out.add(params.field)
    }
    if (!fieldsOf(def.aggs ?? def.aggregations, out)) return false
  }
  return true
}

export interface ColumnarPlan {
  parts: Array<{ target: TargetCtx; columns: Columns }>
}

/** The columns every target answers for these aggregations, or undefined for the general path. */
export function columnarPlan(query: unknown, aggsBody: unknown, targets: ColumnSource[]): ColumnarPlan | undefined {
  const fields = new Set<string>()
  if (!fieldsOf(aggsBody, fields) || fields.size === 0) return undefined
  const parts: ColumnarPlan['parts'] = []
  for (const target of targets) {
    if (target.filters || !target.columns || !target.specs) return undefined
    const wanted: Array<{ field: string; path: string; boolean: boolean }> = []
    const paths = new Set<string>()
    for (const field of fields) {
      const spec = target.specs.get(field)
      // flat_object leaves (of the root or a path below it) are read from the sources.
      if (spec?.type === FLAT_OBJECT || (!spec && flatObjectRoot(target.specs, field) !== undefined)) return undefined
      if (!spec) continue // unmapped here: the aggregators read nothing from this index either way
      const kind = kindOf(spec.type)
      if (kind !== 'keyword' && kind !== 'number' && kind !== 'date' && kind !== 'boolean') return undefined
      // Multi-fields other than keywords are not in the field-value index (their parent's source is read).
      if (spec.path !== undefined && kind !== 'keyword') return undefined
      // Dates are stored as millis; a format that reads numbers as seconds would read them again.
      if (kind === 'date' && spec.format?.includes('epoch_second')) return undefined
      const path = spec.path ?? field
      if (paths.has(path)) return undefined
      paths.add(path)
      wanted.push({ field, path, boolean: kind === 'boolean' })
    }
    const columns = target.columns(wanted, matchesAll(query) ? undefined : query)
    if (!columns) return undefined
    parts.push({ target, columns })
  }
  return { parts }
}

const EMPTY: unknown[] = []

/** A document view over one row of the columns; `at` moves it. */
class ColumnDoc extends DocView {
  at = 0
  constructor(private readonly byPath: Map<string, unknown[]>) {
    super({})
  }
  private lastPath?: FieldPath
  private lastColumn?: unknown[]
  override values(f: FieldPath): unknown[] {
    if (f !== this.lastPath) {
      this.lastPath = f
      this.lastColumn = this.byPath.get(f.path)
    }
    const v = this.lastColumn?.[this.at]
    return v === undefined ? EMPTY : [v]
  }
}

/** Feeds every row to the aggregators; answers the number of documents. */
export async function collectColumnar(plan: ColumnarPlan, aggs: Map<string, Agg>, pace: Pacer): Promise<number> {
  let total = 0
  const list = [...aggs.values()]
  for (const { target, columns } of plan.parts) {
    const selected = columns.selected
    const n = selected ? selected.length : columns.count
    const counted = await countColumns(list, columns, target, pace)
    if (counted === 'timeout') return total
    if (counted) {
      total += n
      continue
    }
    const doc = new ColumnDoc(columns.byPath)
    for (let i = 0; i < n; i++) {
      if ((i & 1023) === 0 && pace.due() && !(await pace.pause())) return total
      doc.at = selected ? selected[i] : i
      for (const a of list) a.collect(doc, target)
      total++
    }
  }
  return total
}

/**
 * Aggregations that only count documents per bucket (terms, histogram and date_histogram, with
 * sub-aggregations of those kinds one level down), counted in one pass over the columns: a key
 * per distinct value or run of values rather than per document, then the counts handed to the
 * aggregations (Counting), which answer as if fed every document. False where one of them
 * cannot be counted so.
 */
async function countColumns(aggs: Agg[], columns: Columns, target: TargetCtx, pace: Pacer): Promise<boolean | 'timeout'> {
  const tops: Array<{ counting: Counting; subs: Array<{ name: string; counting: Counting }> }> = []
  for (const agg of aggs) {
    if (agg.late) continue // a sibling pipeline: nothing to count
    const counting = agg.counting?.(target)
    if (!counting) return false
    const subs: Array<{ name: string; counting: Counting }> = []
    for (const [name, sub] of counting.subs()) {
      if (sub.late) continue
      const c = sub.counting?.(target)
      if (!c || c.subs().size > 0) return false
      subs.push({ name, counting: c })
    }
    tops.push({ counting, subs })
  }
  for (const { counting, subs } of tops) {
    const top = new Keyer(counting, columns)
    const below = subs.map((s) => new Keyer(s.counting, columns))
    // Per top bucket, per sub-aggregation, the documents per sub key number.
    const cells: Array<Array<Cells>> = []
    const counts: number[] = []
    const selected = columns.selected
    const n = selected ? selected.length : columns.count
    for (let i = 0; i < n; i++) {
      if ((i & 65535) === 65535 && pace.due() && !(await pace.pause())) return 'timeout'
      const at = selected ? selected[i] : i
      const k = top.at(at)
      if (k < 0) continue
      if (counts[k] === undefined) {
        counts[k] = 0
        cells[k] = below.map((b) => b.cells())
      }
      counts[k]++
      for (let s = 0; s < below.length; s++) {
        const j = below[s].at(at)
        if (j < 0) continue
        const m = cells[k][s]
        if (m instanceof Int32Array) m[j]++
        else m.set(j, (m.get(j) ?? 0) + 1)
      }
    }
    counts.forEach((count, k) => {
      const bucket = counting.add(top.keys[k], count)
      subs.forEach(({ name }, s) => {
        const c = bucket.get(name)!.counting!(target)!
        const m = cells[k][s]
        if (m instanceof Int32Array) m.forEach((docs, j) => docs > 0 && c.add(below[s].keys[j], docs))
        else for (const [j, docs] of m) c.add(below[s].keys[j], docs)
      })
    })
  }
  return true
}

/** Documents per key number: an array when the numbers are bounded (a column's ordinals), else a map. */
type Cells = Int32Array | Map<number, number>

/** Documents' bucket keys, numbered in order of appearance: once per ordinal, or per run of values in one bucket. */
class Keyer {
  readonly keys: Key[] = []
  private readonly numbers = new Map<Key, number>()
  private readonly values: unknown[]
  private readonly ords?: Int32Array
  /** Per ordinal, its key's number (-2: not known yet, -1: none). */
  private readonly byOrd?: Int32Array
  private readonly dict?: unknown[]
  private runFrom = 1
  private runTo = 0
  private runKey = -1

  constructor(
    private readonly counting: Counting,
    columns: Columns,
  ) {
    this.values = columns.byPath.get(counting.path) ?? []
    const ordinals = columns.ordinals?.get(counting.path)
    if (ordinals) {
      this.ords = ordinals.ords
      this.dict = ordinals.dict
      this.byOrd = new Int32Array(ordinals.dict.length).fill(-2)
    }
  }

  cells(): Cells {
    return this.dict ? new Int32Array(this.dict.length) : new Map()
  }

  private number(key: Key | undefined): number {
    if (key === undefined) return -1
    let k = this.numbers.get(key)
    if (k === undefined) {
      this.numbers.set(key, (k = this.keys.length))
      this.keys.push(key)
    }
    return k
  }

  /** The key number of the document at a position (-1: no bucket). */
  at(i: number): number {
    if (this.ords) {
      const o = this.ords[i]
      if (o < 0) return -1
      let k = this.byOrd![o]
      if (k === -2) this.byOrd![o] = k = this.number(this.counting.key(this.dict![o]))
      return k
    }
    const v = this.values[i]
    if (v === undefined) return -1
    const whole = typeof v === 'number' && Number.isInteger(v)
    if (whole && v >= this.runFrom && v < this.runTo) return this.runKey
    const key = this.counting.key(v)
    const k = this.number(key)
    if (whole && this.counting.end && typeof key === 'number') {
      this.runFrom = key
      this.runTo = this.counting.end(key)
      this.runKey = k
    }
    return k
  }
}

/**
 * A column's values, and for few distinct values each document's ordinal in their list (-1:
 * none); `nextRid`: the documents it holds are those before.
 */
export interface Column {
  values: unknown[]
  ordinals?: Ordinals
  nextRid: number
  /** A numeric column's values as doubles (NaN where a document has none), made when a range first reads it. */
  numbers?: Float64Array
}

/** Where each document's values sit in a column: `position[rid - lo]`, or `rid - lo` itself without deletions. */
export interface ColumnLayout {
  lo: number
  count: number
  position?: Int32Array
  nextRid: number
}

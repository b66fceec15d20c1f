/**
 * `adjacency_matrix`: a bucket per named filter and per pair of filters (`A&B`, names in order),
 * each holding the documents that match them all; empty buckets are left out and buckets come
 * in key order, as OpenSearch answers them.
 */
import { IllegalArgument, ParsingError } from '../errors'
import { compile, type Test } from '../query/compile'
import { compareCodePoints } from '../query/fold'
import { type DocView, isObject } from '../query/doc'
import { type Agg, type AggSpec, type BucketBudget, defineCheckedAgg, instantiate, results, type TargetCtx } from './aggs'

/** `index.max_adjacency_matrix_filters`: OpenSearch's bound on the filters of one aggregation. */
const MAX_FILTERS = 100

interface Cell {
  key: string
  filters: number[]
  count: number
  subs: Map<string, Agg>
}

class AdjacencyMatrixAgg implements Agg {
  private readonly names: string[]
  private readonly queries: unknown[]
  private readonly tests = new Map<string, Test[]>()
  private readonly cells: Cell[] = []

  constructor(
    private readonly spec: AggSpec,
    budget?: BucketBudget,
  ) {
    const p = spec.params
    if (!isObject(p.filters)) throw new ParsingError(`[filters] must be an object in [${spec.name}]`)
    const entries = Object.entries(p.filters).sort(([a], [b]) => compareCodePoints(a, b))
    if (entries.length > MAX_FILTERS)
      throw new IllegalArgument(
        `Number of filters is too large, must be less than or equal to: [${MAX_FILTERS}] but was [${entries.length}].This limit can be set by changing the [index.max_adjacency_matrix_filters] index level setting.`,
      )
    this.names = entries.map(([name]) => name)
    this.queries = entries.map(([, q]) => q)
    for (const q of this.queries) compile(q, undefined, { now: spec.now }) // malformed filters fail up front
    const separator = typeof p.separator === 'string' ? p.separator : '&'
    const subs = spec.subs()
    const cell = (filters: number[]): Cell => {
      budget?.add()
      return { key: filters.map((i) => this.names[i]).join(separator), filters, count: 0, subs: instantiate(subs, budget) }
    }
    // `show_only_intersecting`: the pairs alone.
    const single = p.show_only_intersecting !== true
    for (let i = 0; i < this.names.length; i++) {
      if (single) this.cells.push(cell([i]))
      for (let j = i + 1; j < this.names.length; j++) this.cells.push(cell([i, j]))
    }
  }

  collect(d: DocView, t: TargetCtx): void {
    let tests = this.tests.get(t.name)
    if (!tests) this.tests.set(t.name, (tests = this.queries.map((q) => compile(q, t.specs, { now: this.spec.now }).test)))
    const matched = tests.map((test) => test(d))
    for (const c of this.cells) {
      if (!c.filters.every((i) => matched[i])) continue
      c.count++
      for (const sub of c.subs.values()) sub.collect(d, t)
    }
  }

  result(): Record<string, unknown> {
    const shown = this.cells.filter((c) => c.count > 0).sort((a, b) => compareCodePoints(a.key, b.key))
    return { buckets: shown.map((c) => ({ key: c.key, doc_count: c.count, ...results(c.subs) })) }
  }
}

defineCheckedAgg('adjacency_matrix', (spec, budget) => new AdjacencyMatrixAgg(spec, budget))

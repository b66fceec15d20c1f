/**
 * `nested` and `reverse_nested`: a bucket of the nested documents under a path (each object a
 * document, its sub-aggregations reading the path's fields alone), and from inside one a bucket
 * of the documents holding them (the root's, or an enclosing nested path's), as OpenSearch's.
 */
import { ParsingError, ShardsFailed } from '../errors'
import type { DocView } from '../query/doc'
import { NestedDoc, nestedDocs, nestedPathKind, scopedSpecs } from '../query/nested'
import { type Agg, type AggSpec, type BucketBudget, defineCheckedAgg, instantiate, results, type TargetCtx } from './aggs'

/** The documents of a nested path as its sub-aggregations see them; `outer`: the documents holding them. */
interface ScopeCtx extends TargetCtx {
  scope: string
  outer: TargetCtx
}

const scopeOf = (t: TargetCtx): string => (t as Partial<ScopeCtx>).scope ?? ''

/** A path's scope inside `t` (one per index read, so the sub-aggregations' per-index caches hold); undefined: unmapped there. */
function enter(t: TargetCtx, path: string, agg: string, made: Map<TargetCtx, ScopeCtx | undefined>): ScopeCtx | undefined {
  if (made.has(t)) return made.get(t)
  let inner: ScopeCtx | undefined
  const kind = t.specs ? nestedPathKind(t.specs, path) : 'nested'
  // OpenSearch fails the shard (500); the request is at fault, so its words with a 400 here.
  if (kind === 'object') throw new ShardsFailed('aggregation_execution_exception', `[${agg}] nested path [${path}] is not nested`, t.name)
  if (kind === 'nested')
    inner = {
      name: t.name,
      shards: t.shards,
      sourceDisabled: t.sourceDisabled,
      specs: t.specs && scopedSpecs(t.specs, path),
      scope: path,
      outer: t,
    }
  made.set(t, inner)
  return inner
}

class NestedAgg implements Agg {
  private count = 0
  private readonly subs: Map<string, Agg>
  private readonly path: string
  private readonly scopes = new Map<TargetCtx, ScopeCtx | undefined>()

  constructor(spec: AggSpec, budget?: BucketBudget) {
    if (typeof spec.params.path !== 'string') throw new ParsingError(`Missing [path] field for nested aggregation [${spec.name}]`)
    this.path = spec.params.path
    this.subs = instantiate(spec.subs(), budget)
  }

  collect(d: DocView, t: TargetCtx): void {
    const inner = enter(t, this.path, 'nested', this.scopes)
    if (!inner) return
    for (const n of nestedDocs(d, this.path)) {
      this.count++
      for (const s of this.subs.values()) s.collect(n, inner)
    }
  }

  result(): Record<string, unknown> {
    return { doc_count: this.count, ...results(this.subs) }
  }
}

class ReverseNestedAgg implements Agg {
  private count = 0
  private readonly subs: Map<string, Agg>
  private readonly path: string | undefined
  /** The last document collected: a bucket's nested documents of one parent come one after another, and count it once. */
  private last?: DocView

  constructor(
    private readonly spec: AggSpec,
    budget?: BucketBudget,
  ) {
    const path = spec.params.path
    if (path !== undefined && typeof path !== 'string') throw new ParsingError(`[reverse_nested] [path] must be a string`)
    this.path = path
    this.subs = instantiate(spec.subs(), budget)
  }

  collect(d: DocView, t: TargetCtx): void {
    if (!(d instanceof NestedDoc))
      throw new ShardsFailed(
        'illegal_argument_exception',
        `Reverse nested aggregation [${this.spec.name}] can only be used inside a [nested] aggregation`,
        t.name,
      )
    const to = this.target(d, t)
    if (!to || to.doc === this.last) return
    this.last = to.doc
    this.count++
    for (const s of this.subs.values()) s.collect(to.doc, to.t)
  }

  /** The enclosing document of `path` (the root without one) and its scope; undefined: the path is unmapped or not around it. */
  private target(d: NestedDoc, t: TargetCtx): { doc: DocView; t: TargetCtx } | undefined {
    const path = this.path ?? ''
    if (path !== '' && t.specs) {
      const kind = nestedPathKind(t.specs, path)
      if (kind === 'object')
        throw new ShardsFailed('aggregation_execution_exception', `[reverse_nested] nested path [${path}] is not nested`, t.name)
      if (kind === 'unmapped') return undefined
    }
    let doc: DocView = d
    let at: TargetCtx = t
    while (scopeOf(at) !== path) {
      if (!(doc instanceof NestedDoc) || scopeOf(at) === '') return undefined
      doc = doc.parent
      at = (at as ScopeCtx).outer
    }
    return { doc, t: at }
  }

  result(): Record<string, unknown> {
    return { doc_count: this.count, ...results(this.subs) }
  }
}

defineCheckedAgg('nested', (spec, budget) => new NestedAgg(spec, budget))
defineCheckedAgg('reverse_nested', (spec, budget) => new ReverseNestedAgg(spec, budget))

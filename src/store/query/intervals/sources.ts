/**
 * Lucene's IntervalsSource tree (org.apache.lucene.queries.intervals.Intervals and its sources),
 * with Lucene's (10.3) rewrites as it builds them: nested phrases flattened, repeated sub-sources
 * counted once with a repeat count, and disjunctions pulled up to the top of sources
 * that are sensitive to internal gaps (phrase, max gaps, containing...) so that minimization does
 * not hide matches. A source's `key` is its identity (Lucene's equals), which those rewrites use.
 * `iterator` makes the source's iterator on one document.
 */
import { QueryShardError, ShardsFailed } from '../../errors'
import {
  BlockIterator,
  DifferenceIterator,
  type Difference,
  FilteringIterator,
  OrderedIterator,
  type Relation,
  UnorderedIterator,
} from './conjunctions'
import {
  DisjunctionIterator,
  DuplicateIterator,
  ExtendedIterator,
  FilterIterator,
  type IntervalIterator,
  NO_MORE,
  OffsetIterator,
  TermIterator,
} from './iterators'

/** The positions of each term of a field in one document (of `index`, when searched in one). */
export interface DocTerms {
  readonly index?: string
  terms(field: string): ReadonlyMap<string, readonly number[]>
}

export abstract class Source {
  /** Its identity (Lucene's equals), of bounded length however deep: pulled-up trees share parts. */
  abstract readonly key: string
  /** A term or multi-term source: what IndexSearcher's clause count counts. */
  readonly leaf: boolean = false
  private extent?: number
  abstract iterator(doc: DocTerms): IntervalIterator
  /** The least width of its intervals (remembered: parts are shared, a walk would be exponential). */
  minExtent(): number {
    return (this.extent ??= this.leastWidth())
  }
  protected abstract leastWidth(): number
  /** The sources it is made of, in Lucene's visit order. */
  parts(): readonly Source[] {
    return []
  }
  /** Lucene's pullUpDisjunctions (`max`: the clause limit a pull-up may not exceed). */
  pullUp(_max: number): Source[] {
    return [this]
  }
}

/** A source's key from its kind and its parts' keys (hashed: parts repeat in pulled-up trees). */
const keyOf = (kind: string, parts: ReadonlyArray<string | number>): string => `${kind}:${Bun.hash(parts.join('\u0000')).toString(36)}`

const none = (): IntervalIterator => new TermIterator([])

class TermSource extends Source {
  readonly key: string
  constructor(
    private readonly field: string,
    private readonly term: string,
  ) {
    super()
    this.key = keyOf('TERM', [field, term])
  }
  protected leastWidth(): number {
    return 1
  }
  override readonly leaf = true
  iterator(doc: DocTerms): IntervalIterator {
    return new TermIterator(doc.terms(this.field).get(this.term) ?? [])
  }
}

/** What a multi-term source matches, and how many terms it may stand for. */
export interface Expansion {
  /** The pattern as Lucene names it in its error. */
  name: string
  accepts(term: string): boolean
  max: number
  /** The terms found so far over the documents read (one search), or undefined to count per document only. */
  seen?: Set<string>
}

/** MultiTermIntervalsSource: any term the pattern accepts, refused past `max` terms as Lucene refuses them. */
class MultiTermSource extends Source {
  readonly key: string
  constructor(
    private readonly field: string,
    private readonly x: Expansion,
  ) {
    super()
    this.key = keyOf('MULTI', [field, x.name, x.max])
  }
  protected leastWidth(): number {
    return 1
  }
  override readonly leaf = true
  iterator(doc: DocTerms): IntervalIterator {
    const subs: IntervalIterator[] = []
    for (const [term, positions] of doc.terms(this.field)) {
      if (!this.x.accepts(term)) continue
      this.x.seen?.add(term)
      subs.push(new TermIterator(positions))
      if (subs.length > this.x.max || (this.x.seen?.size ?? 0) > this.x.max)
        // Lucene's IllegalStateException: the shard fails (OpenSearch answers 500; bad input is a 400 here).
        throw new ShardsFailed(
          'illegal_state_exception',
          `Automaton [${this.x.name}] expanded to too many terms (limit ${this.x.max})`,
          doc.index ?? '',
        )
    }
    return subs.length === 0 ? none() : new DisjunctionIterator(subs)
  }
}

class DisjunctionSource extends Source {
  readonly key: string
  constructor(readonly subs: Source[]) {
    super()
    this.key = keyOf('OR', subs.map((s) => s.key).sort())
  }
  protected leastWidth(): number {
    return this.subs.reduce((m, s) => Math.min(m, s.minExtent()), NO_MORE)
  }
  /** Intervals.or rewrites: its alternatives are pulled up through the sources around it. */
  override pullUp(): Source[] {
    return this.subs
  }
  override parts(): readonly Source[] {
    return this.subs
  }
  iterator(doc: DocTerms): IntervalIterator {
    return this.subs.length === 0 ? none() : new DisjunctionIterator(this.subs.map((s) => s.iterator(doc)))
  }
}

/** The sources of an ordered, unordered or block (phrase) conjunction. */
abstract class ConjunctionSource extends Source {
  readonly key: string
  constructor(
    readonly subs: Source[],
    name: string,
  ) {
    super()
    this.key = keyOf(
      name,
      subs.map((s) => s.key),
    )
  }
  protected leastWidth(): number {
    return this.subs.reduce((n, s) => n + s.minExtent(), 0)
  }
  override parts(): readonly Source[] {
    return this.subs
  }
}

class OrderedSource extends ConjunctionSource {
  constructor(subs: Source[]) {
    super(subs, 'ORDERED')
  }
  override pullUp(max: number): Source[] {
    return pullUpList(this.subs, (l) => new OrderedSource(l), max)
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new OrderedIterator(this.subs.map((s) => s.iterator(doc)))
  }
}

class UnorderedSource extends ConjunctionSource {
  constructor(subs: Source[]) {
    super(subs, 'UNORDERED')
  }
  override pullUp(max: number): Source[] {
    return pullUpList(this.subs, (l) => new UnorderedSource(l), max)
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new UnorderedIterator(this.subs.map((s) => s.iterator(doc)))
  }
}

class BlockSource extends ConjunctionSource {
  constructor(subs: Source[]) {
    super(
      subs.flatMap((s) => (s instanceof BlockSource ? s.subs : [s])),
      'BLOCK',
    )
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new BlockIterator(this.subs.map((s) => s.iterator(doc)))
  }
}

class RepeatingSource extends Source {
  readonly key: string
  constructor(
    private readonly inner: Source,
    private readonly count: number,
  ) {
    super()
    this.key = keyOf('REPEAT', [count, inner.key])
  }
  protected leastWidth(): number {
    return this.inner.minExtent()
  }
  override parts(): readonly Source[] {
    return [this.inner]
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new DuplicateIterator(this.inner.iterator(doc), this.count)
  }
}

const repeating = (s: Source, count: number): Source => (count === 1 ? s : new RepeatingSource(s, count))

class ExtendedSource extends Source {
  readonly key: string
  constructor(
    private readonly inner: Source,
    private readonly before: number,
    private readonly after: number,
  ) {
    super()
    this.key = keyOf('EXTEND', [inner.key, before, after])
  }
  protected leastWidth(): number {
    const extent = this.before + this.inner.minExtent() + this.after
    return extent >= NO_MORE ? NO_MORE : extent // Java's overflow to a negative, read as "unbounded"
  }
  override pullUp(max: number): Source[] {
    const inner = this.inner.pullUp(max)
    if (inner.length === 0) return [this]
    return distinct(inner.map((s) => new ExtendedSource(s, this.before, this.after)))
  }
  override parts(): readonly Source[] {
    return [this.inner]
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new ExtendedIterator(this.inner.iterator(doc), this.before, this.after)
  }
}

class OffsetSource extends Source {
  readonly key: string
  constructor(
    private readonly inner: Source,
    private readonly before: boolean,
  ) {
    super()
    this.key = keyOf(before ? 'PRECEDING' : 'FOLLOWING', [inner.key])
  }
  protected leastWidth(): number {
    return 1
  }
  override parts(): readonly Source[] {
    return [this.inner]
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new OffsetIterator(this.inner.iterator(doc), this.before)
  }
}

class MaxGapsSource extends Source {
  readonly key: string
  constructor(
    private readonly inner: Source,
    private readonly gaps: number,
  ) {
    super()
    this.key = keyOf('MAXGAPS', [gaps, inner.key])
  }
  protected leastWidth(): number {
    return this.inner.minExtent()
  }
  override parts(): readonly Source[] {
    return [this.inner]
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new FilterIterator(this.inner.iterator(doc), (it) => it.gaps() <= this.gaps)
  }
}

/** CONTAINING(big, small), CONTAINED_BY(small, big), OVERLAPPING(source, reference): intervals of `a` related to some of `b`. */
class RelationSource extends Source {
  readonly key: string
  constructor(
    private readonly relation: Relation,
    private readonly a: Source,
    private readonly b: Source,
  ) {
    super()
    this.key = keyOf(relation, [a.key, b.key])
  }
  protected leastWidth(): number {
    return this.a.minExtent()
  }
  override pullUp(max: number): Source[] {
    const { relation, a, b } = this
    if (relation === 'containing') return pullUpOne(a, (s) => new RelationSource(relation, s, b), max)
    if (relation === 'contained_by') return pullUpOne(b, (s) => new RelationSource(relation, a, s), max)
    return pullUpList([a, b], ([x, y]) => new RelationSource(relation, x, y), max)
  }
  override parts(): readonly Source[] {
    return [this.a, this.b]
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new FilteringIterator(this.a.iterator(doc), this.b.iterator(doc), this.relation)
  }
}

/** NOT_CONTAINING, NOT_CONTAINED_BY, NON_OVERLAPPING: intervals of the minuend `a` unrelated to all of `b`. */
class DifferenceSource extends Source {
  readonly key: string
  constructor(
    private readonly difference: Difference,
    private readonly a: Source,
    private readonly b: Source,
  ) {
    super()
    this.key = keyOf(difference, [a.key, b.key])
  }
  protected leastWidth(): number {
    return this.a.minExtent()
  }
  override parts(): readonly Source[] {
    return [this.a, this.b]
  }
  iterator(doc: DocTerms): IntervalIterator {
    return new DifferenceIterator(this.a.iterator(doc), this.b.iterator(doc), this.difference)
  }
}

/** OpenSearch's NO_INTERVALS (a match rule whose text analyses to no term, an all_of of nothing). */
class NoIntervals extends Source {
  readonly key = 'NO_INTERVALS'
  protected leastWidth(): number {
    return 0
  }
  override pullUp(): Source[] {
    return []
  }
  iterator(): IntervalIterator {
    return none()
  }
}

export const NO_INTERVALS: Source = new NoIntervals()

function distinct(sources: Source[]): Source[] {
  const seen = new Map<string, Source>()
  for (const s of sources) if (!seen.has(s.key)) seen.set(s.key, s)
  return [...seen.values()]
}

/** Disjunctions.splitDisjunctions: a source's disjuncts, those of extent 1 (terms) kept together as one. */
function splitDisjunctions(source: Source, max: number): Source[] {
  const singletons: Source[] = []
  const others: Source[] = []
  for (const d of source.pullUp(max)) (d.minExtent() === 1 ? singletons : others).push(d)
  return singletons.length > 0 ? [or(singletons), ...others] : others
}

/** Disjunctions.pullUp over a list: FUNC(a, OR(b, c)) -> [FUNC(a, b), FUNC(a, c)]. */
function pullUpList(sources: Source[], make: (list: Source[]) => Source, max: number): Source[] {
  let rewritten: Source[][] = [[]]
  for (const source of sources) {
    const disjuncts = splitDisjunctions(source, max)
    if (disjuncts.length === 1) {
      for (const l of rewritten) l.push(disjuncts[0])
      continue
    }
    if (rewritten.length * disjuncts.length > max) throw new QueryShardError('failed to create query: Too many disjunctions to expand')
    rewritten = disjuncts.flatMap((d) => rewritten.map((l) => [...l, d]))
  }
  return rewritten.map(make)
}

function pullUpOne(source: Source, make: (s: Source) => Source, max: number): Source[] {
  return splitDisjunctions(source, max).map(make)
}

export const term = (field: string, text: string): Source => new TermSource(field, text)
export const multiTerm = (field: string, x: Expansion): Source => new MultiTermSource(field, x)

/** Intervals.or: DisjunctionIntervalsSource.create (nested disjunctions taken in, duplicates once). */
export function or(subs: Source[]): Source {
  const simplified = distinct(subs.flatMap((s) => (s instanceof DisjunctionSource ? s.pullUp() : [s])))
  return simplified.length === 1 ? simplified[0] : new DisjunctionSource(simplified)
}

/** The sources combining sub-sources, and the filters, with Lucene's rewrites (`max`: the clause limit). */
export class Builder {
  constructor(private readonly max: number) {}

  phrase(subs: Source[]): Source {
    if (subs.length === 1) return subs[0]
    return or(pullUpList(subs, (l) => new BlockSource(l), this.max))
  }

  ordered(subs: Source[]): Source {
    if (subs.length === 1) return subs[0]
    // Runs of one source become one repeated source. Nested ordered sources stay nested (Lucene
    // stopped flattening them in 10.1: that changed the gaps their parents see).
    const runs: Array<[Source, number]> = []
    for (const s of subs) {
      const last = runs[runs.length - 1]
      if (last && last[0].key === s.key) last[1]++
      else runs.push([s, 1])
    }
    const rewritten = runs.map(([s, n]) => repeating(s, n))
    return rewritten.length === 1 ? rewritten[0] : new OrderedSource(rewritten)
  }

  unordered(subs: Source[]): Source {
    if (subs.length === 1) return subs[0]
    const counts = new Map<string, [Source, number]>()
    for (const s of subs) {
      const c = counts.get(s.key)
      if (c) c[1]++
      else counts.set(s.key, [s, 1])
    }
    const rewritten = [...counts.values()].map(([s, n]) => repeating(s, n))
    return rewritten.length === 1 ? rewritten[0] : new UnorderedSource(rewritten)
  }

  unorderedNoOverlaps(a: Source, b: Source): Source {
    return or([this.ordered([a, b]), this.ordered([b, a])])
  }

  maxGaps(gaps: number, source: Source): Source {
    return or(source.pullUp(this.max).map((s) => new MaxGapsSource(s, gaps)))
  }

  /** The interval filter `type` (OpenSearch's IntervalFilter names) of `source` by `other`. */
  filter(type: string, source: Source, other: Source): Source {
    const max = this.max
    switch (type) {
      case 'containing':
        return or(pullUpOne(source, (s) => new RelationSource('containing', s, other), max))
      case 'contained_by':
        return this.containedBy(source, other)
      case 'not_containing':
        return or(pullUpOne(source, (s) => new DifferenceSource('not_containing', s, other), max))
      case 'not_contained_by':
        return or(pullUpOne(other, (s) => new DifferenceSource('not_contained_by', source, s), max))
      case 'overlapping':
        return new RelationSource('overlapping', source, other)
      case 'not_overlapping':
        return new DifferenceSource('non_overlapping', source, other)
      case 'before':
        return this.containedBy(source, new ExtendedSource(new OffsetSource(other, true), NO_MORE, 0))
      case 'after':
        return this.containedBy(source, new ExtendedSource(new OffsetSource(other, false), 0, NO_MORE))
      default:
        throw new QueryShardError(`failed to create query: Unknown filter type [${type}]`)
    }
  }

  private containedBy(small: Source, big: Source): Source {
    return or(pullUpOne(big, (s) => new RelationSource('contained_by', small, s), this.max))
  }
}

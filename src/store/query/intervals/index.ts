/**
 * OpenSearch's `intervals` query on documents: the rules (parse.ts) become Lucene's intervals
 * source (build.ts, sources.ts), whose iterator runs over the positions of the field's terms in
 * each document (iterators.ts, conjunctions.ts). A document matches when the source has an
 * interval there; it scores as Lucene's IntervalQuery scores it: the saturation (pivot 1) of the
 * sloppy frequency, the sum over its intervals of 1 / (width - the source's least width + 1).
 */
import { IllegalArgument, StoreError } from '../../errors'
import { type DocView, fieldPath, keywordOf } from '../doc'
import type { FieldSpec } from '../field-spec'
import { analyze } from '../analysis'
import { DEFAULT_QUERY_LIMITS, type QueryLimits } from '../limits'
import { SourceBuilder } from './build'
import { type IntervalIterator, NO_MORE } from './iterators'
import { parseIntervals } from './parse'
import { requiredOf } from './required'
import type { DocTerms, Source } from './sources'

interface CompiledIntervals {
  name?: string
  /** Whether the field has an interval of the rule in the document. */
  test(d: DocView): boolean
  /** Lucene's score of the document (0 where it does not match). */
  score(d: DocView): number
}

/**
 * `{"intervals": {field: {rule, boost, _name}}}` compiled against a mapping (none: every field is
 * text). `limits` (a caller's search) counts each multi-term rule's terms over the whole search, as
 * Lucene counts them over the index's terms; without, per document only.
 */
export function compileIntervals(body: unknown, types?: ReadonlyMap<string, FieldSpec>, limits?: QueryLimits): CompiledIntervals {
  const q = parseIntervals(body)
  const maxClauses = limits?.maxClauseCount ?? DEFAULT_QUERY_LIMITS.maxClauseCount
  const b = new SourceBuilder({ types, maxClauses, perSearch: limits !== undefined })
  const at = b.place(q.field)
  // OpenSearch is lenient with unmapped fields (a search over several indices): no match, nothing built.
  if (at === undefined || !b.useFieldsMapped(q.rule)) return { name: q.name, test: () => false, score: () => 0 }
  const source = b.build(q.rule, at)
  checkClauses(source, maxClauses)
  const minExtent = source.minExtent()
  return {
    name: q.name,
    test: (d) => source.iterator(positionsOf(d)).nextInterval() !== NO_MORE,
    score: (d) => saturation(sloppyFreq(source.iterator(positionsOf(d)), minExtent), q.boost),
  }
}

/**
 * The field of the query and the terms every document it matches holds there (required.ts), for
 * the store's planner; undefined when it cannot tell (a multi-term rule, an unmapped field).
 * Throws as compileIntervals does on a malformed query.
 */
export function intervalsCandidates(body: unknown, types: ReadonlyMap<string, FieldSpec>): { field: string; terms: string[] } | undefined {
  const q = parseIntervals(body)
  const need = types.has(q.field) ? requiredOf(q.rule) : undefined
  return need && { field: q.field, terms: [...need] }
}

/**
 * IndexSearcher's count of a query's clauses, which every term of the (pulled-up) source adds to:
 * it refuses the query at the first leaf past more than the limit (OpenSearch fails the shard with
 * a 500; bad input is a 400 here, as the other queries' clause limit). The walk also bounds the sources an iterator is made of on each document: parts are shared
 * (unordered_no_overlap nests its previous source twice), and without terms they count no clause.
 */
function checkClauses(source: Source, max: number): void {
  let leaves = 0
  let nodes = 0
  const walk = (s: Source) => {
    if (++nodes > MAX_NODES_PER_CLAUSE * max) throw new IllegalArgument('[intervals] the query expands to too many interval sources')
    if (s.leaf) {
      if (leaves > max)
        throw new StoreError('too_many_nested_clauses', 400, `Query contains too many nested clauses; maxClauseCount is set to ${max}`)
      leaves++
    }
    for (const p of s.parts()) walk(p)
  }
  walk(source)
}

/** Sources per clause an intervals query may expand to (each is an iterator on each document). */
const MAX_NODES_PER_CLAUSE = 64

/** IntervalScorer's frequency: each interval weighs 1 / (its width - minExtent + 1), a double added to the float sum. */
function sloppyFreq(it: IntervalIterator, minExtent: number): number {
  let freq = 0
  if (it.nextInterval() === NO_MORE) return freq
  do {
    const length = it.end() - it.start() + 1
    freq = Math.fround(freq + 1 / Math.max(length - minExtent + 1, 1))
  } while (it.nextInterval() !== NO_MORE)
  return freq
}

/** IntervalScoreFunction's saturation with pivot 1: weight * (1 - pivot / (pivot + freq)). */
function saturation(freq: number, weight: number): number {
  if (freq === 0) return 0
  return Math.fround(weight * Math.fround(1 - Math.fround(1 / Math.fround(1 + freq))))
}

/** Lucene's position_increment_gap between the values of a text field. */
const POSITION_GAP = 100

/** The positions of a document's terms, by field path, made once per document. */
class Positions implements DocTerms {
  private readonly byPath = new Map<string, Map<string, number[]>>()
  readonly index?: string

  constructor(private readonly d: DocView) {
    this.index = d.index
  }

  terms(path: string): ReadonlyMap<string, readonly number[]> {
    let terms = this.byPath.get(path)
    if (!terms) this.byPath.set(path, (terms = termPositions(this.d.values(fieldPath(path)))))
    return terms
  }
}

/** As Lucene inverts a text field: one position per token, 100 more between values (an empty one too). */
function termPositions(values: unknown[]): Map<string, number[]> {
  const out = new Map<string, number[]>()
  let pos = -1
  for (const v of values) {
    const text = keywordOf(v)
    if (text === undefined) continue
    for (const t of analyze(text)) {
      pos++
      const list = out.get(t)
      if (list) list.push(pos)
      else out.set(t, [pos])
    }
    pos += POSITION_GAP
  }
  return out
}

const cache = new WeakMap<DocView, Positions>()

function positionsOf(d: DocView): Positions {
  let p = cache.get(d)
  if (!p) cache.set(d, (p = new Positions(d)))
  return p
}

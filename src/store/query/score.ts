/**
 * Relevance: BM25 (k1 1.2, b 0.75, Lucene's defaults) over the text fields a query searches, so
 * that better matches rank first. Statistics are per index, as OpenSearch's default
 * query_then_fetch uses per-shard statistics. Only queries that search text are scored; all
 * others keep the constant score 1 (and their index order), as their matches are equally good.
 */
import { analyze } from './analysis'
import { queryTerms } from './analyzers'
import { compile, expandFieldPattern, kindOf, minimumShouldMatch, type FieldSpec, type Test } from './compile'
import { combinedScore, parseCombinedFields } from './combined-fields'
import { type DocView, fieldPath, isObject } from './doc'
import { translateQueryString, type QueryableField } from './query-string'
import { compileIntervals } from './intervals'
import { allSpecs, combineScores, inScope, nestedDocs, nestedScope, parseNestedQuery, scopedSpecs } from './nested'
import { normLength } from './norms'

const K1 = 1.2
const B = 0.75

/** The text terms a query scores, by field: what the statistics pass counts. */
export type Needs = Map<string, Set<string>>

export interface FieldStats {
  /** Documents with a value in the field. */
  docs: number
  /** Sum of their token counts. */
  tokens: number
  /** Documents holding each needed term. */
  df: Map<string, number>
}

export type Stats = Map<string, FieldStats>

type Scorer = (d: DocView, stats: Stats) => number

const clauses = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])
const boostOf = (v: unknown): number => (isObject(v) && typeof v.boost === 'number' ? v.boost : 1)

/** The boost of a query that scores a constant (`{term: {f: {value, boost}}}`, `{range: {f: {..., boost}}}`, `{exists: {field, boost}}`). */
function leafBoost(q: unknown): number {
  if (!isObject(q)) return 1
  const body = Object.values(q)[0]
  if (!isObject(body)) return 1
  if (typeof body.boost === 'number') return body.boost
  const fields = Object.values(body)
  return fields.length === 1 ? boostOf(fields[0]) : 1
}

class Builder {
  constructor(
    private readonly types: ReadonlyMap<string, FieldSpec>,
    private readonly now: number,
    readonly needs: Needs = new Map(),
    /** The documents scored: the root ('') or a nested query's path. */
    private readonly scope?: string,
    /** The index's `analysis` settings: the analyzers a query may name (see queryTerms). */
    private readonly analysis?: unknown,
  ) {}

  /** A scorer for a query, or undefined when nothing in it searches text. */
  node(q: unknown): Scorer | undefined {
    if (!isObject(q)) return undefined
    const [type] = Object.keys(q)
    const body = q[type]
    switch (type) {
      case 'bool': {
        if (!isObject(body)) return undefined
        const parts = [...clauses(body.must), ...clauses(body.should)].map((c) => ({ c, s: this.node(c) }))
        // Unscored clauses score their boost each: their sum varies once a should clause may miss
        // (`should: [term a, term b]` ranks a document holding both first, as OpenSearch does).
        const varies = clauses(body.should).length > 0 && parts.length >= 2
        if (parts.every((p) => p.s === undefined) && !varies) return undefined
        // A should clause adds its score only when it matches; must clauses always match here.
        const should = new Set(clauses(body.should))
        const scored = parts.map(({ c, s }) => {
          const constant = leafBoost(c)
          const score: Scorer = s ?? (() => constant)
          if (!should.has(c)) return score
          const test = this.test(c)
          return (d: DocView, st: Stats) => (test(d) ? score(d, st) : 0)
        })
        const boost = boostOf(body)
        return (d, st) => boost * scored.reduce((n, s) => n + s(d, st), 0)
      }
      case 'dis_max': {
        if (!isObject(body)) return undefined
        const qs = clauses(body.queries)
        const parts = qs.map((c) => this.node(c))
        const tie = typeof body.tie_breaker === 'number' ? body.tie_breaker : 0
        // Unscored queries score 1 each: only a tie_breaker over several can make that differ.
        if (parts.every((p) => p === undefined) && (tie === 0 || qs.length < 2)) return undefined
        const tests = qs.map((c) => this.test(c))
        return (d, st) => {
          const scores = parts.map((s, i) => (tests[i](d) ? (s ? s(d, st) : 1) : 0))
          const best = Math.max(...scores)
          return best + tie * (scores.reduce((a, b) => a + b, 0) - best)
        }
      }
      case 'constant_score': {
        // Its matches score its boost (1 is every unscored query's score already).
        const boost = boostOf(body)
        return boost === 1 ? undefined : () => boost
      }
      case 'function_score':
        return isObject(body) ? this.node(body.query) : undefined
      case 'nested':
        return this.nested(body)
      case 'boosting': {
        if (!isObject(body)) return undefined
        // The positive query's score, times negative_boost where the negative query matches too.
        const positive = this.node(body.positive) ?? (() => 1)
        const negative = this.test(body.negative)
        const factor = typeof body.negative_boost === 'number' ? body.negative_boost : 1
        const boost = boostOf(body)
        return (d, st) => boost * positive(d, st) * (negative(d) ? factor : 1)
      }
      case 'match':
      case 'match_phrase':
      case 'match_phrase_prefix':
      case 'match_bool_prefix': {
        if (!isObject(body)) return undefined
        const [field] = Object.keys(body)
        const v = body[field]
        const query = isObject(v) ? v.query : v
        const boost = isObject(v) ? boostOf(v) : 1
        const analyzer = isObject(v) ? v.analyzer : undefined
        if (type === 'match_phrase' && !(isObject(v) && Number(v.slop ?? 0) > 0)) return this.phrase(field, query, boost, analyzer)
        return this.text(field, query, boost, type === 'match_bool_prefix', analyzer)
      }
      case 'multi_match':
        return isObject(body) ? this.multiMatch(body) : undefined
      case 'combined_fields': {
        const q = parseCombinedFields(body, this.types, (p) => expandFieldPattern(this.types, p), minimumShouldMatch)
        for (const f of q.fields) this.need(f.name, q.terms)
        return (d, st) => combinedScore(q, d, st)
      }
      case 'intervals': {
        const q = compileIntervals(body, this.types)
        return (d) => q.score(d)
      }
      case 'query_string':
      case 'simple_query_string':
        return this.node(translateQueryString(body, type === 'simple_query_string', (p) => expandFieldPattern(this.types, p)))
      default:
        return undefined
    }
  }

  /**
   * Each field's score with its `^boost` (a field named twice: the last boost); best_fields and
   * the phrase types take the best field's plus tie_breaker times the others', most_fields and
   * bool_prefix add them all.
   */
  private multiMatch(body: Record<string, unknown>): Scorer | undefined {
    const boosts = new Map<string, number>()
    for (const given of body.fields === undefined ? ['*'] : clauses(body.fields).map(String)) {
      const at = given.lastIndexOf('^')
      const boost = at > 0 ? Number(given.slice(at + 1)) : 1
      for (const x of expandFieldPattern(this.types, at > 0 ? given.slice(0, at) : given))
        boosts.set(x.name, Number.isNaN(boost) ? 1 : boost)
    }
    const kind = String(body.type ?? 'best_fields')
    const prefixLast = kind === 'bool_prefix'
    const parts = [...boosts]
      .map(([f, b]) => this.text(f, body.query, b, prefixLast, body.analyzer))
      .filter((s): s is Scorer => s !== undefined)
    if (parts.length === 0) return undefined
    const boost = boostOf(body)
    const sum = kind === 'most_fields' || kind === 'bool_prefix'
    const tie = sum ? 1 : typeof body.tie_breaker === 'number' ? body.tie_breaker : 0
    return (d, st) => {
      let best = 0
      let total = 0
      for (const s of parts) {
        const x = s(d, st)
        total += x
        if (x > best) best = x
      }
      return boost * (best + tie * (total - best))
    }
  }

  /** Each matching nested document scored in its path's scope, combined by `score_mode` (an unscored query's matches score 1 each). */
  private nested(body: unknown): Scorer | undefined {
    const q = parseNestedQuery(body)
    if (q.scoreMode === 'none') return () => 0
    const inner = new Builder(scopedSpecs(this.types, q.path), this.now, this.needs, q.path, this.analysis)
    const score = inner.node(q.query)
    if (score === undefined && q.scoreMode !== 'sum') return undefined
    const test = inner.test(q.query)
    return (d, st) => {
      const scores: number[] = []
      for (const n of nestedDocs(d, q.path)) if (test(n)) scores.push(score ? score(n, st) : 1)
      return q.boost * combineScores(scores, q.scoreMode)
    }
  }

  private test(q: unknown): Test {
    return compile(q, this.types, { now: this.now, scope: this.scope }).test
  }

  /**
   * An exact phrase's BM25, as Lucene's PhraseQuery scores it: the phrase's frequency in the
   * field (not each term's), weighted by the sum of its terms' idf.
   */
  private phrase(field: string, query: unknown, boost: number, analyzer?: unknown): Scorer | undefined {
    const spec = this.types.get(field)
    if (!spec || kindOf(spec.type) !== 'text' || (typeof query !== 'string' && typeof query !== 'number')) return undefined
    const qt = queryTerms(analyzer, this.analysis)(String(query))
    if (qt.length === 0) return undefined
    const fp = fieldPath(spec.path ?? field)
    this.need(field, qt)
    return (d, stats) => {
      const s = stats.get(field)
      if (!s || s.docs === 0) return 0
      const tokens = d.tokens(fp)
      let freq = 0
      outer: for (let i = 0; i + qt.length <= tokens.length; i++) {
        for (let j = 0; j < qt.length; j++) if (tokens[i + j] !== qt[j]) continue outer
        freq++
      }
      let score = 0
      if (freq > 0) for (const t of qt) score += bm25(freq, tokens.length, s.df.get(t) ?? 0, s)
      return boost * score
    }
  }

  private need(field: string, terms: Iterable<string>): void {
    let need = this.needs.get(field)
    if (!need) this.needs.set(field, (need = new Set()))
    for (const t of terms) need.add(t)
  }

  /**
   * BM25 of the analysed query terms in one text field. With `prefixLast` (match_bool_prefix) the
   * last term is a prefix query, which scores a constant 1 in a document holding a token it starts.
   */
  private text(field: string, query: unknown, boost: number, prefixLast = false, analyzer?: unknown): Scorer | undefined {
    const spec = this.types.get(field)
    if (!spec || kindOf(spec.type) !== 'text' || (typeof query !== 'string' && typeof query !== 'number')) return undefined
    const analysed = queryTerms(analyzer, this.analysis)(String(query))
    const prefix = prefixLast ? analysed.pop() : undefined
    if (prefix !== undefined && analysed.length === 0) {
      const fp = fieldPath(spec.path ?? field)
      return (d) => (d.tokens(fp).some((x) => x.startsWith(prefix)) ? boost : 0)
    }
    // A repeated word counts as often as it is repeated (Lucene makes a clause of each occurrence).
    const times = new Map<string, number>()
    for (const t of analysed) times.set(t, (times.get(t) ?? 0) + 1)
    const terms = [...times.keys()]
    if (terms.length === 0) return undefined
    this.need(field, terms)
    const fp = fieldPath(spec.path ?? field)
    return (d, stats) => {
      const s = stats.get(field)
      if (!s || s.docs === 0) return 0
      const tokens = d.tokens(fp)
      if (tokens.length === 0) return 0
      let score = 0
      for (const t of terms) {
        let tf = 0
        for (const x of tokens) if (x === t) tf++
        if (tf === 0) continue
        score += times.get(t)! * bm25(tf, tokens.length, s.df.get(t) ?? 0, s)
      }
      if (prefix !== undefined && tokens.some((x) => x.startsWith(prefix))) score += 1
      return boost * score
    }
  }
}

/**
 * One term's BM25 in one document: `tf` occurrences in a field of `len` tokens, the term in `df`
 * documents. The store's postings (text-index.ts) score with the same function, so that both
 * ways of scoring give the same numbers to the last bit.
 */
export function bm25(tf: number, len: number, df: number, s: FieldStats): number {
  const idf = Math.log(1 + (s.docs - df + 0.5) / (df + 0.5))
  // Lucene's BM25 since 8.0: without the constant (k1 + 1) factor of the textbook formula (LUCENE-8563),
  // the document's length as its norm keeps it; the average from the exact totals.
  return (idf * tf) / (tf + K1 * (1 - B + (B * normLength(len)) / (s.tokens / s.docs)))
}

/**
 * A query scored by one text field's terms alone (a `match`, any or all of its terms): what
 * the postings can score without reading documents. Undefined for anything else.
 */
export function singleMatch(
  query: unknown,
  types: ReadonlyMap<string, FieldSpec>,
): { field: string; terms: string[]; and: boolean; boost: number } | undefined {
  if (!isObject(query) || Object.keys(query).length !== 1 || !isObject(query.match)) return undefined
  const fields = Object.keys(query.match)
  if (fields.length !== 1) return undefined
  const field = fields[0]
  const spec = scopedSpecs(types, '').get(field)
  if (!spec || kindOf(spec.type) !== 'text') return undefined
  const v = query.match[field]
  const p: Record<string, unknown> = isObject(v) ? v : { query: v }
  if (Object.keys(p).some((k) => !['query', 'operator', 'boost', 'lenient', 'auto_generate_synonyms_phrase_query'].includes(k)))
    return undefined
  if (typeof p.query !== 'string' && typeof p.query !== 'number') return undefined
  if (p.boost !== undefined && typeof p.boost !== 'number') return undefined
  const analysed = analyze(String(p.query))
  const terms = [...new Set(analysed)]
  // A repeated word weighs more (see text()); the postings' ranking adds each term once.
  if (terms.length === 0 || terms.length !== analysed.length) return undefined
  return { field, terms, and: String(p.operator ?? 'or').toLowerCase() === 'and', boost: boostOf(p) }
}

/**
 * The score every match of a query gets when nothing in it varies between documents (relevance()
 * undefined): a filter-only or must_not-only bool scores 0, a boosted term its boost, a bool the
 * sum of its scoring clauses — as OpenSearch reports them.
 */
export function constantScore(q: unknown): number {
  if (!isObject(q)) return 1
  const [type] = Object.keys(q)
  const body = q[type]
  if (type === 'bool' && isObject(body)) {
    const scoring = [...clauses(body.must), ...clauses(body.should)]
    // An empty bool matches everything, as match_all scores it.
    if (scoring.length === 0 && clauses(body.filter).length === 0 && clauses(body.must_not).length === 0) return boostOf(body)
    return boostOf(body) * scoring.reduce((n: number, c) => n + constantScore(c), 0)
  }
  // Every matching nested document scores the same: their average, max or min is that score.
  if (type === 'nested' && isObject(body)) return body.score_mode === 'none' ? 0 : boostOf(body) * constantScore(body.query)
  return type === 'constant_score' || type === 'match_all' ? boostOf(body) : leafBoost(q)
}

export interface Relevance {
  needs: Needs
  score: Scorer
}

/** The relevance of a query over an index with these fields, or undefined when it searches no text. */
export function relevance(
  query: unknown,
  types: ReadonlyMap<string, FieldSpec> | undefined,
  now: number,
  analysis?: unknown,
): Relevance | undefined {
  if (!types || query === undefined) return undefined
  const b = new Builder(inScope(types), now, undefined, undefined, analysis)
  let score: Scorer | undefined
  try {
    score = b.node(query)
  } catch {
    return undefined // the evaluator reports malformed queries with OpenSearch's errors
  }
  return score ? { needs: b.needs, score } : undefined
}

/** Counts one document into the statistics the relevance needs. */
export function countStats(needs: Needs, types: ReadonlyMap<string, FieldSpec>, d: DocView, stats: Stats): void {
  const all = allSpecs(types)
  for (const [field, terms] of needs) {
    const fp = fieldPath(all.get(field)?.path ?? field)
    // A field of nested documents is counted in each of them, as Lucene counts its documents.
    const scope = nestedScope(all, field)
    if (scope === '') countDoc(stats, field, terms, d.tokens(fp))
    else for (const n of nestedDocs(d, scope)) countDoc(stats, field, terms, n.tokens(fp))
  }
}

function countDoc(stats: Stats, field: string, terms: Set<string>, tokens: string[]): void {
  if (tokens.length === 0) return
  let s = stats.get(field)
  if (!s) stats.set(field, (s = { docs: 0, tokens: 0, df: new Map() }))
  s.docs++
  s.tokens += tokens.length
  const seen = new Set(tokens)
  for (const t of terms) if (seen.has(t)) s.df.set(t, (s.df.get(t) ?? 0) + 1)
}

/** Whether a relevance scores fields of nested documents: their statistics are counted from the documents, not the text index's. */
export function scoresNested(needs: Needs, types: ReadonlyMap<string, FieldSpec>): boolean {
  for (const field of needs.keys()) if (nestedScope(types, field) !== '') return true
  return false
}

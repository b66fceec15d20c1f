/**
 * SQL candidate selection: turns the indexable part of a query (term, terms, ids, range, prefix
 * on keyword/numeric/date/boolean fields) into a `SELECT rid` over the `fv` B-tree, so that only
 * those rows are read and checked by the evaluator. Null means "no restriction" (scan the index).
 */
import { analyze } from '../query/analysis'
import { expandFieldPattern, kindOf, toBool, toNumber, leafParts, rangeZone } from '../query/compile'
import { translateQueryString } from '../query/query-string'
import { normalizedParams } from '../query/normalizer'
import { intervalsCandidates } from '../query/intervals'
import { storedName } from '../query/field-spec'
import { termsField } from './text-fields'
import { ftsPrefixQuery, ftsTermQuery } from './text-index'
import { parseDateMath } from '../query/dates'
import type { Zone } from '../query/zones'
import { isObject, keywordOf } from '../query/doc'
import type { IndexMeta } from './catalog'
import { kindOfField } from './catalog'
import { flatObjectRoot, valueAndPathField, valueAndPathKey } from '../query/flat-object'
import { ridRange } from './rids'
import { scopedSpecs } from '../query/nested'

export type Bind = string | number
export interface Plan {
  sql: string
  params: Bind[]
  /** Lower is more selective; used to pick one conjunct. */
  cost: number
  /** The rows are exactly the query's matches (no evaluator check needed to count them). */
  exact?: boolean
  /** SELECTs joined by UNION in `sql` (1 when absent). */
  terms?: number
  /** No rid comes twice (one value, ids, a UNION): counting needs no DISTINCT. */
  distinct?: boolean
  /** The one fv field the rows come from (whether it is multi-valued decides the DISTINCT). */
  field?: number
  /** The intersection of several clauses (see search-rows.ts's matchesOf). */
  conjunction?: boolean
  /** One SELECT whose rows a `AND rid = ?` condition narrows to a key lookup (term, terms, ids). */
  lookup?: boolean
  /** A range on a numeric or date field: its bounds, from which its complement is built (see rangeClause). */
  bounds?: { field: string; f: number; ops: Array<[RangeOp, Bind]> }
  /** A term or terms on a keyword, numeric or date field: its values, as the field's index (and column) holds them. */
  equals?: { field: string; values: Bind[] }
  /** Every document of the index less some: most of it, whatever the exclusions (not worth counting first). */
  spansIndex?: boolean
}

export type RangeOp = 'gt' | 'gte' | 'lt' | 'lte'

/**
 * What the data can tell the planner, for choosing between equivalent plans (never for their
 * answers): how many rows a SELECT gives, up to a cap, and whether every document of the index
 * holds exactly one value of a field (then a range is also "not in its complement").
 */
export interface PlanProbe {
  count(sql: string, params: Bind[], cap: number): number
  singleValued(field: string): boolean
}

/** match parameters that do not change which documents match (see compile.ts's match and phrase). */
const MATCH_PARAMS = new Set([
  'query',
  'operator',
  'minimum_should_match',
  'zero_terms_query',
  'boost',
  '_name',
  'slop',
  'lenient',
  'auto_generate_synonyms_phrase_query',
])

/** The documents of an FTS5 query over the text index (text-index.ts); each comes once. */
const TEXT_MATCH = 'SELECT rowid AS rid FROM tx WHERE tx MATCH ?'
/** The rows outside a bound (the field's other values). */
const COMPLEMENT: Record<RangeOp, string> = { gt: '<=', gte: '<', lt: '>=', lte: '>' }
/** A bound's SQL comparison. */
export const RANGE_SQL: Record<RangeOp, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' }
/** See exactConjunction. */
const RANGE_ROWS_PER_MATCH = 32
/** Counting the most selective clause's rows stops here (the budget is then large enough for any range). */
const DRIVER_CAP = 65_536

const EMPTY: Plan = { sql: 'SELECT rid FROM docs WHERE 0', params: [], cost: 0, exact: true, distinct: true }
/** A clause this many times larger than the most selective one is checked row by row (see exactConjunction). */
const LOOKUP_RATIO = 8
const MAX_IN = 500
/** Below SQLite's limit of terms in one compound SELECT (500): larger disjunctions scan instead. */
const MAX_UNION = 100

/**
 * The rows outside a range's bounds, one plan per bound; disjoint when there is one lower and one
 * upper bound and they do not cross (then, on a field every document holds once, the range's
 * matches are the documents less these).
 */
export function complementOf(bounds: NonNullable<Plan['bounds']>): Plan[] {
  return bounds.ops.map(([op, v]) => ({
    sql: `SELECT rid FROM fv WHERE f = ? AND v ${COMPLEMENT[op]} ?`,
    params: [bounds.f, v],
    cost: 5,
    exact: true,
  }))
}

/** Whether a range's complement (complementOf) is disjoint rows: at most one bound each way, and they do not cross. */
export function disjointComplement(bounds: NonNullable<Plan['bounds']>): boolean {
  const lower = bounds.ops.filter(([op]) => op === 'gt' || op === 'gte')
  const upper = bounds.ops.filter(([op]) => op === 'lt' || op === 'lte')
  if (lower.length > 1 || upper.length > 1) return false
  return lower.length === 0 || upper.length === 0 || typeof lower[0][1] !== 'number' || lower[0][1] <= (upper[0][1] as number)
}

/** Whether a query matches every document (absent, or `match_all`, whatever its boost or name). */
export const matchesAll = (q: unknown): boolean => q === undefined || (isObject(q) && Object.keys(q).length === 1 && isObject(q.match_all))

/**
 * The bounds a query's required `range` clauses put on a numeric or date `field` (bound values as
 * the field's index holds them), and whether they are all the query asks (its other required
 * clauses match everything): a walk of the field's index in order then starts and stops there
 * and reads only matches (see search-rows.ts's sortedRows).
 */
export function fieldBounds(q: unknown, meta: IndexMeta, now: number, field: string): { ops: Array<[RangeOp, Bind]>; only: boolean } {
  const { required, excluded, pure } = conjuncts(q, meta)
  const ops: Array<[RangeOp, Bind]> = []
  let only = pure && excluded.length === 0
  for (const c of required) {
    const bounds = isObject(c) && isObject(c.range) ? planQuery(c, meta, now)?.bounds : undefined
    if (bounds?.field === field) ops.push(...bounds.ops)
    else only = false
  }
  return { ops, only }
}

/**
 * A query's conjuncts: the clauses every match meets (a bool's must and filter, a should of one
 * clause that must match, at any depth of bools; a query_string as its translation; match_all
 * left out) and those no match meets (must_not). `pure` when that is the whole query (no other
 * should, no minimum_should_match left over).
 */
function conjuncts(q: unknown, meta: IndexMeta): { required: unknown[]; excluded: unknown[]; pure: boolean } {
  const out = { required: [] as unknown[], excluded: [] as unknown[], pure: true }
  const visit = (c: unknown): void => {
    if (matchesAll(c)) return
    const type = isObject(c) && Object.keys(c).length === 1 ? Object.keys(c)[0] : undefined
    const body = type === undefined ? undefined : (c as Record<string, unknown>)[type]
    if (type === 'bool' && isObject(body)) return bool(body)
    // The search bar's Lucene syntax: the same translation the planner and the evaluator read.
    if ((type === 'query_string' || type === 'simple_query_string') && isObject(body))
      try {
        return visit(translateQueryString(body, type === 'simple_query_string', (p) => expandFieldPattern(meta.specs, p)))
      } catch {
        // left as it is: the planner refuses it too
      }
    out.required.push(c)
  }
  const bool = (body: Record<string, unknown>): void => {
    const must = [...list(body.must), ...list(body.filter)]
    const should = list(body.should)
    const msm = body.minimum_should_match
    if (should.length === 1 && (msm === 1 || msm === '1' || (msm === undefined && must.length === 0))) must.push(should[0])
    else if (should.length > 0 || msm !== undefined) out.pure = false
    if (Object.keys(body).some((k) => !BOOL_KEYS.has(k))) out.pure = false
    out.excluded.push(...list(body.must_not))
    must.forEach(visit)
  }
  visit(q)
  return out
}

/** A term or terms: the rows of field id `f` holding one of the values; `field` when its column holds them too (Plan.equals). */
function lookupOf(f: number, field: string | undefined, values: Bind[]): Plan {
  const one = values.length === 1
  return {
    sql: one ? 'SELECT rid FROM fv WHERE f = ? AND v = ?' : `SELECT rid FROM fv WHERE f = ? AND v IN (${values.map(() => '?').join(',')})`,
    params: [f, ...values],
    // One value is a term (as selective, each document once); more may read more rows than a term of the same field.
    cost: one ? 1 : 2,
    exact: true,
    ...(one ? { distinct: true } : { field: f }),
    lookup: true,
    equals: field === undefined ? undefined : { field, values },
  }
}

/** A term on a date: every instant its value names (`2024-04-02`: the whole day), as the evaluator reads it. */
function spanOf(f: number, field: string, lo: Bind | undefined, hi: Bind | undefined): Plan | null {
  if (lo === undefined || hi === undefined) return null
  if (lo === hi) return lookupOf(f, field, [lo])
  const ops: Array<[RangeOp, Bind]> = [
    ['gte', lo],
    ['lte', hi],
  ]
  return {
    sql: 'SELECT rid FROM fv WHERE f = ? AND v >= ? AND v <= ?',
    params: [f, lo, hi],
    cost: 4,
    exact: true,
    field: f,
    bounds: { field, f, ops },
  }
}

const list = (v: unknown): unknown[] => (v === undefined ? [] : Array.isArray(v) ? v : [v])

/** A query as the conjunction a dashboard writes (see conjunctionParts). */
export interface ConjunctionParts {
  /** Required ranges on numeric or date fields, one entry per clause. */
  ranges: Array<{ field: string; ops: Array<[RangeOp, Bind]> }>
  /** Required and excluded exact lookups (term, terms, ids, a keyword's match or match_phrase). */
  kept: Plan[]
  dropped: Plan[]
}

/**
 * A query made only of ranges on numeric or date fields and exact lookups, required (a bool's
 * must and filter, a should of one clause that must match) or excluded (must_not), at any depth
 * of bools; match_all beside them restricts nothing. A time filter with its pills, as Dashboards
 * writes them. Undefined for any other query.
 */
export function conjunctionParts(q: unknown, meta: IndexMeta, now: number): ConjunctionParts | undefined {
  const { required, excluded, pure } = conjuncts(q, meta)
  if (!pure) return undefined
  const parts: ConjunctionParts = { ranges: [], kept: [], dropped: [] }
  for (const c of required) {
    const plan = planQuery(c, meta, now)
    if (!plan?.exact) return undefined
    if (plan.bounds) parts.ranges.push({ field: plan.bounds.field, ops: plan.bounds.ops })
    else if (plan.lookup) parts.kept.push(plan)
    else return undefined
  }
  for (const c of excluded) {
    const plan = planQuery(c, meta, now)
    if (!plan?.exact || !plan.lookup) return undefined
    parts.dropped.push(plan)
  }
  return parts
}

const BOOL_KEYS = new Set(['must', 'filter', 'should', 'must_not', 'minimum_should_match', 'boost', '_name', 'adjust_pure_negative'])

export function planQuery(q: unknown, meta: IndexMeta, now: number, probe?: PlanProbe): Plan | null {
  try {
    return new Planner(rootView(meta), now, probe).node(q)
  } catch {
    return null // the evaluator reports malformed queries with OpenSearch's errors
  }
}

/**
 * The index as its root documents hold it: a field of nested documents is not among their values
 * (a query on it at the root matches nothing), and a `nested` query is left to the evaluator.
 */
function rootView(meta: IndexMeta): IndexMeta {
  const specs = scopedSpecs(meta.specs, '')
  return specs === meta.specs ? meta : { ...meta, specs }
}

class Planner {
  constructor(
    private readonly meta: IndexMeta,
    private readonly now: number,
    private readonly probe?: PlanProbe,
  ) {}

  node(q: unknown): Plan | null {
    if (!isObject(q)) return null
    const [type] = Object.keys(q)
    const body = q[type]
    switch (type) {
      case 'match_none':
        return EMPTY
      case 'constant_score':
        return isObject(body) ? this.node(body.filter) : null
      case 'bool':
        return this.bool(body)
      case 'ids': {
        if (!isObject(body) || !Array.isArray(body.values)) return null
        return this.ids(body.values.map(String))
      }
      case 'term':
      case 'prefix':
      case 'range': {
        const { field, params } = leafParts(type, body)
        if (toBool(params.case_insensitive) === true) return null
        if (field === '_id' && type === 'term') return this.ids([String(params.value)])
        if (type !== 'range' && this.text(field)) return this.textLeaf(type, field, params.value)
        return this.leaf(type, field, params)
      }
      case 'match':
      case 'match_phrase': {
        const { field, params } = leafParts(type, body, 'query')
        return this.match(type, field, params)
      }
      case 'wildcard': {
        // A trailing `*` alone is a prefix; the evaluator still checks (long terms are skipped there).
        const { field, params } = leafParts(type, body)
        const value = params.value ?? params.wildcard
        if (toBool(params.case_insensitive) === true || typeof value !== 'string' || !/^(?:[^*?\\]|\\.)*\*$/.test(value)) return null
        const prefix = value.slice(0, -1).replace(/\\(.)/g, '$1')
        const p = this.text(field) ? this.textLeaf('prefix', field, prefix) : this.leaf('prefix', field, { value: prefix })
        return p && { ...p, exact: false }
      }
      case 'dis_max':
        return isObject(body) && Array.isArray(body.queries) ? this.union(body.queries, true) : null
      case 'intervals':
        return this.intervals(body)
      case 'query_string':
      case 'simple_query_string':
        // The same translation the evaluator runs, so both read the same DSL.
        return this.node(translateQueryString(body, type === 'simple_query_string', (p) => expandFieldPattern(this.meta.specs, p)))
      case 'terms': {
        if (!isObject(body)) return null
        const fields = Object.keys(body).filter((k) => k !== 'boost' && k !== '_name')
        if (fields.length !== 1 || !Array.isArray(body[fields[0]])) return null
        const values = body[fields[0]] as unknown[]
        if (fields[0] === '_id') return this.ids(values.map(String))
        return this.leaf('terms', fields[0], { value: values })
      }
      default:
        return null
    }
  }

  private ids(ids: string[]): Plan | null {
    if (ids.length === 0) return EMPTY
    if (ids.length > MAX_IN) return null
    return {
      sql: `SELECT rid FROM docs WHERE ix = ? AND id IN (${ids.map(() => '?').join(',')})`,
      params: [this.meta.ix, ...ids],
      cost: 0,
      exact: true,
      distinct: true,
      lookup: true,
    }
  }

  private bool(body: unknown): Plan | null {
    if (!isObject(body)) return null
    const required = [...list(body.must), ...list(body.filter)]
    // A match_all beside other required clauses restricts nothing (Dashboards puts one in every filter list).
    const must = required.filter((c) => !matchesAll(c))
    const should = list(body.should)
    let best: Plan | null = null
    for (const c of must) {
      const p = this.node(c)
      if (p && (!best || p.cost < best.cost)) best = p
    }
    const exact = should.length === 0 ? this.exactConjunction(must, list(body.must_not)) : null
    if (exact) return exact
    const msm = body.minimum_should_match
    const shouldRequired =
      should.length > 0 && (required.length === 0 ? msm === undefined || Number(msm) >= 1 : msm !== undefined && Number(msm) >= 1)
    if (!best && shouldRequired && (msm === undefined || Number(msm) === 1)) {
      const union = this.union(should, required.length === 0 && list(body.must_not).length === 0)
      if (union) return union
    }
    // One conjunct is exact for the whole bool only when it is the bool's only clause.
    if (best && (must.length !== 1 || should.length > 0 || list(body.must_not).length > 0)) return { ...best, exact: false }
    return best
  }

  /**
   * A bool of selective clauses (term, terms, ids; `must_not` too), and of ranges on numeric or
   * date fields beside at least one of them, is their rows' intersection less the excluded rows,
   * exactly: counted from the index, only the page's documents read. Without it the most
   * selective clause's rows were each read and checked (a term of 1 in 8 documents and two
   * others made a query_string read an eighth of the index, a time filter beside it 25 times
   * what OpenSearch took). The compound is ordered by rid so that SQLite merges its arms, which
   * come in rid order from the fv key, instead of building a temporary table of each.
   */
  private exactConjunction(must: unknown[], mustNot: unknown[]): Plan | null {
    if (must.length + mustNot.length < 2 && !(must.length === 0 && mustNot.length > 0)) return null
    let kept: Plan[] = []
    let dropped: Plan[] = []
    const ranges: Array<{ plan: Plan; excluded: boolean }> = []
    for (const [i, c] of [...must, ...mustNot].entries()) {
      const p = this.node(c)
      if (!p || !p.exact) return null
      if (p.cost <= 2 && (p.terms ?? 1) <= 1) (i < must.length ? kept : dropped).push(p)
      else if (p.bounds && this.probe) ranges.push({ plan: p, excluded: i >= must.length })
      else return null
    }
    const checks: Array<{ plan: Plan; negated: boolean }> = []
    if (this.probe && kept.length > 0) {
      // The most selective clause leads; a clause much larger is looked up for each of its rows
      // rather than read whole (a host's 100 events, then "is it a login", "is the user root").
      const probe = this.probe
      // Each clause is counted only up to the smallest count before it: a document id beside its
      // space (10,000 rules) counts one row and two, not the whole space every time.
      let driver = { p: kept[0], n: probe.count(kept[0].sql, kept[0].params, DRIVER_CAP) }
      for (const p of kept.slice(1)) {
        const n = probe.count(p.sql, p.params, driver.n + 1)
        if (n < driver.n) driver = { p, n }
      }
      // Rows a range may cost per match of the leading clause: an evaluated document costs some 30 index rows.
      for (const { plan, excluded } of ranges)
        if (!this.rangeClause(plan, excluded, RANGE_ROWS_PER_MATCH * driver.n, kept, dropped)) return null
      const large = (p: Plan) =>
        p !== driver.p && p.lookup === true && probe.count(p.sql, p.params, LOOKUP_RATIO * driver.n + 1) > LOOKUP_RATIO * driver.n
      checks.push(
        ...kept.filter(large).map((plan) => ({ plan, negated: false })),
        ...dropped.filter(large).map((plan) => ({ plan, negated: true })),
      )
      kept = kept.filter((p) => !checks.some((c) => c.plan === p))
      dropped = dropped.filter((p) => !checks.some((c) => c.plan === p))
      kept.sort((a, b) => (a === driver.p ? -1 : b === driver.p ? 1 : 0))
    } else if (ranges.length > 0) {
      // Ranges beside exclusions alone (a time filter and a negated pill): each range's rows, or
      // its complement's excluded, whichever are fewer.
      if (!this.probe) return null
      for (const { plan, excluded } of ranges)
        if (!this.rangeClause(plan, excluded, Math.max(1, this.meta.docCount), kept, dropped)) return null
    }
    // Only exclusions: every document of the index less them.
    const [lo, hi] = ridRange(this.meta.ix)
    const all: Plan = { sql: 'SELECT rid FROM docs WHERE rid BETWEEN ? AND ?', params: [lo, hi], cost: 6 }
    const keep = kept.length === 0 ? [all] : kept
    const merged = `SELECT rid FROM (${keep.map((p) => `SELECT rid FROM (${p.sql})`).join(' INTERSECT ')}${dropped.map((p) => ` EXCEPT SELECT rid FROM (${p.sql})`).join('')} ORDER BY 1)`
    const looked = checks.map(({ plan, negated }) => `${negated ? 'NOT ' : ''}EXISTS (${plan.sql} AND rid = d.rid)`)
    return {
      sql: looked.length === 0 ? merged : `SELECT rid FROM (${merged}) AS d WHERE ${looked.join(' AND ')}`,
      params: [...keep, ...dropped, ...checks.map((c) => c.plan)].flatMap((p) => p.params),
      cost: Math.min(...keep.map((p) => p.cost)),
      exact: true,
      distinct: true,
      conjunction: true,
      spansIndex: kept.length === 0,
    }
  }

  /**
   * A range beside selective clauses: intersected (or excluded) as its own rows when they are
   * few; when they are many and every document holds one value of the field (a data stream's
   * timestamp), its complement's rows are excluded instead (a "last 30 days" filter over a month
   * of events excludes almost nothing). False when both would cost more than `budget` rows.
   */
  private rangeClause(plan: Plan, excluded: boolean, budget: number, kept: Plan[], dropped: Plan[]): boolean {
    const probe = this.probe!
    const { field, f, ops } = plan.bounds!
    const outside: Plan[] = excluded || !probe.singleValued(field) ? [] : complementOf({ field, f, ops })
    let beyond = outside.length === 0 ? Infinity : 0
    for (const p of outside) beyond += probe.count(p.sql, p.params, budget + 1)
    const within = probe.count(plan.sql, plan.params, Math.min(beyond, budget) + 1)
    if (within <= Math.min(beyond, budget)) (excluded ? dropped : kept).push(plan)
    else if (beyond <= budget) dropped.push(...outside)
    else return false
    return true
  }

  /** Rows matching any of the queries (null when one of them cannot be planned). */
  private union(queries: unknown[], exactable: boolean): Plan | null {
    const plans = queries.map((c) => this.node(c))
    const terms = plans.reduce((n, p) => n + (p?.terms ?? 1), 0)
    if (plans.length === 0 || terms > MAX_UNION || !plans.every((p): p is Plan => p !== null)) return null
    if (plans.length === 1) return exactable ? plans[0] : { ...plans[0], exact: false }
    return {
      terms,
      sql: plans.map((p) => p.sql).join(' UNION '),
      params: plans.flatMap((p) => p.params),
      cost: Math.max(...plans.map((p) => p.cost)) + 1,
      exact: exactable && plans.every((p) => p.exact),
      distinct: true,
    }
  }

  /** Rows holding every plan's rows (compound SELECTs bind left to right: wrapped to nest safely). */
  private intersect(plans: Plan[], exact: boolean): Plan {
    if (plans.length === 1) return { ...plans[0], exact }
    return {
      sql: `SELECT rid FROM (${plans.map((p) => p.sql).join(' INTERSECT ')})`,
      params: plans.flatMap((p) => p.params),
      cost: Math.min(...plans.map((p) => p.cost)),
      exact,
      distinct: true,
    }
  }

  /** The field's mapping is `text` (its terms are in the inverted index, see text-index.ts). */
  private text(field: string): boolean {
    const spec = this.meta.specs.get(field)
    return spec !== undefined && kindOf(spec.type) === 'text'
  }

  /** `term` or `prefix` on a text field: the unanalysed value against the field's tokens in the text index. */
  private textLeaf(type: string, field: string, value: unknown): Plan | null {
    if (value === null || value === undefined || isObject(value) || Array.isArray(value)) return null
    const f = this.meta.fieldIds.get(termsField(storedName(this.meta.specs, field)))
    if (f === undefined) return EMPTY // no document ever had a token there
    const v = String(value)
    if (type === 'term') return { sql: TEXT_MATCH, params: [ftsTermQuery(f, v)], cost: 1, exact: true, distinct: true }
    if (type !== 'prefix' || v === '') return null
    return { sql: TEXT_MATCH, params: [ftsPrefixQuery(f, v)], cost: 3, exact: true, distinct: true }
  }

  /** The documents holding every term an `intervals` query needs (the evaluator finds the intervals). */
  private intervals(body: unknown): Plan | null {
    const need = intervalsCandidates(body, this.meta.specs)
    if (!need || need.terms.length === 0 || need.terms.length > MAX_UNION || !this.text(need.field)) return null
    return this.intersect(
      need.terms.map((t) => this.textLeaf('term', need.field, t)!),
      false,
    )
  }

  /**
   * `match` (any term, or all with `operator: and`) and `match_phrase` (all terms: the evaluator
   * checks their order) on a text field, from the analysed query's postings; on a keyword or
   * numeric field a `match` is a `term`.
   */
  private match(type: string, field: string, p: Record<string, unknown>): Plan | null {
    const query = p.query
    if (query === undefined || query === null || isObject(query)) return null
    // On a keyword, numeric or date field both are a `term` (Dashboards' filter pills are match_phrase).
    if (!this.text(field)) return p.fuzziness === undefined ? this.leaf('term', field, { value: query }) : null
    for (const k of Object.keys(p)) if (!MATCH_PARAMS.has(k)) return null // fuzziness, analyzer...: the evaluator decides
    const analysed = analyze(String(query))
    const terms = [...new Set(analysed)]
    if (terms.length === 0) return p.zero_terms_query === 'all' ? null : EMPTY
    if (terms.length > MAX_UNION) return null
    const plans = terms.map((t) => this.textLeaf('term', field, t)!)
    // A phrase of one word repeated ("error error") needs the evaluator as much as one of several.
    if (type === 'match_phrase')
      return analysed.length === 1 ? plans[0] : plans.length === 1 ? { ...plans[0], exact: false } : this.intersect(plans, false)
    const and = String(p.operator ?? 'or').toLowerCase() === 'and'
    if (and) return this.intersect(plans, true)
    const msm = p.minimum_should_match
    // Any term is necessary for every minimum_should_match; only "one of them" is also sufficient.
    if (plans.length === 1) return plans[0]
    return {
      terms: plans.length,
      sql: plans.map((x) => x.sql).join(' UNION '),
      params: plans.flatMap((x) => x.params),
      cost: plans.length,
      exact: msm === undefined,
      distinct: true,
    }
  }

  /** A query value as the field-value index holds it (undefined: none it could hold). */
  private bindOf(
    kind: string,
    field: string,
    under: string | undefined,
    v: unknown,
    roundUp: boolean,
    format?: string,
    zone?: Zone,
  ): Bind | undefined {
    switch (kind) {
      case 'keyword': {
        const k = keywordOf(v)
        return k === undefined || under === undefined ? k : under + k
      }
      case 'number':
        return toNumber(v)
      case 'boolean': {
        const b = toBool(v)
        return b === undefined ? undefined : Number(b)
      }
      case 'date':
        try {
          return parseDateMath(v, roundUp, this.now, format ?? this.meta.specs.get(field)?.format, zone)
        } catch {
          return undefined
        }
    }
    return undefined
  }

  private leaf(type: string, named: string, given: Record<string, unknown>): Plan | null {
    const field = storedName(this.meta.specs, named)
    // The values as the field indexed them (compile.ts normalizes the same way).
    const p = normalizedParams(type, this.meta.specs.get(field), given)
    // A path below a flat_object reads the root's `_valueAndPath` keys: the path, then the value.
    const root = this.meta.specs.has(field) ? undefined : flatObjectRoot(this.meta.specs, field)
    const under = root === undefined ? undefined : valueAndPathKey(field.slice(root.length + 1), '')
    const kind = under === undefined ? kindOfField(this.meta, field) : 'keyword'
    if (!kind) return null
    const f = this.meta.fieldIds.get(root === undefined ? field : valueAndPathField(root))
    if (f === undefined) return EMPTY // mapped but no document ever had a value
    const conv = (v: unknown, roundUp = false, format?: string, zone?: Zone) => this.bindOf(kind, field, under, v, roundUp, format, zone)
    // A boolean's column holds true and false, a flat_object path's keys their path: not the index's values.
    const valued = under === undefined && kind !== 'boolean'
    if (type === 'term' && kind === 'date') return spanOf(f, field, conv(p.value), conv(p.value, true))
    if (type === 'term') {
      const v = conv(p.value)
      return v === undefined ? null : lookupOf(f, valued ? field : undefined, [v])
    }
    if (type === 'terms') {
      // A date names a span unless it is down to the millisecond: those the evaluator reads.
      if (kind === 'date' && (p.value as unknown[]).some((x) => conv(x) !== conv(x, true))) return null
      const values = (p.value as unknown[]).map((x) => conv(x))
      if (values.length > MAX_IN || values.some((v) => v === undefined)) return null
      if (values.length === 0) return EMPTY
      return lookupOf(f, valued ? field : undefined, values as Bind[])
    }
    if (type === 'prefix') {
      if (kind !== 'keyword' || typeof p.value !== 'string' || (p.value === '' && under === undefined)) return null
      const lo = conv(p.value) as string
      const hi = successor(lo)
      return hi === undefined
        ? { sql: 'SELECT rid FROM fv WHERE f = ? AND v >= ?', params: [f, lo], cost: 3, exact: true, field: f }
        : { sql: 'SELECT rid FROM fv WHERE f = ? AND v >= ? AND v < ?', params: [f, lo, hi], cost: 3, exact: true, field: f }
    }
    // range
    const b: Record<RangeOp, unknown> = { gt: p.gt, gte: p.gte, lt: p.lt, lte: p.lte }
    if ('from' in p || 'to' in p) {
      if (p.from != null) b[p.include_lower === false ? 'gt' : 'gte'] = p.from
      if (p.to != null) b[p.include_upper === false ? 'lt' : 'lte'] = p.to
    }
    // A date range's `format` reads its bounds (the documents' values are indexed by the mapping's).
    if (p.format !== undefined && (kind !== 'date' || typeof p.format !== 'string')) return null
    let zone: Zone | undefined
    try {
      zone = kind === 'date' ? rangeZone(p) : undefined
    } catch {
      return null // the evaluator refuses it, with its message
    }
    let sql = 'SELECT rid FROM fv WHERE f = ?'
    const params: Bind[] = [f]
    const bounds: Array<[RangeOp, Bind]> = []
    for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
      if (b[op] === undefined || b[op] === null) continue
      const v = conv(b[op], op === 'gt' || op === 'lte', p.format as string | undefined, zone)
      if (v === undefined) return null
      sql += ` AND v ${RANGE_SQL[op]} ?`
      params.push(v)
      bounds.push([op, v])
    }
    if (under !== undefined) {
      // Open ends stay within the path's keys (every key of the path starts with `under`).
      if (b.gt == null && b.gte == null) {
        sql += ' AND v >= ?'
        params.push(under)
      }
      const end = successor(under)
      if (b.lt == null && b.lte == null && end !== undefined) {
        sql += ' AND v < ?'
        params.push(end)
      }
      return { sql, params, cost: 4, exact: true, field: f }
    }
    // A keyword range with only an upper bound would also catch nothing else: values are all TEXT.
    const plan: Plan = { sql, params, cost: params.length > 2 ? 4 : 5, exact: true, field: f }
    return kind === 'number' || kind === 'date' ? { ...plan, bounds: { field, f, ops: bounds } } : plan
  }
}

/** Smallest string greater than every string with this prefix (UTF-8/code-point order). */
function successor(prefix: string): string | undefined {
  const cps = [...prefix].map((c) => c.codePointAt(0)!)
  while (cps.length > 0) {
    let last = cps.pop()! + 1
    if (last >= 0xd800 && last <= 0xdfff) last = 0xe000
    if (last <= 0x10ffff) return String.fromCodePoint(...cps, last)
  }
  return undefined
}

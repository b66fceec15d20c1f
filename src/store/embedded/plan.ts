/**
 * SQL candidate selection: turns the indexable part of a query (term, terms, ids, range, prefix
 * on keyword/numeric/date/boolean fields) into a `SELECT rid` over the `fv` B-tree, so that only
 * those rows are read and checked by the evaluator. Null means "no restriction" (scan the index).
 */
import { analyze } from '../query/analysis'
import { expandFieldPattern, kindOf, toBool, toNumber, leafParts } from '../query/compile'
import { translateQueryString } from '../query/query-string'
import { termsField } from './text-fields'
import { ftsPrefixQuery, ftsTermQuery } from './text-index'
import { parseDateMath } from '../query/dates'
import { isObject, keywordOf } from '../query/doc'
import type { IndexMeta } from './catalog'
import { kindOfField } from './catalog'
import { flatObjectRoot, valueAndPathField, valueAndPathKey } from '../query/flat-object'

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
const EMPTY: Plan = { sql: 'SELECT rid FROM docs WHERE 0', params: [], cost: 0, exact: true, distinct: true }
const MAX_IN = 500
/** Below SQLite's limit of terms in one compound SELECT (500): larger disjunctions scan instead. */
const MAX_UNION = 100

export function planQuery(q: unknown, meta: IndexMeta, now: number): Plan | null {
  try {
    return new Planner(meta, now).node(q)
  } catch {
    return null // the evaluator reports malformed queries with OpenSearch's errors
  }
}

class Planner {
  constructor(
    private readonly meta: IndexMeta,
    private readonly now: number,
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
        if (params.case_insensitive === true) return null
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
        if (params.case_insensitive === true || typeof value !== 'string' || !/^(?:[^*?\\]|\\.)*\*$/.test(value)) return null
        const prefix = value.slice(0, -1).replace(/\\(.)/g, '$1')
        const p = this.text(field) ? this.textLeaf('prefix', field, prefix) : this.leaf('prefix', field, { value: prefix })
        return p && { ...p, exact: false }
      }
      case 'dis_max':
        return isObject(body) && Array.isArray(body.queries) ? this.union(body.queries, true) : null
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
    }
  }

  private bool(body: unknown): Plan | null {
    if (!isObject(body)) return null
    const list = (v: unknown) => (v === undefined ? [] : Array.isArray(v) ? v : [v])
    const must = [...list(body.must), ...list(body.filter)]
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
      should.length > 0 && (must.length === 0 ? msm === undefined || Number(msm) >= 1 : msm !== undefined && Number(msm) >= 1)
    if (!best && shouldRequired && (msm === undefined || Number(msm) === 1)) {
      const union = this.union(should, must.length === 0 && list(body.must_not).length === 0)
      if (union) return union
    }
    // One conjunct is exact for the whole bool only when it is the bool's only clause.
    if (best && (must.length !== 1 || should.length > 0 || list(body.must_not).length > 0)) return { ...best, exact: false }
    return best
  }

  /**
   * A bool of only selective clauses (term, terms, ids; `must_not` too) is their rows' intersection
   * less the excluded rows, exactly: counted from the index, only the page's documents read. Without
   * it the most selective clause's rows were each read and checked (a term of 1 in 8 documents and
   * two others made a query_string read an eighth of the index). Broader clauses (ranges, prefixes)
   * stay with the evaluator: intersecting a few rows with a range's every row would cost more.
   */
  private exactConjunction(must: unknown[], mustNot: unknown[]): Plan | null {
    if (must.length + mustNot.length < 2 && !(must.length === 0 && mustNot.length > 0)) return null
    const plans: Plan[] = []
    for (const c of [...must, ...mustNot]) {
      const p = this.node(c)
      if (!p || !p.exact || p.cost > 2 || (p.terms ?? 1) > 1) return null
      plans.push(p)
    }
    // Only exclusions: every document of the index less them.
    const all: Plan = { sql: 'SELECT rid FROM docs WHERE ix = ?', params: [this.meta.ix], cost: 6 }
    const kept = must.length === 0 ? [all] : plans.slice(0, must.length)
    const dropped = plans.slice(must.length)
    return {
      sql: `SELECT rid FROM (${kept.map((p) => `SELECT rid FROM (${p.sql})`).join(' INTERSECT ')}${dropped.map((p) => ` EXCEPT SELECT rid FROM (${p.sql})`).join('')})`,
      params: [...kept, ...dropped].flatMap((p) => p.params),
      cost: Math.min(...kept.map((p) => p.cost)),
      exact: true,
      distinct: true,
    }
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
    const f = this.meta.fieldIds.get(termsField(field))
    if (f === undefined) return EMPTY // no document ever had a token there
    const v = String(value)
    if (type === 'term') return { sql: TEXT_MATCH, params: [ftsTermQuery(f, v)], cost: 1, exact: true, distinct: true }
    if (type !== 'prefix' || v === '') return null
    return { sql: TEXT_MATCH, params: [ftsPrefixQuery(f, v)], cost: 3, exact: true, distinct: true }
  }

  /**
   * `match` (any term, or all with `operator: and`) and `match_phrase` (all terms: the evaluator
   * checks their order) on a text field, from the analysed query's postings; on a keyword or
   * numeric field a `match` is a `term`.
   */
  private match(type: string, field: string, p: Record<string, unknown>): Plan | null {
    const query = p.query
    if (query === undefined || query === null || isObject(query)) return null
    if (!this.text(field)) return type === 'match' && p.fuzziness === undefined ? this.leaf('term', field, { value: query }) : null
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

  private leaf(type: string, field: string, p: Record<string, unknown>): Plan | null {
    // A path below a flat_object reads the root's `_valueAndPath` keys: the path, then the value.
    const root = this.meta.specs.has(field) ? undefined : flatObjectRoot(this.meta.specs, field)
    const under = root === undefined ? undefined : valueAndPathKey(field.slice(root.length + 1), '')
    const kind = under === undefined ? kindOfField(this.meta, field) : 'keyword'
    if (!kind) return null
    const f = this.meta.fieldIds.get(root === undefined ? field : valueAndPathField(root))
    if (f === undefined) return EMPTY // mapped but no document ever had a value
    const conv = (v: unknown, roundUp = false): Bind | undefined => {
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
            return parseDateMath(v, roundUp, this.now, this.meta.specs.get(field)?.format)
          } catch {
            return undefined
          }
      }
    }
    if (type === 'term') {
      if (kind === 'date' && typeof p.value === 'string' && (p.value.includes('/') || p.value.startsWith('now'))) return null
      const v = conv(p.value)
      if (v === undefined) return null
      return { sql: 'SELECT rid FROM fv WHERE f = ? AND v = ?', params: [f, v], cost: 1, exact: true, distinct: true }
    }
    if (type === 'terms') {
      const values = (p.value as unknown[]).map((x) => conv(x))
      if (values.length > MAX_IN || values.some((v) => v === undefined)) return null
      if (values.length === 0) return EMPTY
      return {
        sql: `SELECT rid FROM fv WHERE f = ? AND v IN (${values.map(() => '?').join(',')})`,
        params: [f, ...(values as Bind[])],
        // One value is a term (as selective); more may read more rows than a term of the same field.
        cost: values.length === 1 ? 1 : 2,
        exact: true,
        field: f,
      }
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
    const b: Record<string, unknown> = { gt: p.gt, gte: p.gte, lt: p.lt, lte: p.lte }
    if ('from' in p || 'to' in p) {
      if (p.from != null) b[p.include_lower === false ? 'gt' : 'gte'] = p.from
      if (p.to != null) b[p.include_upper === false ? 'lt' : 'lte'] = p.to
    }
    if (typeof p.format === 'string') return null
    const ops: Record<string, string> = { gt: '>', gte: '>=', lt: '<', lte: '<=' }
    let sql = 'SELECT rid FROM fv WHERE f = ?'
    const params: Bind[] = [f]
    for (const op of ['gt', 'gte', 'lt', 'lte']) {
      if (b[op] === undefined || b[op] === null) continue
      const v = conv(b[op], op === 'gt' || op === 'lte')
      if (v === undefined) return null
      sql += ` AND v ${ops[op]} ?`
      params.push(v)
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
    return { sql, params, cost: params.length > 2 ? 4 : 5, exact: true, field: f }
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

/**
 * What OpenSearch does to `terms` queries before a shard runs them: a terms lookup
 * (`{"terms": {"user": {"index", "id", "path"}}}`) is replaced by the values found at `path` in
 * that document, and no `terms` query may carry more than `index.max_terms_count` values.
 * Only positions that hold queries are visited (compound queries' clauses), never field values;
 * a lookup anywhere else is refused by the query compiler, so nothing else ever fetches.
 *
 * A lookup reads a document, so on a caller's behalf it must pass that caller's read gate
 * (src/indexer/read-gate.ts): `resolveTermsLookups` (the query) and `resolveAggregationLookups`
 * (the queries aggregations hold) let the gate fetch them first, and the store's own
 * `rewriteTerms` then sees plain value lists.
 */
import { IllegalArgument, ParsingError, QueryShardError } from '../errors'
import { soleEntry } from '../../json'
import { fieldPath, isObject } from './doc'
import { checkJsonDepth } from './limits'

type Source = Record<string, unknown>

export interface TermsRewrite {
  /** The source of a document for a lookup; undefined when the document does not exist. */
  lookup(index: string, id: string): Source | undefined
  /** `index.max_terms_count` of the searched indices (the smallest one applies). */
  maxTerms: number
}

/** One terms lookup: the document it reads and where the values are. */
export interface TermsLookup {
  index: string
  id: string
  path: string
}

export const DEFAULT_MAX_TERMS_COUNT = 65_536

/** Resolves lookups with the store's own reads and enforces `index.max_terms_count`. */
export function rewriteTerms(query: unknown, r: TermsRewrite): unknown {
  return withTermsValues(query, mapTermsQueries, r)
}

function withTermsValues(tree: unknown, walk: Walk, r: TermsRewrite): unknown {
  return walk(tree, (body) => {
    const out: Record<string, unknown> = { ...body }
    for (const [field, v] of termFields(body)) {
      const lookup = lookupOf(v)
      const values = lookup ? valuesAt(r.lookup(lookup.index, lookup.id), lookup.path) : Array.isArray(v) ? v : undefined
      if (lookup) out[field] = values
      if (values && values.length > r.maxTerms)
        // OpenSearch refuses it while creating the shard's query: query_shard_exception.
        throw new QueryShardError(
          `failed to create query: The number of terms [${values.length}] used in the Terms Query request has exceeded the allowed maximum of [${r.maxTerms}]. This maximum can be set by changing the [index.max_terms_count] index level setting.`,
        )
    }
    return out
  })
}

/**
 * Every terms lookup of the query, in query order (malformed lookup elements are a 400). The
 * walk recurses, so a query nested deeper than the parser allows is refused (400) first: this
 * runs in the read gate, before the store's own checks.
 */
export function termsLookups(query: unknown, walk: Walk = mapTermsQueries): TermsLookup[] {
  checkJsonDepth(query)
  const found: TermsLookup[] = []
  walk(query, (body) => {
    for (const [, v] of termFields(body)) {
      const lookup = lookupOf(v)
      if (lookup) found.push(lookup)
    }
    return body
  })
  return found
}

/**
 * The query with every terms lookup replaced by the values `fetch` finds (each document
 * fetched once); `fetch` is where the caller's rights are checked. The value-count limit is
 * left to the store, which knows the indices' settings.
 */
export async function resolveTermsLookups(query: unknown, fetch: Fetch): Promise<unknown> {
  return resolveIn(query, mapTermsQueries, fetch)
}

/**
 * An aggregation tree (`aggs` of a search) with the terms lookups of the queries it holds resolved
 * as resolveTermsLookups resolves the search's query: OpenSearch runs those queries as any other.
 */
export async function resolveAggregationLookups(aggs: unknown, fetch: Fetch): Promise<unknown> {
  return resolveIn(aggs, (tree, each) => mapAggregationQueries(tree, (q) => mapTermsQueries(q, each)), fetch)
}

type Fetch = (index: string, id: string) => Promise<Source | undefined>
/** Applies `each` to the body of every `terms` query a tree holds at query positions. */
type Walk = (tree: unknown, each: (body: Record<string, unknown>) => Record<string, unknown>) => unknown

async function resolveIn(tree: unknown, walk: Walk, fetch: Fetch): Promise<unknown> {
  const lookups = termsLookups(tree, walk)
  if (lookups.length === 0) return tree
  const key = (l: { index: string; id: string }) => `${l.index}\u0000${l.id}`
  const sources = new Map<string, Source | undefined>()
  for (const l of lookups) if (!sources.has(key(l))) sources.set(key(l), await fetch(l.index, l.id))
  return withTermsValues(tree, walk, { lookup: (index, id) => sources.get(key({ index, id })), maxTerms: Number.POSITIVE_INFINITY })
}

/**
 * Applies `each` to every query an aggregation tree holds, at any depth: a `filter`
 * aggregation's, and each of the named (or listed) `filters` of `filters` and `adjacency_matrix`.
 * Anything malformed is left as it is, for the store's parser to refuse.
 */
function mapAggregationQueries(aggs: unknown, each: (query: unknown) => unknown): unknown {
  if (!isObject(aggs)) return aggs
  // Built with fromEntries: aggregation names are caller input (`__proto__` is a name like any).
  const one = (key: string, v: unknown): unknown => {
    if (key === 'aggs' || key === 'aggregations') return mapAggregationQueries(v, each)
    if (key === 'filter') return each(v)
    if ((key === 'filters' || key === 'adjacency_matrix') && isObject(v)) return { ...v, filters: eachFilter(v.filters, each) }
    return v
  }
  return Object.fromEntries(
    Object.entries(aggs).map(([name, def]) => [
      name,
      isObject(def) ? Object.fromEntries(Object.entries(def).map(([key, v]) => [key, one(key, v)])) : def,
    ]),
  )
}

function eachFilter(filters: unknown, each: (query: unknown) => unknown): unknown {
  if (Array.isArray(filters)) return filters.map(each)
  if (!isObject(filters)) return filters
  return Object.fromEntries(Object.entries(filters).map(([k, q]) => [k, each(q)]))
}

/** Applies `each` to the body of every `terms` query found at a query position. */
function mapTermsQueries(query: unknown, each: (body: Record<string, unknown>) => Record<string, unknown>): unknown {
  const clause = soleEntry(query)
  if (!clause) return query
  const [type, body] = clause
  const walk = (q: unknown) => mapTermsQueries(q, each)
  const all = (v: unknown) => (Array.isArray(v) ? v.map(walk) : walk(v))
  switch (type) {
    case 'bool': {
      const out: Record<string, unknown> = { ...body }
      for (const k of ['must', 'filter', 'should', 'must_not']) if (body[k] !== undefined) out[k] = all(body[k])
      return { bool: out }
    }
    case 'constant_score':
      return { constant_score: { ...body, filter: walk(body.filter) } }
    case 'nested':
      return { nested: { ...body, query: walk(body.query) } }
    case 'dis_max':
      return { dis_max: { ...body, queries: all(body.queries) } }
    case 'terms':
      return { terms: each(body) }
    default:
      return query
  }
}

/** The (field, values) entries of a terms query body, options left out. */
function termFields(body: Record<string, unknown>): Array<[string, unknown]> {
  return Object.entries(body).filter(([field]) => field !== '_name' && field !== 'boost' && field !== 'value_type')
}

function lookupOf(v: unknown): TermsLookup | undefined {
  if (Array.isArray(v) || !isObject(v)) return undefined
  if (typeof v.index !== 'string' || v.id === undefined || typeof v.path !== 'string')
    throw new ParsingError('[terms] query lookup element requires specifying the [index], [id] and [path]')
  return { index: v.index, id: String(v.id), path: v.path }
}

function valuesAt(source: Source | undefined, path: string): unknown[] {
  return source === undefined ? [] : fieldPath(path).collect(source)
}

/**
 * The name of the first clause anywhere in a search body (query, aggregations, any depth) that
 * would read a document by index and id: a terms lookup, `more_like_this` on indexed documents,
 * a shape indexed elsewhere, a stored percolator document. Routes that run a caller's query with
 * the service's rights (plugin `_search` routes; in platform mode the platform would resolve
 * them as the service account) refuse such bodies. The walk keeps its own stack: bodies are
 * caller input.
 */
export function documentFetchingClause(body: unknown): string | undefined {
  const stack: unknown[] = [body]
  while (stack.length > 0) {
    const v = stack.pop()
    if (Array.isArray(v)) {
      for (const x of v) stack.push(x)
      continue
    }
    if (!isObject(v)) continue
    for (const [key, child] of Object.entries(v)) {
      // A terms aggregation has object members too (`include`, `order`): a lookup names a document.
      if (key === 'terms' && isObject(child) && termFields(child).some(([, x]) => isObject(x) && ('index' in x || 'id' in x)))
        return 'terms lookup'
      if (key === 'indexed_shape') return key
      if (key === 'more_like_this' && isObject(child) && [child.like, child.unlike].flat().some((x) => isObject(x) && '_id' in x))
        return key
      if (key === 'percolate' && isObject(child) && child.id !== undefined) return key
      stack.push(child)
    }
  }
  return undefined
}

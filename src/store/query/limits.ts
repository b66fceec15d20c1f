/**
 * OpenSearch's bounds on what one search may ask for, with its setting names, defaults and 400
 * error texts. They bound the work a caller can cause before any document is read: nesting (the
 * evaluator and every query rewrite recurse), clause counts, regex length.
 */
import { IllegalArgument, QueryShardError, StoreError } from '../errors'
import { nestKeys } from '../flat-keys'

/** A numeric index setting (`index.*` limits) when it is set to a finite number, else its default. */
export function numericSetting(settings: Record<string, unknown> | undefined, key: string, dflt: number): number {
  const v = Number(settings?.[key])
  return settings?.[key] !== undefined && Number.isFinite(v) ? v : dflt
}

export interface QueryLimits {
  /** `index.max_regex_length` */
  maxRegexLength: number
  /** `indices.query.bool.max_clause_count` */
  maxClauseCount: number
  /** `index.query.max_nested_depth` (levels of `nested` queries) */
  maxNestedDepth: number
  /** `search.allow_expensive_queries` (true when absent); see query-guards.ts */
  allowExpensiveQueries?: boolean
  /** The index's `index.analysis` settings, nested: the analyzers a full-text query may name besides the built-in ones. */
  analysis?: Record<string, unknown>
}

export const DEFAULT_QUERY_LIMITS: QueryLimits = { maxRegexLength: 1000, maxClauseCount: 1024, maxNestedDepth: 20 }

/**
 * OpenSearch's JSON parser refuses objects and arrays nested deeper than this
 * (`opensearch.xcontent.depth.max`, 1,000 since 2.12), for queries and documents alike.
 */
export const MAX_JSON_DEPTH = 1000

/**
 * Iterative (no recursion, so any depth is safe to measure): does `value` nest deeper than `max`?
 * Only objects and arrays are stacked: every document written is measured, and most of its values
 * are leaves.
 */
export function nestingExceeds(value: unknown, max: number): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  const stack: Array<[object, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (d > max) return d
    if (Array.isArray(v)) {
      for (const x of v) if (typeof x === 'object' && x !== null) stack.push([x, d + 1])
    } else
      for (const k in v)
        if (Object.hasOwn(v, k)) {
          const x = (v as Record<string, unknown>)[k]
          if (typeof x === 'object' && x !== null) stack.push([x, d + 1])
        }
  }
  return undefined
}

/** A search body (or document) nested deeper than OpenSearch's parser reads: 400, before anything recurses. */
export function checkJsonDepth(value: unknown, max = MAX_JSON_DEPTH): void {
  const d = nestingExceeds(value, max)
  if (d !== undefined)
    throw new StoreError(
      'x_content_parse_exception',
      400,
      `Document nesting depth (${d}) exceeds the maximum allowed (${max}, from \`StreamReadConstraints.getMaxNestingDepth()\`)`,
    )
}

export function checkRegexLength(pattern: string, max: number): void {
  if (pattern.length > max)
    throw new IllegalArgument(
      `The length of regex [${pattern.length}] used in the Regexp Query request has exceeded the allowed maximum of [${max}]. This maximum can be set by changing the [index.max_regex_length] index level setting.`,
    )
}

export function checkNestedDepth(depth: number, max: number): void {
  if (depth > max)
    throw new IllegalArgument(
      `The depth of Nested Query is [${depth}] has exceeded the allowed maximum of [${max}]. This maximum can be set by changing the [index.query.max_nested_depth] index level setting.`,
    )
}

/**
 * Lucene's clause limits: one boolean query may hold at most `maxClauseCount` clauses, and a whole
 * query at most that many clauses in all (its TooManyNestedClauses).
 */
export class ClauseBudget {
  private used = 0
  constructor(private readonly max: number) {}

  spend(n: number): void {
    this.used += n
    if (this.used > this.max)
      throw new QueryShardError(`failed to create query: Query contains too many nested clauses; maxClauseCount is set to ${this.max}`)
  }

  bool(clauses: number): void {
    if (clauses > this.max) throw new QueryShardError(`failed to create query: maxClauseCount is set to ${this.max}`)
  }
}

/** The limits of a search on one index: its own settings over the node's clause limit. */
export function indexLimits(
  settings: Record<string, unknown> | undefined,
  maxClauseCount = DEFAULT_QUERY_LIMITS.maxClauseCount,
  allowExpensiveQueries = true,
): QueryLimits {
  const read = (key: string, dflt: number) => numericSetting(settings, key, dflt)
  return {
    maxRegexLength: read('index.max_regex_length', DEFAULT_QUERY_LIMITS.maxRegexLength),
    maxNestedDepth: read('index.query.max_nested_depth', DEFAULT_QUERY_LIMITS.maxNestedDepth),
    maxClauseCount,
    allowExpensiveQueries,
    analysis: analysisOf(settings),
  }
}

/** `index.analysis.*` of flat settings, nested (`{analyzer: {my: {tokenizer: ...}}}`). */
function analysisOf(settings: Record<string, unknown> | undefined): Record<string, unknown> {
  const flat = Object.entries(settings ?? {}).filter(([key]) => key.startsWith(ANALYSIS))
  return nestKeys(Object.fromEntries(flat.map(([key, value]) => [key.slice(ANALYSIS.length), value])))
}
const ANALYSIS = 'index.analysis.'

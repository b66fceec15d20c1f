/**
 * A terms aggregation's `include` and `exclude`: which terms may become buckets (the others are
 * neither shown nor counted as other). A string is a regular expression over the whole term
 * (Lucene's syntax, string fields only); an array lists exact terms, read as the field's type
 * reads them (a number field refuses a word, as OpenSearch's number parsing does); an object
 * includes one partition of the terms (aggs-partitions.ts).
 */
import { IllegalArgument, ParsingError, ShardsFailed, StoreError } from '../errors'
import { toNumber } from '../query/compile'
import { parseDate } from '../query/dates'
import { isObject } from '../query/doc'
import { luceneRegExp } from '../query/lucene-regexp'
import type { Key } from './aggs-order'
import { partitionFilter } from './aggs-partitions'

export type KeyFilter = (key: Key) => boolean

/** The field an aggregation reads in one index: its kind, its mapped type (undefined: unmapped). */
export interface FieldOf {
  kind: string
  type?: string
  index: string
}

/** The filter of these terms parameters for the field; undefined when nothing is filtered. */
export function termsKeyFilter(name: string, params: Record<string, unknown>, field: FieldOf): KeyFilter | undefined {
  if (isObject(params.include)) {
    if (params.exclude !== undefined && params.exclude !== null)
      throw new IllegalArgument('Cannot specify any excludes when using a partition-based include')
    return partitionFilter(params.include, field.type)
  }
  const include = part(name, params.include, field, 'include')
  const exclude = part(name, params.exclude, field, 'exclude')
  if (!include && !exclude) return undefined
  return (key) => (!include || include(key)) && (!exclude || !exclude(key))
}

function part(name: string, v: unknown, { kind, index }: FieldOf, which: string): KeyFilter | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v === 'string') {
    // The shard's aggregator refuses it: a 500 shard failure in OpenSearch; the request is what is
    // wrong, so a 400 here with its type and words.
    if (kind !== 'keyword')
      throw new ShardsFailed(
        'aggregation_execution_exception',
        `Aggregation [${name}] cannot support regular expression style include/exclude settings as they can only be applied to string fields. ${
          kind === 'number' || kind === 'date' || kind === 'boolean'
            ? 'Use an array of numeric values for include/exclude clauses used to filter numeric fields'
            : 'Use an array of values for include/exclude clauses'
        }`,
        index,
      )
    const matches = luceneRegExp(v)
    return (key) => typeof key === 'string' && matches.test(key)
  }
  if (Array.isArray(v)) {
    if (kind === 'date') {
      const dates = new Set(v.map((x) => parseDate(x)))
      return (key) => dates.has(Number(key))
    }
    if (kind === 'number') {
      const numbers = new Set(
        v.map((x) => {
          const n = toNumber(x)
          if (n === undefined) throw new StoreError('number_format_exception', 400, `For input string: "${String(x)}"`)
          return n
        }),
      )
      return (key) => numbers.has(Number(key))
    }
    // Booleans are counted under 1 and 0.
    const terms = new Set(v.map((x) => (kind === 'boolean' ? (String(x) === 'true' ? '1' : '0') : String(x))))
    return (key) => terms.has(String(key))
  }
  throw new ParsingError(`Unexpected token in [${which}] of terms aggregation [${name}]`)
}

/**
 * A terms aggregation's `include` and `exclude`: which terms may become buckets (the others are
 * neither shown nor counted as other). A string is a regular expression over the whole term
 * (Lucene's syntax, string fields only); an array lists exact terms, read as the field's type
 * reads them (a number field refuses a word, as OpenSearch's number parsing does).
 */
import { IllegalArgument, ParsingError, StoreError } from '../errors'
import { toNumber } from '../query/compile'
import { parseDate } from '../query/dates'
import { isObject } from '../query/doc'
import { luceneRegExp } from '../query/lucene-regexp'
import type { Key } from './aggs-order'

export type KeyFilter = (key: Key) => boolean

/** The filter of these terms parameters for a field of this kind; undefined when nothing is filtered. */
export function termsKeyFilter(name: string, params: Record<string, unknown>, kind: string): KeyFilter | undefined {
  const include = part(name, params.include, kind, 'include')
  const exclude = part(name, params.exclude, kind, 'exclude')
  if (!include && !exclude) return undefined
  return (key) => (!include || include(key)) && (!exclude || !exclude(key))
}

function part(name: string, v: unknown, kind: string, which: string): KeyFilter | undefined {
  if (v === undefined || v === null) return undefined
  if (typeof v === 'string') {
    if (kind !== 'keyword')
      throw new IllegalArgument(
        `Aggregation [${name}] cannot support regular expression style include/exclude settings as they can only be applied to string fields. ${
          kind === 'number' || kind === 'date'
            ? 'Use an array of numeric values for include/exclude clauses used to filter numeric fields'
            : 'Use an array of values for include/exclude clauses'
        }`,
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
  if (isObject(v) && which === 'include' && v.partition !== undefined)
    throw new IllegalArgument(`[${name}] include partitions are not supported by this server`)
  throw new ParsingError(`Unexpected token in [${which}] of terms aggregation [${name}]`)
}

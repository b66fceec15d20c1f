/**
 * `stored_fields`, for the get API and search: the fields mapped `store: true` are answered from
 * the source (this store keeps no separate stored values), and the option decides whether a search
 * hit carries `_id` and `_source` at all.
 */
import { isMalformed } from '../query/malformed'
import { IllegalArgument, ParsingError, ShardsFailed } from '../errors'
import type { SearchBody } from '../port'
import { fieldPath } from '../query/doc'
import { sourceSpec } from '../source-filter'
import type { IndexMeta } from './catalog'
import { storedFields, storedValue } from './mapping'

export const listOf = (v: string | string[]): string[] => (Array.isArray(v) ? v : v.split(',')).map((s) => s.trim()).filter(Boolean)

/** Values of the wanted fields mapped `store: true`, by path; the names taken as they are (a wildcard names no field). */
export function storedValues(meta: IndexMeta, source: Record<string, unknown>, wanted: string[]): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {}
  for (const [path, type] of storedFields(meta.mappings)) {
    if (!wanted.includes(path)) continue
    const spec = meta.specs.get(path)
    // A value skipped as malformed was not stored either.
    const values = fieldPath(path)
      .collect(source)
      .filter((v) => !spec?.ignore_malformed || !isMalformed(v, spec))
    if (values.length > 0) out[path] = values.map((v) => storedValue(v, type, spec?.format))
  }
  return out
}

/** What a search's hits carry: `_id` (not with `_none_`), the source filter (null: no `_source`), stored field names. */
export interface HitFetch {
  withId: boolean
  spec: ReturnType<typeof sourceSpec>
  stored: string[]
}

const tokenOf = (v: unknown) =>
  v === null ? 'VALUE_NULL' : typeof v === 'number' ? 'VALUE_NUMBER' : typeof v === 'boolean' ? 'VALUE_BOOLEAN' : 'START_OBJECT'

/**
 * A search's `stored_fields` with its `_source`, as OpenSearch reads them: without `stored_fields`
 * the source as `_source` says; `_none_` (alone) drops `_id` and `_source` and refuses a requested
 * source; other names drop `_source` unless it is named or requested.
 */
export function hitFetch(body: SearchBody, index: string): HitFetch {
  const raw = (body as { stored_fields?: unknown }).stored_fields
  if (raw === undefined) return { withId: true, spec: sourceSpec(body._source), stored: [] }
  if (typeof raw !== 'string' && !(Array.isArray(raw) && raw.every((n) => typeof n === 'string')))
    throw new ParsingError(
      `Expected [VALUE_STRING] or [START_ARRAY] in [stored_fields] but found [${tokenOf(Array.isArray(raw) ? raw.find((n) => typeof n !== 'string') : raw)}]`,
    )
  const names = listOf(raw)
  const requested = body._source !== undefined && body._source !== false
  if (names.includes('_none_')) {
    if (names.length > 1) throw new IllegalArgument('cannot combine _none_ with other fields')
    if (requested) throw new ShardsFailed('search_exception', '[stored_fields] cannot be disabled if [_source] is requested', index)
    return { withId: false, spec: null, stored: [] }
  }
  const source = requested || names.includes('_source') ? sourceSpec(body._source) : null
  return { withId: true, spec: source, stored: names.filter((n) => n !== '_source') }
}

/**
 * Aggregations that read the whole index, not only the matched documents: the background of
 * `significant_terms` and `significant_text`, and the terms a `terms` aggregation lists with
 * `min_doc_count: 0`. A caller whose reads are filtered (DLS, a feature's filter) must not learn
 * through them the terms of documents it cannot read: its background is confined to the filter
 * (ANDed into `background_filter`), and `min_doc_count: 0` lists no term of an unmatched document
 * (read as 1). OpenSearch's security plugin filters the shard's reader itself (platform mode
 * streams the index API to it with the caller's credentials); the embedded store reads whole
 * indices, so the gate confines what they read to what the caller may.
 */
import { isObject } from '../store/query/doc'
import type { Query } from '../store/port'

export function confineToReadFilter(aggs: unknown, filter: Query): unknown {
  if (!isObject(aggs)) return aggs
  const out: Record<string, unknown> = {}
  for (const [name, def] of Object.entries(aggs)) {
    if (!isObject(def)) {
      out[name] = def
      continue
    }
    const confined: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(def)) confined[key] = confinedPart(key, value, filter)
    out[name] = confined
  }
  return out
}

function confinedPart(key: string, value: unknown, filter: Query): unknown {
  if (key === 'aggs' || key === 'aggregations') return confineToReadFilter(value, filter)
  if (!isObject(value)) return value
  if (key === 'significant_terms' || key === 'significant_text') {
    const given = value.background_filter
    return { ...value, background_filter: given === undefined ? filter : { bool: { filter: [filter, given] } } }
  }
  if (key === 'terms' && value.min_doc_count !== undefined && Number(value.min_doc_count) === 0) return { ...value, min_doc_count: 1 }
  return value
}

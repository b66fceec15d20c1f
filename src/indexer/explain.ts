/**
 * `_explain`: whether one document matches a query, and its score. The document is read
 * through the same gate as `GET <index>/_doc` (a document hidden by DLS is not found) and the
 * query runs through the search gate (authorization, DLS) restricted to its id.
 */
import type { Query, SearchBody } from '../store/port'
import { badRequest, type RequestContext } from './context'
import { sourceParams } from './documents'
import { authorizeRead, filteredGet, searchQuery } from './read-gate'
import { Reply, type IndexRouter } from './router'
import { uriQuery } from './search'
import { scoreExplanation } from './explanation'

export const EXPLAIN_ACTION = 'indices:data/read/explain'

async function explain(ctx: RequestContext) {
  const name = ctx.part('index')!
  const id = ctx.part('id')!
  const index = await authorizeRead(ctx, name, EXPLAIN_ACTION)
  const body = (await ctx.json()) ?? {}
  for (const key of Object.keys(body)) if (key !== 'query') throw badRequest(`request does not support [${key}]`, 'parsing_exception')
  const query = uriQuery(ctx) ?? body.query
  if (query === undefined) throw badRequest('Validation Failed: 1: query is missing;', 'action_request_validation_exception')
  if (query === null || typeof query !== 'object' || Array.isArray(query))
    throw badRequest('[query] must be an object', 'parsing_exception')
  const source = sourceParams(ctx)
  const wantSource = Object.keys(source).length > 0
  const doc = await filteredGet(ctx, index, { index: name, id, ...(wantSource ? source : { _source: false }) })
  if (!doc.found) return new Reply(404, { _index: index, _id: id, matched: false })
  // `_source` parameters add the document, as OpenSearch's explain answers it under `get`.
  const get = wantSource
    ? { get: { _seq_no: doc._seq_no, _primary_term: doc._primary_term, found: true, ...(doc._source ? { _source: doc._source } : {}) } }
    : {}
  const scoped: Query = { bool: { must: [query], filter: [{ ids: { values: [id] } }] } }
  const res = await ctx.store.search({
    index: name,
    expand_wildcards: 'all',
    body: { query: await searchQuery(ctx, scoped, [index]), size: 1, _source: false, track_total_hits: false } as SearchBody,
  })
  const hit = res.hits.hits.find((h) => h._index === index)
  if (!hit) {
    return { _index: index, _id: id, matched: false, explanation: { value: 0, description: 'no matching clause', details: [] }, ...get }
  }
  const score = hit._score ?? 1
  return {
    _index: index,
    _id: id,
    matched: true,
    explanation: scoreExplanation(score),
    ...get,
  }
}

export function explainRoutes(r: IndexRouter): void {
  r.on(['GET', 'POST'], '/:index/_explain/:id', explain)
}

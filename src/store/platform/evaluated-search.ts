/**
 * Searches and counts whose query the platform can only run as a superset (./private-nodes.ts):
 * the platform answers the superset, and THE in-memory evaluator (src/store/query, typed by each
 * hit's index mapping, as the embedded store types it) keeps the hits the original query matches.
 * Pages can then hold fewer than `size` hits; `hits.total` drops what this page removed. A count
 * reads at most `index.max_result_window` documents; a larger superset is refused (400), never
 * answered wrongly. Aggregations over such a query are refused too: they cannot be re-evaluated.
 */
import { IllegalArgument } from '../errors'
import { fieldSpecs } from '../embedded'
import type { CountResponse, Mappings, SearchBody, SearchHit, SearchResponse } from '../port'
import { compile, DocView, type FieldTypes, type Test } from '../query'
import { filterSource, sourceSpec } from '../source-filter'

/** OpenSearch's default `index.max_result_window`: the most documents one count may evaluate. */
export const MAX_EVALUATED_DOCUMENTS = 10_000

export interface EvaluatedSearchDeps {
  /** The platform's answer to the superset body. */
  search(body: SearchBody): Promise<SearchResponse>
  mapping(index: string): Promise<Mappings | undefined>
}

export async function evaluatedSearch(deps: EvaluatedSearchDeps, original: SearchBody, sent: SearchBody): Promise<SearchResponse> {
  if (sent.aggs !== undefined || sent.aggregations !== undefined)
    throw new IllegalArgument(
      'aggregations are not supported on a query that svc-ext evaluates on the fetched documents (_fieldref, _cidr, regexp superset)',
    )
  const r = await deps.search({ ...sent, _source: true })
  const kept = await matching(deps, original.query, r.hits.hits)
  const spec = sourceSpec(original._source as never)
  for (const h of kept) {
    const source = filterSource(h._source ?? {}, spec)
    if (source === undefined) delete h._source
    else h._source = source
  }
  const removed = r.hits.hits.length - kept.length
  const total = r.hits.total
  r.hits.hits = kept
  if (typeof total === 'number') r.hits.total = total - removed
  else if (total) r.hits.total = { value: total.value - removed, relation: total.relation }
  return r
}

export async function evaluatedCount(deps: EvaluatedSearchDeps, original: SearchBody, sent: SearchBody): Promise<CountResponse> {
  const r = await deps.search({
    query: sent.query,
    size: MAX_EVALUATED_DOCUMENTS,
    track_total_hits: MAX_EVALUATED_DOCUMENTS + 1,
    _source: true,
  })
  const total = r.hits.total
  const superset = typeof total === 'number' ? total : (total?.value ?? r.hits.hits.length)
  if (superset > MAX_EVALUATED_DOCUMENTS)
    throw new IllegalArgument(
      `counting this query needs more than [${MAX_EVALUATED_DOCUMENTS}] documents evaluated by svc-ext; narrow it with a filter the platform can run`,
    )
  return { count: (await matching(deps, original.query, r.hits.hits)).length, _shards: r._shards }
}

/** The hits the original query matches, each evaluated with its own index's mapping. */
async function matching(deps: EvaluatedSearchDeps, query: unknown, hits: SearchHit[]): Promise<SearchHit[]> {
  const tests = new Map<string, Promise<Test>>()
  const testFor = (index: string) => {
    let t = tests.get(index)
    if (!t) {
      t = deps.mapping(index).then((m) => compile(query, m?.properties ? (fieldSpecs(m) as FieldTypes) : undefined).test)
      tests.set(index, t)
    }
    return t
  }
  const out: SearchHit[] = []
  for (const h of hits) if ((await testFor(h._index))(new DocView(h._source ?? {}, h._id, h._index))) out.push(h)
  return out
}

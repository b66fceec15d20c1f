/**
 * The explanation of a hit's score, for `_explain` and `explain: true`: its value and a one-level
 * breakdown. The store scores whole queries (BM25 per text clause, summed as OpenSearch's bool
 * does) without keeping each clause's part, so the breakdown is the query's score, not Lucene's tree.
 */
import type { SearchHit } from '../store/port'
import { nodeIdOf } from './node-info'
import type { RequestContext } from './context'

export const scoreExplanation = (score: number) => ({
  value: score,
  description: 'sum of:',
  details: [{ value: score, description: 'score of the query', details: [] }],
})

/** `explain: true`: each hit says its shard, its node and how it scored, as OpenSearch's hits do. */
export function explainHits(ctx: RequestContext, hits: SearchHit[]): void {
  const node = nodeIdOf(ctx)
  for (const hit of hits) Object.assign(hit, { _shard: `[${hit._index}][0]`, _node: node, _explanation: scoreExplanation(hit._score ?? 1) })
}

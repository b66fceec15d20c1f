/**
 * What some aggregations read of a whole index, whatever the search's query: `significant_terms`'
 * background and the terms `terms` lists with `min_doc_count: 0`. Read before the matches are
 * collected, giving the event loop back as a scan does and stopping at the search's time budget:
 * read where the aggregation answers, a large index held the node for as long as it took. Each
 * distinct key they keep draws on the request's distinct-key budget (BucketBudget.candidate, the
 * request breaker), as the keys its aggregations collect do: a whole index is not bounded by a setting.
 */
import { aggDefs, type AggValue, type BucketBudget, reader, type TargetCtx } from './aggs'
import { countBackgrounds } from './aggs-significant'
import type { Key } from './aggs-order'
import type { Pacer } from './pacer'

type Pace = Pick<Pacer, 'due' | 'pause'>
type Budget = Pick<BucketBudget, 'candidate'>

/** Reads ahead what the request's aggregations need of whole indices; false once the search is out of time. */
export async function readWholeIndices(aggs: unknown, targets: TargetCtx[], now: number, pace: Pace, budget: Budget): Promise<boolean> {
  return (await countBackgrounds(aggs, targets, now, pace, budget)) && (await readAllTerms(aggs, targets, pace, budget))
}

/** Every value of the fields of `terms` aggregations with `min_doc_count: 0`, per index (TargetCtx.allTerms). */
async function readAllTerms(aggs: unknown, targets: TargetCtx[], pace: Pace, budget: Budget): Promise<boolean> {
  for (const { type, params } of aggDefs(aggs)) {
    if (type !== 'terms' || typeof params.field !== 'string' || Number(params.min_doc_count) !== 0) continue
    for (const t of targets) {
      const read = t.specs?.get(params.field) ? reader(params.field, t, 'terms') : undefined
      if (!read || t.allTerms?.has(params.field)) continue
      const all = new Map<Key, AggValue>()
      ;(t.allTerms ??= new Map()).set(params.field, all)
      for (const d of t.documents?.({ match_all: {} }) ?? []) {
        if (pace.due() && !(await pace.pause())) return false
        if (d)
          for (const v of read(d))
            if (!all.has(v.key)) {
              budget.candidate()
              all.set(v.key, v)
            }
      }
    }
  }
  return true
}

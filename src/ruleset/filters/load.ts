/**
 * The stored filter rules (both rule spaces' indices), read whenever rules are compiled to run,
 * so a filter created, changed or deleted through the rules API takes effect on the next run.
 */
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import { CUSTOM_RULES_INDEX, ensureIndex, PREPACKAGED_RULES_INDEX } from '../indices'
import type { Space } from '../model'
import { type FilterDocument, parseFilterDocument } from './filter'

/** A stored filter and the rule space it was written in (it only tunes rules of that space). */
export interface StoredFilter {
  space: Space
  filter: FilterDocument
}

/** Filters read per load (the platform's default `index.max_result_window`). */
export const MAX_FILTERS = 10_000

export async function loadFilters(store: Store, log?: Logger): Promise<StoredFilter[]> {
  const out: StoredFilter[] = []
  for (const index of [PREPACKAGED_RULES_INDEX, CUSTOM_RULES_INDEX]) {
    await ensureIndex(store, index)
    const r = await store.search({
      index,
      body: {
        size: MAX_FILTERS,
        _source: ['rule.rule', 'rule.space'],
        query: { term: { 'rule.kind': 'filter' } },
        track_total_hits: false,
      },
    })
    for (const h of r.hits.hits) {
      const stored = (h._source as { rule?: { rule?: string; space?: Space } }).rule
      try {
        out.push({ space: stored?.space ?? 'custom', filter: parseFilterDocument(stored?.rule ?? '') })
      } catch (e) {
        // Validated when written; a filter that no longer parses is skipped, never half-applied.
        log?.warn('stored filter rule skipped: it does not parse', { id: h._id, error: e as Error })
      }
    }
  }
  return out
}

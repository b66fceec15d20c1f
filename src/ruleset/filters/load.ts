/**
 * The stored filter rules (both rule spaces' indices), read whenever rules are compiled to run,
 * so a filter created, changed or deleted through the rules API takes effect on the next run;
 * the last load is kept while neither index sees a write (logtest compiles rules on every call).
 */
import type { Logger } from '../../http/log'
import type { Store } from '../../store/port'
import { VersionedCache } from '../../store/versioned-cache'
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

const RULES_INDICES = [PREPACKAGED_RULES_INDEX, CUSTOM_RULES_INDEX]

/** The last load of each store (the filters of both indices: at most 2 x MAX_FILTERS). */
const loaded = new WeakMap<Store, VersionedCache<StoredFilter[]>>()

/** Shared between callers while unchanged: never modify the answer. */
export function loadFilters(store: Store, log?: Logger): Promise<StoredFilter[]> {
  let cache = loaded.get(store)
  if (!cache) loaded.set(store, (cache = new VersionedCache(1)))
  return cache.get(store.writeMark?.(RULES_INDICES), '', () => readFilters(store, log))
}

async function readFilters(store: Store, log?: Logger): Promise<StoredFilter[]> {
  const out: StoredFilter[] = []
  for (const index of RULES_INDICES) {
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

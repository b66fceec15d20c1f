/**
 * OpenSearch's shard request cache: the answers of `size: 0` searches (aggregations, totals)
 * kept until a write to one of the indices they read, as OpenSearch keeps them until a refresh
 * that changed the shard (`index.requests.cache.enable`, on by default). A request that reads
 * the clock (`now` in date math) or times out is never kept, as there.
 */
import type { SearchResponse } from '../port'
import type { IndexMeta } from './catalog'
import type { StoreCore } from './core'

/** A number per object (mappings and settings objects are replaced, never changed in place). */
const ids = new WeakMap<object, number>()
let lastId = 0
export const idOf = (o: object) => {
  let id = ids.get(o)
  if (id === undefined) ids.set(o, (id = ++lastId))
  return id
}

/** The key of a search's answer, or undefined when it may not be kept. */
export function answerKey(
  targets: Array<{ meta: IndexMeta; filters: unknown }>,
  body: Record<string, unknown>,
  context: unknown,
): string | undefined {
  if (body.size !== 0 || body.profile === true || targets.length === 0) return undefined
  if (targets.some((t) => t.meta.settings['index.requests.cache.enable'] === 'false')) return undefined
  // The first index holds the entry (its writes drop it); the others' writes change the key.
  const indices = targets.map((t) => [t.meta.ix, t.meta.writes ?? 0, idOf(t.meta.specs), idOf(t.meta.settings), t.filters])
  const key = JSON.stringify([indices, context, body])
  // The request's date math, or an alias filter's, may read the clock.
  return /now/i.test(key) ? undefined : key
}

export function cachedAnswer(core: StoreCore, meta: IndexMeta, key: string, started: number): SearchResponse | undefined {
  const json = core.caches.answers.get(meta, key)
  if (json === undefined) return undefined
  const answer = JSON.parse(json) as SearchResponse
  answer.took = Math.round(performance.now() - started)
  return answer
}

export function keepAnswer(core: StoreCore, meta: IndexMeta, key: string, answer: SearchResponse): void {
  if (answer.timed_out) return
  const json = JSON.stringify(answer)
  core.caches.answers.set(meta, key, json, json.length)
}

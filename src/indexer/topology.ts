/**
 * The single-node shard picture that `_cluster/health` and `_cat` report, derived from each
 * index's settings: primaries are always assigned on this node, replicas never are (so any
 * index with replicas makes the cluster yellow, exactly as on a one-node OpenSearch).
 */
import type { Store, ResolveOptions } from '../store/port'

export type Health = 'green' | 'yellow' | 'red'

export interface IndexShards {
  index: string
  shards: number
  replicas: number
  health: Health
  hidden: boolean
}

function num(v: unknown, fallback: number): number {
  const n = Number(v)
  return v === undefined || v === null || Number.isNaN(n) ? fallback : n
}

/**
 * Replicas this one node reports: `auto_expand_replicas` ("0-1", "0-all") expands to
 * nodes - 1 = 0 here, as on a one-node OpenSearch; otherwise the configured number.
 */
function effectiveReplicas(idx: Record<string, unknown>): number {
  const auto = idx.auto_expand_replicas
  if (typeof auto === 'string' && auto !== 'false') {
    const m = /^(\d+)-(\d+|all)$/.exec(auto)
    if (m) return Number(m[1])
  }
  return num(idx.number_of_replicas, 1)
}

/** Number of shards/replicas by index for the indices an expression resolves to (all, by default). */
export async function indexShards(store: Store, index: string | undefined, options: ResolveOptions = {}): Promise<IndexShards[]> {
  const settings = await store.getSettings({ index: index ?? '*', expand_wildcards: 'all', ...options })
  return Object.entries(settings)
    .map(([name, { settings: s }]) => {
      const idx = (s.index ?? {}) as Record<string, unknown>
      const shards = num(idx.number_of_shards, 1)
      const replicas = effectiveReplicas(idx)
      return { index: name, shards, replicas, health: (replicas > 0 ? 'yellow' : 'green') as Health, hidden: String(idx.hidden) === 'true' }
    })
    .sort((a, b) => (a.index < b.index ? -1 : a.index > b.index ? 1 : 0))
}

const RANK: Record<Health, number> = { green: 0, yellow: 1, red: 2 }

export function worst(healths: Health[]): Health {
  return healths.reduce<Health>((w, h) => (RANK[h] > RANK[w] ? h : w), 'green')
}

export function atLeast(actual: Health, wanted: Health): boolean {
  return RANK[actual] <= RANK[wanted]
}

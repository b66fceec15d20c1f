/**
 * Index settings in OpenSearch's two spellings: flat `index.*` keys with string values (how they
 * are stored and compared) and the nested form `GET /<index>/_settings` answers with.
 */
import { IllegalArgument } from './errors'
import { flattenKeys } from './flat-keys'

export type FlatSettings = Record<string, string | string[] | null>

/** `{index: {hidden: true}}`, `{"index.hidden": true}` and `{hidden: true}` all become `{"index.hidden": "true"}`. */
export function flattenSettings(settings: Record<string, unknown> | undefined): FlatSettings {
  const out: FlatSettings = {}
  for (const [key, v] of Object.entries(flattenKeys(settings ?? {})))
    out[key.startsWith('index.') ? key : `index.${key}`] = v === null ? null : Array.isArray(v) ? v.map(String) : String(v)
  return out
}

const POSITIVE = new Set(['index.number_of_shards', 'index.number_of_routing_shards'])
const NON_NEGATIVE = new Set(['index.number_of_replicas', 'index.max_result_window'])
const BOOLEAN = new Set(['index.hidden', 'index.blocks.write', 'index.blocks.read_only', 'index.blocks.read', 'index.blocks.metadata'])

/** Type checks OpenSearch makes on the settings we interpret. */
export function validateSettings(flat: FlatSettings): void {
  for (const [key, v] of Object.entries(flat)) {
    if (v === null || Array.isArray(v)) continue
    if (POSITIVE.has(key) || NON_NEGATIVE.has(key)) {
      const n = Number(v)
      const min = POSITIVE.has(key) ? 1 : 0
      if (!/^-?\d+$/.test(v)) throw new IllegalArgument(`Failed to parse value [${v}] for setting [${key}]`)
      if (n < min) throw new IllegalArgument(`Failed to parse value [${v}] for setting [${key}] must be >= ${min}`)
    }
    if (BOOLEAN.has(key) && v !== 'true' && v !== 'false')
      throw new IllegalArgument(`Failed to parse value [${v}] as only [true] or [false] are allowed.`)
  }
}

/** `30s`, `1m`, `2h`, `1d`, `500ms` -> milliseconds. */
export function parseTimeValue(v: string, setting = 'keep_alive'): number {
  const m = /^(\d+(?:\.\d+)?)(nanos|micros|ms|s|m|h|d)$/.exec(v.trim())
  if (!m)
    throw new IllegalArgument(`failed to parse setting [${setting}] with value [${v}] as a time value: unit is missing or unrecognized`)
  const unit = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2]]!
  return Math.round(Number(m[1]) * unit)
}

/**
 * Primaries and replicas of an index on this single node: `auto_expand_replicas` ("0-1",
 * "0-all") expands to nodes - 1 = 0 here (its lower bound), otherwise `number_of_replicas`.
 */
export function shardCopies(flat: Record<string, unknown>): { primaries: number; replicas: number } {
  const num = (v: unknown, fallback: number) => (v === undefined || v === null || Number.isNaN(Number(v)) ? fallback : Number(v))
  const auto = flat['index.auto_expand_replicas']
  const m = typeof auto === 'string' ? /^(\d+)-(\d+|all)$/.exec(auto) : null
  return { primaries: num(flat['index.number_of_shards'], 1), replicas: m ? Number(m[1]) : num(flat['index.number_of_replicas'], 1) }
}

/**
 * A write or broadcast answer's `_shards` on one node: every copy counts in `total`, only
 * primaries can succeed (replicas are never assigned without a second node), as OpenSearch
 * answers `{total: 2, successful: 1}` for a write to a one-replica index on one node.
 */
export function shardsOf(indices: Array<Record<string, unknown>>): { total: number; successful: number; failed: number } {
  let total = 0
  let successful = 0
  for (const s of indices) {
    const { primaries, replicas } = shardCopies(s)
    total += primaries * (1 + replicas)
    successful += primaries
  }
  return { total, successful, failed: 0 }
}

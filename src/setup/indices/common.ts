import { descend } from '../../json'
import type { FieldMapping } from '../../store/port'

/** Field-mapping shorthands; they keep the big mappings readable. */
export const keyword = (ignore_above = 1024): FieldMapping => ({ type: 'keyword', ignore_above })
export const kw: FieldMapping = { type: 'keyword' }
export const date: FieldMapping = { type: 'date' }
export const bool: FieldMapping = { type: 'boolean' }
export const long: FieldMapping = { type: 'long' }
export const integer: FieldMapping = { type: 'integer' }
export const text: FieldMapping = { type: 'text' }
export const ip: FieldMapping = { type: 'ip' }
export const unsignedLong: FieldMapping = { type: 'unsigned_long' }
export const matchOnlyText: FieldMapping = { type: 'match_only_text' }
/** Kept in `_source` only: no sub-fields, no indexing, no strict check inside. */
export const opaque: FieldMapping = { type: 'object', enabled: false }

export const obj = (properties: Record<string, FieldMapping>, extra: Partial<FieldMapping> = {}): FieldMapping => ({
  type: 'object',
  properties,
  ...extra,
})

/** `a.b.c` paths with one mapping, turned into nested `properties`. */
export function paths(entries: Record<string, FieldMapping>): Record<string, FieldMapping> {
  const root: Record<string, FieldMapping> = {}
  for (const [path, mapping] of Object.entries(entries)) {
    const [level, last] = descend(root, path, (above, part) => {
      const object = (above[part] ??= { type: 'object', properties: {} })
      return (object.properties ??= {}) as Record<string, FieldMapping>
    })
    level[last] = mapping
  }
  return root
}

/** Settings of the hidden, single-shard service indices (no replicas needed, refreshed on write). */
export const internalIndexSettings = (extra: Record<string, unknown> = {}) => ({
  index: {
    hidden: true,
    number_of_shards: 1,
    number_of_replicas: 0,
    auto_expand_replicas: '0-1',
    refresh_interval: '-1',
    codec: 'zstd',
    ...extra,
  },
})

// Helpers over parsed JSON shared by every layer (this module imports nothing).

/** A JSON object: not null, not an array. `T` narrows to the caller's object shape. */
export function isObject<T extends object = Record<string, unknown>>(v: unknown): v is T {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * An object of exactly one key whose value is an object, as that key and value; undefined for
 * anything else. The shape of a query-DSL clause (`{"term": {...}}`): the one read of it for the
 * walks that leave every other shape alone.
 */
export function soleEntry(v: unknown): [string, Record<string, unknown>] | undefined {
  if (!isObject(v)) return undefined
  const keys = Object.keys(v)
  if (keys.length !== 1) return undefined
  const body = v[keys[0]]
  return isObject(body) ? [keys[0], body] : undefined
}

/**
 * The levels of a dotted key under `root`: `next(level, part)` gives (creating it when needed)
 * the level below for every part but the last; returns the innermost level and the last part.
 * The one walk behind nested settings (config/flat-keys) and nested mappings (setup/indices).
 */
export function descend<L>(root: L, key: string, next: (level: L, part: string) => L): [L, string] {
  const parts = key.split('.')
  let level = root
  for (const part of parts.slice(0, -1)) level = next(level, part)
  return [level, parts[parts.length - 1]]
}

/** The JSON token OpenSearch's parsers name a value by in their errors (`found [VALUE_STRING]`). */
export function jsonToken(v: unknown): string {
  if (v === null) return 'VALUE_NULL'
  if (Array.isArray(v)) return 'START_ARRAY'
  if (isObject(v)) return 'START_OBJECT'
  return typeof v === 'string' ? 'VALUE_STRING' : typeof v === 'number' ? 'VALUE_NUMBER' : 'VALUE_BOOLEAN'
}

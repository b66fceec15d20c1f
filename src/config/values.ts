import type { SettingDef, SettingKey, SettingValueOf } from './registry'

export type SettingValue = boolean | number | string | readonly string[]

/** Effective values by flat key; `get` takes only a declared key and answers with its declared type. */
export interface SettingMap extends Map<string, SettingValue> {
  get<K extends SettingKey>(key: K): SettingValueOf<K>
}

// -1 alone: OpenSearch's "none" (no time-out).
const TIME = /^(?:-1|-?\d+(?:nanos|micros|ms|s|m|h|d))$/

/** What a setting accepts, in words, for error messages. */
export function describeRange(def: SettingDef): string {
  switch (def.type) {
    case 'boolean':
      return 'true or false'
    case 'time':
      return 'a time value such as 30s, 5m, 12h or 30d'
    case 'string':
      return def.oneOf ? `one of ${def.oneOf.join(', ')}` : 'a string'
    case 'list':
      return def.maxItems === 1 ? 'a string or a list of one string' : 'a list of strings, or a string of comma-separated values'
    default: {
      const kind = def.type === 'integer' ? 'an integer' : 'a whole number'
      if (def.min !== undefined && def.max !== undefined) return `${kind} from ${def.min} to ${def.max}`
      if (def.min !== undefined) return `${kind} >= ${def.min}`
      return kind
    }
  }
}

/**
 * Parses a raw value (from YAML, the environment or a JSON body) into the
 * setting's type. Strings such as "true" or "30" are accepted for booleans
 * and numbers, as OpenSearch does. Returns an error text when it does not fit.
 */
export function parseSettingValue(def: SettingDef, raw: unknown): { value: SettingValue } | { error: string } {
  const bad = { error: `must be ${describeRange(def)}` }
  switch (def.type) {
    case 'boolean':
      if (typeof raw === 'boolean') return { value: raw }
      if (raw === 'true' || raw === 'false') return { value: raw === 'true' }
      return bad
    case 'integer':
    case 'long': {
      const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN
      if (!Number.isSafeInteger(n)) return bad
      if (def.type === 'integer' && (n > 2147483647 || n < -2147483648)) return bad
      if (def.min !== undefined && n < def.min) return bad
      if (def.max !== undefined && n > def.max) return bad
      return { value: n }
    }
    case 'time':
      if (typeof raw === 'string' && TIME.test(raw)) return { value: raw }
      return bad
    case 'string':
      if (typeof raw !== 'string' && typeof raw !== 'number') return bad
      if (def.oneOf && !def.oneOf.includes(String(raw))) return bad
      return { value: String(raw) }
    case 'list': {
      const items = listItems(raw)
      if (!items || (def.maxItems !== undefined && items.length > def.maxItems)) return bad
      return { value: items }
    }
  }
}

/**
 * OpenSearch's list settings: a YAML/JSON list, or one string that is split at commas
 * (`path.repo: /a,/b` and `path.repo: ["/a", "/b"]` are the same), elements trimmed, empty ones dropped.
 */
function listItems(raw: unknown): string[] | undefined {
  const parts = Array.isArray(raw) ? raw : typeof raw === 'string' ? raw.split(',') : typeof raw === 'number' ? [raw] : undefined
  if (!parts?.every((p) => typeof p === 'string' || typeof p === 'number')) return undefined
  return parts.map((p) => String(p).trim()).filter(Boolean)
}

/** Time value in milliseconds ("5m" -> 300000). */
export function timeToMillis(value: string): number {
  const m = /^(-?\d+)(nanos|micros|ms|s|m|h|d)$/.exec(value)
  if (!m) throw new Error(`not a time value: ${value}`)
  const n = Number(m[1])
  const unit = { nanos: 1e-6, micros: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3, d: 86400e3 }[m[2] as 's']
  return n * unit
}

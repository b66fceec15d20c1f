/**
 * Time zones as OpenSearch names them (`time_zone` of date aggregations and of date ranges):
 * fixed offsets like `+01:00`, or IANA names with their daylight-saving rules.
 */
import { IllegalArgument } from '../errors'
import { Lru } from '../../lru'

/** A time zone: the offset (ms east of UTC) it has at an instant. */
export interface Zone {
  id: string
  offsetAt(utc: number): number
  /** The same offset at every instant (UTC, `+01:00`), unlike a region's daylight-saving rules. */
  fixed?: boolean
}

/**
 * Formatters by the zone name a caller wrote. Names are case-insensitive (`europe/paris` is a zone
 * too), so the names a caller can write are not few: the cache is bounded, least recently used out.
 */
export const ZONE_CACHE_MAX_ENTRIES = 256
const formatters = new Lru<string, Intl.DateTimeFormat>(ZONE_CACHE_MAX_ENTRIES)
/** Formatters held (for the test of the bound). */
export const zonesCached = (): number => formatters.size

export function zoneOf(id: string | undefined): Zone {
  if (id === undefined || id === 'UTC' || id === 'Z' || id === 'utc' || id === 'Etc/UTC') return { id: 'Z', offsetAt: () => 0, fixed: true }
  const m = /^(?:UTC|GMT)?([+-])(\d{1,2})(?::?(\d{2}))?$/.exec(id)
  if (m) {
    const off = (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) * 60_000
    return { id, offsetAt: () => off, fixed: true }
  }
  let f = formatters.get(id)
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: id,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      })
    } catch {
      throw new IllegalArgument(`Unknown time-zone ID: ${id}`)
    }
    formatters.set(id, f)
  }
  const fmt = f
  return {
    id,
    offsetAt(utc: number) {
      const parts = Object.fromEntries(fmt.formatToParts(new Date(utc)).map((p) => [p.type, p.value]))
      const local = Date.UTC(
        Number(parts.year),
        Number(parts.month) - 1,
        Number(parts.day),
        Number(parts.hour),
        Number(parts.minute),
        Number(parts.second),
      )
      return local - Math.floor(utc / 1000) * 1000
    },
  }
}

/** The UTC instant of a local wall-clock time in the zone (the earlier one in a DST overlap). */
export function fromLocal(local: number, zone: Zone): number {
  let utc = local - zone.offsetAt(local)
  utc = local - zone.offsetAt(utc)
  return utc
}

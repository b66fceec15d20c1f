/**
 * Date rounding for `date_histogram`: calendar units (minute ... year) and fixed intervals,
 * in a time zone (fixed offsets like `+01:00`, or IANA names with their daylight-saving rules),
 * and the key rendering OpenSearch uses (ISO with the zone's offset, or a `format`).
 */
import { IllegalArgument } from '../errors'
import { startOfUnit, type CalendarUnit } from '../query/dates'
import { fromLocal, type Zone, zoneOf } from '../query/zones'
import { formatPattern, isPattern, NAMED_PATTERNS } from '../query/date-pattern'

export type { CalendarUnit }

const CALENDAR: Record<string, CalendarUnit> = {
  '1s': 'second',
  second: 'second',
  '1m': 'minute',
  minute: 'minute',
  '1h': 'hour',
  hour: 'hour',
  '1d': 'day',
  day: 'day',
  '1w': 'week',
  week: 'week',
  '1M': 'month',
  month: 'month',
  '1q': 'quarter',
  quarter: 'quarter',
  '1y': 'year',
  year: 'year',
}

const FIXED_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }

export function calendarUnit(v: string): CalendarUnit | undefined {
  return CALENDAR[v]
}

/** `90m`, `1.5h`: milliseconds; calendar-only units (`w`, `M`, `q`, `y`) are refused, as in OpenSearch. */
export function fixedInterval(v: string, param = 'fixed_interval'): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(v.trim())
  if (!m)
    throw new IllegalArgument(
      `failed to parse setting [date_histogram.${param}] with value [${v}] as a time value: unit is missing or unrecognized`,
    )
  const ms = Number(m[1]) * FIXED_UNITS[m[2]]
  if (ms <= 0) throw new IllegalArgument(`[${param}] must be positive`)
  return ms
}

/** The start of the calendar unit containing `utc`, in the zone. */
export function roundCalendar(utc: number, unit: CalendarUnit, zone: Zone): number {
  const local = utc + zone.offsetAt(utc)
  const d = new Date(local)
  startOfUnit(d, unit)
  return fromLocal(d.getTime(), zone)
}

const FIXED_MILLIS: Partial<Record<CalendarUnit, number>> = { second: 1000, minute: 60_000, hour: 3_600_000 }
const CALENDAR_MONTHS: Partial<Record<CalendarUnit, number>> = { month: 1, quarter: 3, year: 12 }

/** The start of the next calendar unit after the one starting at `start`. */
export function nextCalendar(start: number, unit: CalendarUnit, zone: Zone): number {
  const fixed = FIXED_MILLIS[unit]
  if (fixed !== undefined) return start + fixed
  const local = new Date(start + zone.offsetAt(start))
  const months = CALENDAR_MONTHS[unit]
  if (months !== undefined) local.setUTCMonth(local.getUTCMonth() + months)
  else local.setUTCDate(local.getUTCDate() + (unit === 'week' ? 7 : 1))
  return fromLocal(local.getTime(), zone)
}

/** Fixed intervals are counted from the epoch in local time, as OpenSearch's fixed rounding does. */
export function roundFixed(utc: number, interval: number, offset: number, zone: Zone): number {
  const off = zone.offsetAt(utc)
  const local = utc + off - offset
  return Math.floor(local / interval) * interval + offset - off
}

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0')

/** A date value as an aggregation renders it without a time zone (`value_as_string`, a terms key): in `format`, else ISO. */
export const dateText = (ms: number, format?: string): string => formatInZone(ms, UTC, format)
const UTC = zoneOf('UTC')

/** OpenSearch's default rendering of a date key in a zone: `2020-01-01T00:00:00.000+01:00` (or `Z`). */
export function formatInZone(utc: number, zone: Zone, format?: string): string {
  const off = zone.offsetAt(utc)
  const d = new Date(utc + off)
  if (format === 'epoch_millis') return String(utc)
  if (format === 'epoch_second') return String(Math.floor(utc / 1000))
  const offset =
    off === 0 ? 'Z' : `${off < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(off) / 3_600_000))}:${pad((Math.abs(off) / 60_000) % 60)}`
  if (format === undefined || format.includes('date_optional_time') || format === 'date_time') {
    return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}${offset}`
  }
  // A Java pattern (date-pattern.ts); a built-in format's name this store does not render reads as the default.
  const first = format.split('||')[0]
  const pattern = Object.hasOwn(NAMED_PATTERNS, first) ? NAMED_PATTERNS[first] : isPattern(first) ? first : undefined
  return pattern === undefined ? formatInZone(utc, zone) : formatPattern(d, off, pattern)
}

import { type ExceptionCause, IllegalArgument } from '../errors'
import { fromLocal, type Zone } from './zones'
import { dateFieldFailure, isPattern, readPattern, utc } from './date-pattern'

/**
 * Dates as OpenSearch reads them with the default `strict_date_optional_time||epoch_millis`:
 * ISO-8601 strings (UTC unless they carry an offset), `yyyy/MM/dd HH:mm:ss`, and epoch millis;
 * a format's Java patterns as Java reads them (date-pattern.ts).
 * Returns epoch milliseconds or undefined when the value is not a date.
 */
const ISO =
  /^([+-]?\d{4,})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i
/** `strict_date_optional_time` (the default's): four-digit years, two-digit fields, `T` before the time. */
const STRICT_ISO = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?)?)?)?$/
const SLASHED = /^(\d{4})\/(\d{2})\/(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?()(?: ([+-]\d{2}:?\d{2}|Z))?$/

export function parseDate(value: unknown, format?: string, zone?: Zone, roundUp = false): number | undefined {
  const parts = format?.split('||')
  // A number is an instant already (the store reads its own values back as epoch milliseconds).
  if (parts === undefined || typeof value !== 'string' || !parts.some(isPattern)) return parseNamed(value, format, zone, roundUp)
  for (const part of parts) {
    const ms = isPattern(part)
      ? patternDate(value, part, zone, roundUp)
      : part.startsWith('epoch_') && !/^-?\d+(\.\d+)?$/.test(value)
        ? undefined
        : parseNamed(value, part, zone, roundUp)
    if (ms !== undefined) return ms
  }
  return undefined
}

/**
 * A value read with a Java pattern (date-pattern.ts), strictly as OpenSearch reads it; a pattern
 * with letters it does not read falls back to the ISO reading the store had for every pattern.
 */
function patternDate(value: string, pattern: string, zone: Zone | undefined, roundUp: boolean): number | undefined {
  const read = readPattern(value, pattern, zone, roundUp)
  if (read === 'unsupported') return parseNamed(value, undefined, zone, roundUp)
  return 'ms' in read ? read.ms : undefined
}

/** A value in a built-in format (`strict_date_optional_time`, `epoch_millis`, ...; ISO dates or epoch numbers), or the default ones. */
function parseNamed(value: unknown, format: string | undefined, zone: Zone | undefined, roundUp: boolean): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined
    return format?.includes('epoch_second') && !format.includes('epoch_millis') ? value * 1000 : Math.trunc(value)
  }
  if (typeof value !== 'string' || value === '') return undefined
  // Digits are epoch milliseconds where the format reads them so; four of them are a year to a date format before it.
  const epoch = format === undefined || format.includes('epoch')
  const yearFirst = value.length === 4 && (format === undefined || (!format.startsWith('epoch') && /date|year/.test(format)))
  if (/^-?\d+(\.\d+)?$/.test(value) && epoch && !yearFirst) {
    const n = Number(value)
    return format?.includes('epoch_second') && !format.includes('epoch_millis') ? n * 1000 : Math.trunc(n)
  }
  // Named, the default is strict (as documents and callers' queries read a mapping's default: malformed.ts,
  // query-guards.ts); unnamed, this store's own reads (keys, sort values) stay lenient.
  const strict = format !== undefined && format.includes('strict_date_optional_time')
  const m = strict ? STRICT_ISO.exec(value) : (ISO.exec(value) ?? SLASHED.exec(value))
  if (!m) return undefined
  const [, y, mo = '1', d = '1', h = '0', mi = '0', s = '0', frac = '', offset] = m
  const month = Number(mo)
  const day = Number(d)
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined
  let ms = utc(Number(y), month - 1, day, Number(h), Number(mi), Number(s), Number((frac + '000').slice(0, 3)))
  if (new Date(ms).getUTCDate() !== day) return undefined
  if (roundUp && frac === '') ms = lastMillisecond(ms, m)
  if (offset && offset.toUpperCase() !== 'Z') {
    const sign = offset[0] === '-' ? -1 : 1
    const digits = offset.slice(1).replace(':', '')
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0')) * 60_000
  } else if (!offset && zone) {
    // A wall-clock time without its own offset is read in the query's `time_zone`.
    ms = fromLocal(ms, zone)
  }
  return ms
}

/**
 * Rounding up, a date names the last millisecond of its finest component (OpenSearch's parser
 * fills what is missing with its largest value): `lte 2024-04-02` takes in the whole day,
 * `gt 2024-04` starts after April, `lte ...T10:15:30` keeps 10:15:30.999.
 */
function lastMillisecond(ms: number, m: RegExpExecArray): number {
  const [, , mo, d, h, mi, s] = m
  const end = new Date(ms)
  if (mo === undefined) end.setUTCFullYear(end.getUTCFullYear() + 1)
  else if (d === undefined) end.setUTCMonth(end.getUTCMonth() + 1)
  else if (h === undefined) end.setUTCDate(end.getUTCDate() + 1)
  else if (mi === undefined) end.setUTCHours(end.getUTCHours() + 1)
  else if (s === undefined) end.setUTCMinutes(end.getUTCMinutes() + 1)
  else end.setUTCSeconds(end.getUTCSeconds() + 1)
  return end.getTime() - 1
}

/** The format dynamic mapping gives a field first seen as a slashed date, and the one it prints with (OpenSearch's). */
const SLASHED_FORMAT = 'yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis'
const SLASHED_PRINT = 'yyyy/MM/dd HH:mm:ss'

/**
 * How dynamic mapping maps a string that is a date by OpenSearch's `dynamic_date_formats`: a
 * strict ISO date as a `date` of the default format, `yyyy/MM/dd[ HH:mm:ss]` with the format that
 * reads it; undefined for any other string (`2024-01-05 10:15` is text there).
 */
export function dynamicDate(s: string): { format?: string; print_format?: string } | undefined {
  if (/^\d{4}-\d{2}-\d{2}/.test(s)) return parseDate(s, 'strict_date_optional_time') === undefined ? undefined : {}
  if (/^\d{4}\/\d{2}\/\d{2}/.test(s) && parseDate(s, SLASHED_FORMAT) !== undefined)
    return { format: SLASHED_FORMAT, print_format: SLASHED_PRINT }
  return undefined
}

/** Strings that dynamic mapping turns into `date` fields (see dynamicDate). */
export const looksLikeDate = (s: string): boolean => dynamicDate(s) !== undefined

const UNIT = /^[yMwdhHms]$/

/**
 * Date math: `now-1d/d`, `2024-01-01||+1M/d`. `roundUp` picks the last millisecond of the rounded
 * unit (OpenSearch does so for `gt` and `lte`), otherwise its first millisecond. A `zone` (the
 * query's `time_zone`) reads dates without an offset of their own and places rounding and
 * calendar steps on its wall clock; `now` and epoch values are instants, the same in every zone.
 */
export function parseDateMath(value: unknown, roundUp: boolean, now: number, format?: string, zone?: Zone): number {
  if (typeof value === 'string') {
    let anchor: number | undefined
    let math = ''
    if (value.startsWith('now')) {
      anchor = now
      math = value.slice(3)
    } else {
      const at = value.indexOf('||')
      if (at >= 0) {
        anchor = parseDate(value.slice(0, at), format, zone)
        math = value.slice(at + 2)
      } else anchor = parseDate(value, format, zone, roundUp)
    }
    if (anchor === undefined) throw new IllegalArgument(`failed to parse date field [${value}]`)
    if (!math) return anchor
    if (!zone || (zone.fixed && zone.offsetAt(0) === 0)) return applyMath(anchor, math, roundUp)
    return fromLocal(applyMath(anchor + zone.offsetAt(anchor), math, roundUp), zone)
  }
  const ms = parseDate(value, format, zone)
  if (ms === undefined) throw new IllegalArgument(`failed to parse date field [${String(value)}]`)
  return ms
}

function applyMath(start: number, math: string, roundUp: boolean): number {
  const d = new Date(start)
  let i = 0
  while (i < math.length) {
    const op = math[i++]
    if (op === '/') {
      const unit = math[i++]
      if (!unit || !UNIT.test(unit)) throw new IllegalArgument(`unit [${unit}] not supported for date math [${math}]`)
      round(d, unit)
      if (roundUp) {
        add(d, unit, 1)
        d.setTime(d.getTime() - 1)
      }
      continue
    }
    if (op !== '+' && op !== '-') throw new IllegalArgument(`operator not supported for date math [${math}]`)
    let digits = ''
    while (i < math.length && /\d/.test(math[i])) digits += math[i++]
    const unit = math[i++]
    if (!unit || !UNIT.test(unit)) throw new IllegalArgument(`unit [${unit}] not supported for date math [${math}]`)
    add(d, unit, (op === '-' ? -1 : 1) * (digits === '' ? 1 : Number(digits)))
  }
  return d.getTime()
}

function add(d: Date, unit: string, n: number): void {
  switch (unit) {
    case 'y':
      d.setUTCFullYear(d.getUTCFullYear() + n)
      break
    case 'M':
      d.setUTCMonth(d.getUTCMonth() + n)
      break
    case 'w':
      d.setUTCDate(d.getUTCDate() + 7 * n)
      break
    case 'd':
      d.setUTCDate(d.getUTCDate() + n)
      break
    case 'h':
    case 'H':
      d.setTime(d.getTime() + n * 3_600_000)
      break
    case 'm':
      d.setTime(d.getTime() + n * 60_000)
      break
    case 's':
      d.setTime(d.getTime() + n * 1000)
      break
  }
}

/** A calendar unit, as date histograms name them. */
export type CalendarUnit = 'second' | 'minute' | 'hour' | 'day' | 'week' | 'month' | 'quarter' | 'year'

/** Moves `d` (read through its UTC fields) back to the start of its calendar unit; ISO weeks start on Monday. */
export function startOfUnit(d: Date, unit: CalendarUnit): void {
  if (unit === 'second') return void d.setUTCMilliseconds(0)
  if (unit === 'minute') return void d.setUTCSeconds(0, 0)
  if (unit === 'hour') return void d.setUTCMinutes(0, 0, 0)
  if (unit === 'week') d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7))
  else if (unit === 'month') d.setUTCDate(1)
  else if (unit === 'quarter') d.setUTCMonth(d.getUTCMonth() - (d.getUTCMonth() % 3), 1)
  else if (unit === 'year') d.setUTCMonth(0, 1)
  d.setUTCHours(0, 0, 0, 0)
}

/** Date math's rounding units (`/d`, `/M`, ...). */
const ROUNDING: Record<string, CalendarUnit> = {
  y: 'year',
  M: 'month',
  w: 'week',
  d: 'day',
  h: 'hour',
  H: 'hour',
  m: 'minute',
  s: 'second',
}

function round(d: Date, unit: string): void {
  const calendar = ROUNDING[unit]
  if (calendar) startOfUnit(d, calendar)
}

/**
 * Why a date query's value does not read as a date, as OpenSearch's parse_exception: its date
 * math's anchor (`abc` of `abc||+1d`) the format cannot read, caused by Java's failure; or its
 * date math itself (`now+1x`).
 */
export function dateValueFailure(v: unknown, format: string | undefined): ExceptionCause | undefined {
  try {
    parseDateMath(v, false, 0, format)
    return undefined
  } catch (e) {
    if (!(e instanceof IllegalArgument)) return undefined
    if (!e.reason.startsWith('failed to parse date field')) return { type: 'parse_exception', reason: e.reason }
    const text = String(v)
    const anchor = text.startsWith('now') || !text.includes('||') ? text : text.slice(0, text.indexOf('||'))
    const cause = dateFieldFailure(anchor, format)
    return { type: 'parse_exception', reason: `${cause.reason}: [${cause.reason}]`, caused_by: cause }
  }
}

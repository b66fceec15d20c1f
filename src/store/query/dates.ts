import { IllegalArgument } from '../errors'

/**
 * Dates as OpenSearch reads them with the default `strict_date_optional_time||epoch_millis`:
 * ISO-8601 strings (UTC unless they carry an offset), `yyyy/MM/dd HH:mm:ss`, and epoch millis.
 * Returns epoch milliseconds or undefined when the value is not a date.
 */
const ISO =
  /^([+-]?\d{4,})(?:-(\d{1,2})(?:-(\d{1,2})(?:[T ](\d{1,2})(?::(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?)?)?)?)?\s*(Z|[+-]\d{2}(?::?\d{2})?)?$/i
const SLASHED = /^(\d{4})\/(\d{2})\/(\d{2})(?: (\d{2}):(\d{2}):(\d{2}))?(?: ([+-]\d{2}:?\d{2}|Z))?$/

export function parseDate(value: unknown, format?: string): number | undefined {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined
    return format?.includes('epoch_second') && !format.includes('epoch_millis') ? value * 1000 : Math.trunc(value)
  }
  if (typeof value !== 'string' || value === '') return undefined
  if (/^-?\d+(\.\d+)?$/.test(value) && (value.length > 8 || format?.includes('epoch'))) {
    const n = Number(value)
    return format?.includes('epoch_second') && !format.includes('epoch_millis') ? n * 1000 : Math.trunc(n)
  }
  const m = ISO.exec(value) ?? SLASHED.exec(value)
  if (!m) return undefined
  const [, y, mo = '1', d = '1', h = '0', mi = '0', s = '0', frac = '', zone] = m
  const month = Number(mo)
  const day = Number(d)
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return undefined
  let ms = Date.UTC(Number(y), month - 1, day, Number(h), Number(mi), Number(s), Number((frac + '000').slice(0, 3)))
  if (new Date(ms).getUTCDate() !== day) return undefined
  if (zone && zone.toUpperCase() !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1
    const digits = zone.slice(1).replace(':', '')
    ms -= sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0')) * 60_000
  }
  return ms
}

/** Strings that dynamic mapping turns into `date` fields (OpenSearch's `dynamic_date_formats`). */
export function looksLikeDate(s: string): boolean {
  return (/^\d{4}-\d{2}-\d{2}(?:[T ]|$)/.test(s) || /^\d{4}\/\d{2}\/\d{2}(?: |$)/.test(s)) && parseDate(s) !== undefined
}

const UNIT = /^[yMwdhHms]$/

/**
 * Date math: `now-1d/d`, `2024-01-01||+1M/d`. `roundUp` picks the last millisecond of the rounded
 * unit (OpenSearch does so for `gt` and `lte`), otherwise its first millisecond.
 */
export function parseDateMath(value: unknown, roundUp: boolean, now: number, format?: string): number {
  if (typeof value === 'string') {
    let anchor: number | undefined
    let math = ''
    if (value.startsWith('now')) {
      anchor = now
      math = value.slice(3)
    } else {
      const at = value.indexOf('||')
      if (at >= 0) {
        anchor = parseDate(value.slice(0, at), format)
        math = value.slice(at + 2)
      } else anchor = parseDate(value, format)
    }
    if (anchor === undefined) throw new IllegalArgument(`failed to parse date field [${value}]`)
    return math ? applyMath(anchor, math, roundUp, value) : anchor
  }
  const ms = parseDate(value, format)
  if (ms === undefined) throw new IllegalArgument(`failed to parse date field [${String(value)}]`)
  return ms
}

function applyMath(start: number, math: string, roundUp: boolean, whole: string): number {
  const d = new Date(start)
  let i = 0
  while (i < math.length) {
    const op = math[i++]
    if (op === '/') {
      const unit = math[i++]
      if (!unit || !UNIT.test(unit)) throw new IllegalArgument(`unit [${unit}] not supported for date math [${whole}]`)
      round(d, unit)
      if (roundUp) {
        add(d, unit, 1)
        d.setTime(d.getTime() - 1)
      }
      continue
    }
    if (op !== '+' && op !== '-') throw new IllegalArgument(`operator not supported for date math [${whole}]`)
    let digits = ''
    while (i < math.length && /\d/.test(math[i])) digits += math[i++]
    const unit = math[i++]
    if (!unit || !UNIT.test(unit)) throw new IllegalArgument(`unit [${unit}] not supported for date math [${whole}]`)
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

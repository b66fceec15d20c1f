/**
 * Java date patterns (`dd/MM/yyyy HH:mm:ss`, `yyyyMMdd`, `yyyy-MM-dd'T'HH:mmXXX`) read as
 * OpenSearch reads a date field's `format` with them: Java's DateTimeFormatter, strict (a field
 * has its pattern's width, a year of four digits takes no fifth), fields a pattern lacks defaulted
 * (1970-01-01T00:00:00; a range's bound that rounds up takes 23:59:59.999), and its errors in
 * Java's words. The letters numeric fields, month and day names, AM/PM and offsets use are read;
 * a pattern with another letter (eras, week fields, zone names) is `unsupported`.
 */
import type { ExceptionCause } from '../errors'
import { fromLocal, type Zone } from './zones'

export type PatternToken = { letter: string; count: number } | { literal: string }

/** A pattern's tokens: a letter repeated, or literal text (quoted, or any other character). */
export function patternTokens(format: string): PatternToken[] {
  let cached = TOKENS.get(format)
  if (cached) return cached
  cached = []
  for (let i = 0; i < format.length;) {
    const c = format[i]
    if (c === "'") {
      const end = format.indexOf("'", i + 1)
      const lit = end < 0 ? format.slice(i + 1) : format.slice(i + 1, end)
      cached.push({ literal: lit === '' ? "'" : lit })
      i = end < 0 ? format.length : end + 1
    } else if (/[A-Za-z]/.test(c)) {
      let j = i
      while (format[j] === c) j++
      cached.push({ letter: c, count: j - i })
      i = j
    } else {
      cached.push({ literal: c })
      i++
    }
  }
  if (TOKENS.size >= 256) TOKENS.clear()
  TOKENS.set(format, cached)
  return cached
}
const TOKENS = new Map<string, PatternToken[]>()

/** What reading a text with a pattern came to: the instant, or Java's exception. */
export type PatternRead = { ms: number } | { error: { type: string; reason: string } } | 'unsupported'

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December']
const SHORT_MONTHS = MONTHS.map((m) => m.slice(0, 3))
const SHORT_DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
const READ = new Set('yuMLdDHhkKmsSaEeXxZ')

interface Fields {
  year?: number
  month?: number
  day?: number
  dayOfYear?: number
  hour?: number
  hour12?: number
  pm?: boolean
  minute?: number
  second?: number
  millis?: number
  offsetMs?: number
}

/**
 * `text` read with `pattern`, in `zone` when it names no offset (UTC when none is given); `roundUp`
 * fills the fields the pattern lacks with their last value (a range's `lte` / `gt` bound).
 */
export function readPattern(text: string, pattern: string, zone?: Zone, roundUp = false): PatternRead {
  const tokens = patternTokens(pattern)
  if (tokens.some((t) => 'letter' in t && !READ.has(t.letter))) return 'unsupported'
  const fields: Fields = {}
  const failAt = (at: number) => ({
    error: { type: 'date_time_parse_exception', reason: `Text '${text}' could not be parsed at index ${at}` },
  })
  let at = 0
  for (const [i, t] of tokens.entries()) {
    if ('literal' in t) {
      if (!text.startsWith(t.literal, at)) return failAt(at)
      at += t.literal.length
      continue
    }
    const next = readField(text, at, t.letter, t.count, fields, reservedAfter(tokens, i))
    if (next === undefined) return 'unsupported'
    if (next < 0) return failAt(at)
    at = next
  }
  if (at < text.length)
    return {
      error: { type: 'date_time_parse_exception', reason: `Text '${text}' could not be parsed, unparsed text found at index ${at}` },
    }
  return resolve(fields, zone, roundUp)
}

/**
 * Digits the fixed-width numeric fields right after token `i` need (`MMdd` after the `yyyy` of
 * `yyyyMMdd`): Java's adjacent value parsing leaves them to those fields.
 */
function reservedAfter(tokens: PatternToken[], i: number): number {
  let reserved = 0
  for (let j = i + 1; j < tokens.length; j++) {
    const t = tokens[j]
    if ('literal' in t || !'MdHhkKmsS'.includes(t.letter) || (t.count !== 2 && t.letter !== 'S')) break
    reserved += t.count
  }
  return reserved
}

/**
 * Reads one field at `at` into `fields`: where it ends, -1 when the text does not hold it there,
 * undefined for a width not read. `reserved`: the digits the fields after it need (reservedAfter).
 */
function readField(text: string, at: number, letter: string, count: number, fields: Fields, reserved: number): number | undefined {
  let run = 0
  while (at + run < text.length && isDigit(text.charCodeAt(at + run))) run++
  const digits = (min: number, max: number): [number, number] | undefined => {
    // Java's adjacent value parsing: a variable width leaves the digits reserved to the fields after it, down to its own minimum.
    const n = Math.min(run, min === max ? max : Math.max(min, Math.min(max, run - reserved)))
    return n < min ? undefined : [Number(text.slice(at, at + n)), at + n]
  }
  /** Java's NORMAL width (one letter): 1 to 19 digits; two letters: exactly two. */
  const numeric = (min = count, max = count === 1 ? 19 : count) => digits(min, max)
  const text_ = (names: string[]): [number, number] | undefined => {
    const i = names.findIndex((name) => text.startsWith(name, at))
    return i < 0 ? undefined : [i, at + names[i].length]
  }
  let read: [number, number] | undefined
  switch (letter) {
    case 'y':
    case 'u': {
      if (count === 2) {
        read = digits(2, 2)
        if (read) read[0] += 2000
      } else if (count >= 4) {
        // Java's EXCEEDS_PAD: the digits are read greedily, and more than the pattern's need a sign.
        read = digits(count, 19)
        if (read && read[1] - at !== count) read = undefined
      } else read = digits(count, 19)
      if (read) fields.year = read[0]
      break
    }
    case 'M':
    case 'L':
      if (count >= 5) return undefined
      // OpenSearch's root locale names a month by its short name at every text width (`MMMM` reads `Jan`).
      read = count >= 3 ? text_(SHORT_MONTHS) : numeric()
      if (read) fields.month = count >= 3 ? read[0] + 1 : read[0]
      break
    case 'd':
      read = numeric()
      if (read) fields.day = read[0]
      break
    case 'D':
      read = count === 1 ? digits(1, 19) : digits(count, 3)
      if (read) fields.dayOfYear = read[0]
      break
    case 'H':
    case 'k':
      read = numeric()
      if (read) fields.hour = letter === 'k' && read[0] === 24 ? 0 : read[0]
      break
    case 'h':
    case 'K':
      read = numeric()
      if (read) fields.hour12 = letter === 'h' && read[0] === 12 ? 0 : read[0]
      break
    case 'm':
      read = numeric()
      if (read) fields.minute = read[0]
      break
    case 's':
      read = numeric()
      if (read) fields.second = read[0]
      break
    case 'S': {
      read = digits(count, count)
      if (read) fields.millis = Number(text.slice(at, read[1]).padEnd(3, '0').slice(0, 3))
      break
    }
    case 'a':
      read = text_(['AM', 'PM'])
      if (read) fields.pm = read[0] === 1
      break
    case 'E':
    case 'e':
      if (letter === 'e' && count <= 2) return undefined
      read = count <= 4 ? text_(SHORT_DAYS) : undefined
      break
    case 'X':
    case 'x':
    case 'Z':
      return readOffset(text, at, letter, count, fields)
    default:
      return undefined
  }
  return read ? read[1] : -1
}

/** An offset (`X`: Z or +HH[mm], `XX` +HHmm, `XXX` +HH:mm; `x` the same without Z; `Z` +HHmm, `ZZZZZ` +HH:mm or Z). */
function readOffset(text: string, at: number, letter: string, count: number, fields: Fields): number | undefined {
  if (letter === 'Z' && count === 4) return undefined
  const zulu = letter === 'X' || (letter === 'Z' && count === 5)
  if (zulu && text[at] === 'Z') {
    fields.offsetMs = 0
    return at + 1
  }
  const sign = text[at] === '+' ? 1 : text[at] === '-' ? -1 : 0
  if (sign === 0) return -1
  const colon = (letter === 'Z' && count === 5) || count === 3 || count === 5
  const hh = text.slice(at + 1, at + 3)
  if (!/^\d\d$/.test(hh)) return -1
  let end = at + 3
  let mm = '00'
  if (colon) {
    if (text[end] !== ':' || !/^\d\d$/.test(text.slice(end + 1, end + 3))) return -1
    mm = text.slice(end + 1, end + 3)
    end += 3
  } else if (/^\d\d$/.test(text.slice(end, end + 2))) {
    mm = text.slice(end, end + 2)
    end += 2
  } else if (!(letter !== 'Z' && count === 1)) return -1
  fields.offsetMs = sign * (Number(hh) * 60 + Number(mm)) * 60_000
  return end
}

const isDigit = (c: number) => c >= 48 && c <= 57

/** Date.UTC for every year: Date.UTC reads 0-99 as 1900-1999. */
export function utc(year: number, month: number, day = 1, hour = 0, minute = 0, second = 0, ms = 0): number {
  const d = new Date(Date.UTC(2000, month, day, hour, minute, second, ms))
  d.setUTCFullYear(year + d.getUTCFullYear() - 2000)
  return d.getTime()
}

/** Java's range checks, the defaults of the fields the pattern lacks, and the instant. */
function resolve(f: Fields, zone: Zone | undefined, roundUp: boolean): PatternRead {
  const invalid = (field: string, range: string, v: number) => ({
    error: { type: 'date_time_exception', reason: `Invalid value for ${field} (valid values ${range}): ${v}` },
  })
  if (f.month !== undefined && (f.month < 1 || f.month > 12)) return invalid('MonthOfYear', '1 - 12', f.month)
  if (f.day !== undefined && (f.day < 1 || f.day > 31)) return invalid('DayOfMonth', '1 - 28/31', f.day)
  if (f.hour !== undefined && f.hour > 23) return invalid('HourOfDay', '0 - 23', f.hour)
  if (f.hour12 !== undefined && f.hour12 > 11) return invalid('ClockHourOfAmPm', '1 - 12', f.hour12)
  if (f.minute !== undefined && f.minute > 59) return invalid('MinuteOfHour', '0 - 59', f.minute)
  if (f.second !== undefined && f.second > 59) return invalid('SecondOfMinute', '0 - 59', f.second)
  const year = f.year ?? 1970
  const last = (a: number | undefined, atEnd: number) => a ?? (roundUp ? atEnd : 0)
  let month: number
  let day: number
  if (f.dayOfYear !== undefined && f.month === undefined) {
    const d = new Date(utc(year, 0, f.dayOfYear))
    if (d.getUTCFullYear() !== year) return invalid('DayOfYear', '1 - 365/366', f.dayOfYear)
    month = d.getUTCMonth() + 1
    day = d.getUTCDate()
  } else {
    // Rounding up, OpenSearch's pattern parser fills only the time of day with its last value.
    month = f.month ?? 1
    const monthDays = new Date(utc(year, month, 0)).getUTCDate()
    day = f.day ?? 1
    if (day > monthDays)
      return { error: { type: 'date_time_exception', reason: `Invalid date '${MONTHS[month - 1].toUpperCase()} ${day}'` } }
  }
  const hour = f.hour ?? (f.hour12 !== undefined ? f.hour12 + (f.pm ? 12 : 0) : roundUp ? 23 : 0)
  const local = utc(year, month - 1, day, hour, last(f.minute, 59), last(f.second, 59), last(f.millis, 999))
  if (f.offsetMs !== undefined) return { ms: local - f.offsetMs }
  return { ms: zone ? fromLocal(local, zone) : local }
}

/** Built-in formats OpenSearch renders as a pattern would (their strict_ twins alike); their reading stays the store's ISO one. */
export const NAMED_PATTERNS: Record<string, string> = Object.fromEntries(
  Object.entries({
    date: 'yyyy-MM-dd',
    year_month_day: 'yyyy-MM-dd',
    year_month: 'yyyy-MM',
    year: 'yyyy',
    basic_date: 'yyyyMMdd',
    hour_minute: 'HH:mm',
    hour_minute_second: 'HH:mm:ss',
    date_hour: "yyyy-MM-dd'T'HH",
    date_hour_minute: "yyyy-MM-dd'T'HH:mm",
    date_hour_minute_second: "yyyy-MM-dd'T'HH:mm:ss",
    date_hour_minute_second_millis: "yyyy-MM-dd'T'HH:mm:ss.SSS",
    date_time_no_millis: "yyyy-MM-dd'T'HH:mm:ssXXX",
    basic_date_time: "yyyyMMdd'T'HHmmss.SSSZ",
    basic_date_time_no_millis: "yyyyMMdd'T'HHmmssZ",
  }).flatMap(([name, pattern]) => [
    [name, pattern],
    [`strict_${name}`, pattern],
  ]),
)

/** Whether a format is a pattern (`yyyy`), not a built-in format's name (`strict_date_optional_time`, `date`). */
export const isPattern = (format: string): boolean => !(/^[a-z_]+$/.test(format) && (format.includes('_') || NAMED.has(format)))
const NAMED = new Set(['date', 'time', 'year', 'hour', 'week_date', 'date_time'])

/**
 * What Java says of a text a format cannot read (the `date_time_parse_exception` under a date
 * query's parse_exception): several formats fail "with all enclosed parsers", one pattern as it
 * read the text.
 */
export function patternFailure(text: string, format: string | undefined): { type: string; reason: string } {
  const all = { type: 'date_time_parse_exception', reason: 'Failed to parse with all enclosed parsers' }
  if (format === undefined || format.includes('||') || !isPattern(format)) return all
  const read = readPattern(text, format)
  return read !== 'unsupported' && 'error' in read ? read.error : all
}

/** A date field's default format, as OpenSearch names it in its errors. */
export const DEFAULT_DATE_FORMAT = 'strict_date_optional_time||epoch_millis'

/**
 * Why a date field cannot read `text`, as OpenSearch words it under a document's mapper_parsing_exception
 * or a query's parse_exception: an illegal_argument_exception naming the format, caused by Java's failure.
 */
export function dateFieldFailure(text: string, format: string | undefined): ExceptionCause {
  return {
    type: 'illegal_argument_exception',
    reason: `failed to parse date field [${text}] with format [${format ?? DEFAULT_DATE_FORMAT}]`,
    caused_by: patternFailure(text, format),
  }
}

const pad = (n: number, width: number) => String(Math.abs(n)).padStart(width, '0')

/**
 * An instant rendered with a pattern as OpenSearch renders doc values and aggregation keys:
 * `local` is the instant on the zone's wall clock (as UTC fields), `offsetMs` the zone's offset.
 */
export function formatPattern(local: Date, offsetMs: number, pattern: string): string {
  const offset = (colon: boolean, zulu: boolean, minutes = true) => {
    if (offsetMs === 0 && zulu) return 'Z'
    const abs = Math.abs(offsetMs) / 60_000
    const sep = colon ? ':' : ''
    const mm = Math.floor(abs % 60)
    return `${offsetMs < 0 ? '-' : '+'}${pad(Math.floor(abs / 60), 2)}${minutes || mm !== 0 ? `${sep}${pad(mm, 2)}` : ''}`
  }
  return patternTokens(pattern)
    .map((t) => {
      if ('literal' in t) return t.literal
      const { letter, count } = t
      switch (letter) {
        case 'y':
        case 'u': {
          const y = local.getUTCFullYear()
          return count === 2 ? pad(y % 100, 2) : `${y < 0 ? '-' : count >= 4 && y > 9999 ? '+' : ''}${pad(y, count)}`
        }
        case 'M':
        case 'L':
          return count >= 3 ? SHORT_MONTHS[local.getUTCMonth()] : pad(local.getUTCMonth() + 1, count)
        case 'd':
          return pad(local.getUTCDate(), count)
        case 'D': {
          const day = Math.floor((local.getTime() - utc(local.getUTCFullYear(), 0, 1)) / 86_400_000) + 1
          return pad(day, count)
        }
        case 'H':
          return pad(local.getUTCHours(), count)
        case 'k':
          return pad(local.getUTCHours() || 24, count)
        case 'h':
          return pad(local.getUTCHours() % 12 || 12, count)
        case 'K':
          return pad(local.getUTCHours() % 12, count)
        case 'm':
          return pad(local.getUTCMinutes(), count)
        case 's':
          return pad(local.getUTCSeconds(), count)
        case 'S':
          return pad(local.getUTCMilliseconds(), 3).padEnd(count, '0').slice(0, count)
        case 'a':
          return local.getUTCHours() < 12 ? 'AM' : 'PM'
        case 'E':
          return SHORT_DAYS[(local.getUTCDay() + 6) % 7]
        case 'X':
          return offset(count >= 3, true, count !== 1)
        case 'x':
          return offset(count >= 3, false, count !== 1)
        case 'Z':
          return count === 5 ? offset(true, true) : offset(false, false)
        default:
          return letter.repeat(count)
      }
    })
    .join('')
}

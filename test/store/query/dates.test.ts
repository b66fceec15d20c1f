// Date parsing as OpenSearch's date math parser reads a query's bounds: partial dates rounded up
// to their last millisecond, and the `time_zone` of a range (wall-clock times without an offset
// read in it, rounding on its calendar, `now` and explicit offsets untouched).
import { describe, expect, test } from 'bun:test'
import { parseDate, parseDateMath } from '../../../src/store/query/dates'
import { ZONE_CACHE_MAX_ENTRIES, zoneOf, zonesCached } from '../../../src/store/query/zones'

const utc = (s: string) => Date.parse(s)

describe('rounding up a partial date', () => {
  test('names the last millisecond of its finest component', () => {
    expect(parseDate('2024-04-02', undefined, undefined, true)).toBe(utc('2024-04-02T23:59:59.999Z'))
    expect(parseDate('2024-04', undefined, undefined, true)).toBe(utc('2024-04-30T23:59:59.999Z'))
    expect(parseDate('2024', undefined, undefined, true)).toBe(utc('2024-12-31T23:59:59.999Z'))
    expect(parseDate('2024-04-02T10', undefined, undefined, true)).toBe(utc('2024-04-02T10:59:59.999Z'))
    expect(parseDate('2024-04-02T10:15', undefined, undefined, true)).toBe(utc('2024-04-02T10:15:59.999Z'))
    expect(parseDate('2024-04-02T10:15:30Z', undefined, undefined, true)).toBe(utc('2024-04-02T10:15:30.999Z'))
    expect(parseDate('2024/04/02', undefined, undefined, true)).toBe(utc('2024-04-02T23:59:59.999Z'))
  })

  test('leaves a date down to the millisecond, an epoch value and a date down as they are', () => {
    expect(parseDate('2024-04-02T10:15:30.250Z', undefined, undefined, true)).toBe(utc('2024-04-02T10:15:30.250Z'))
    expect(parseDate(1712052930000, undefined, undefined, true)).toBe(1712052930000)
    expect(parseDate('2024-04-02')).toBe(utc('2024-04-02T00:00:00Z'))
  })

  test('is what gt and lte read; an anchor before || is read rounded down', () => {
    expect(parseDateMath('2024-04-02', true, 0)).toBe(utc('2024-04-02T23:59:59.999Z'))
    expect(parseDateMath('2024-04-02', false, 0)).toBe(utc('2024-04-02T00:00:00Z'))
    expect(parseDateMath('2024-04-02||+1d', true, 0)).toBe(utc('2024-04-03T00:00:00Z'))
  })

  test('an offset of a slashed date is read as one (it was taken for milliseconds)', () => {
    expect(parseDate('2024/04/02 10:00:00 +02:00')).toBe(utc('2024-04-02T08:00:00Z'))
  })
})

describe('time_zone', () => {
  const paris = zoneOf('Europe/Paris')
  const plusFive = zoneOf('+05:30')

  test('reads a wall-clock time without an offset in the zone', () => {
    expect(parseDate('2024-04-02T10:00:00', undefined, plusFive)).toBe(utc('2024-04-02T04:30:00Z'))
    expect(parseDate('2024-01-15', undefined, paris)).toBe(utc('2024-01-14T23:00:00Z'))
    // After the change to summer time (2024-03-31), Paris is two hours ahead.
    expect(parseDate('2024-04-02', undefined, paris)).toBe(utc('2024-04-01T22:00:00Z'))
    expect(parseDate('2024-04-02', undefined, paris, true)).toBe(utc('2024-04-02T21:59:59.999Z'))
  })

  test('leaves explicit offsets, epoch values and now alone', () => {
    expect(parseDate('2024-04-02T10:00:00Z', undefined, plusFive)).toBe(utc('2024-04-02T10:00:00Z'))
    expect(parseDate('2024-04-02T10:00:00-01:00', undefined, plusFive)).toBe(utc('2024-04-02T11:00:00Z'))
    expect(parseDate(1712052930000, undefined, plusFive)).toBe(1712052930000)
    const now = utc('2024-04-02T01:00:00Z')
    expect(parseDateMath('now', false, now, undefined, plusFive)).toBe(now)
    expect(parseDateMath('now-1h', false, now, undefined, paris)).toBe(now - 3_600_000)
  })

  test('rounds on the zone calendar', () => {
    const now = utc('2024-04-02T01:00:00Z') // 06:30 in +05:30, 03:00 in Paris
    expect(parseDateMath('now/d', false, now, undefined, plusFive)).toBe(utc('2024-04-01T18:30:00Z'))
    expect(parseDateMath('now/d', true, now, undefined, plusFive)).toBe(utc('2024-04-02T18:29:59.999Z'))
    expect(parseDateMath('now/d', false, now, undefined, paris)).toBe(utc('2024-04-01T22:00:00Z'))
    // The day of the change is 23 hours long in Paris.
    expect(parseDateMath('2024-03-31T12:00:00||/d', false, 0, undefined, paris)).toBe(utc('2024-03-30T23:00:00Z'))
    expect(parseDateMath('2024-03-31T12:00:00||/d', true, 0, undefined, paris)).toBe(utc('2024-03-31T21:59:59.999Z'))
  })
})

test('the zones a caller names are cached within a bound (a name in any case is a zone)', () => {
  const recase = (i: number) => [...'europe/paris'].map((c, k) => ((i >> k) & 1 ? c.toUpperCase() : c)).join('')
  for (let i = 0; i < 2 * ZONE_CACHE_MAX_ENTRIES; i++) expect(zoneOf(recase(i)).offsetAt(Date.UTC(2026, 6, 1))).toBe(7_200_000)
  expect(zonesCached()).toBe(ZONE_CACHE_MAX_ENTRIES)
})

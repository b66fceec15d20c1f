/**
 * Java's DecimalFormat, the part OpenSearch's `format` of a numeric aggregation result uses
 * (DocValueFormat.Decimal): `#` and `0` digits, `,` grouping, `.` and the fraction's minimum and
 * maximum digits, literal prefix and suffix text, `%` (times 100). Rounding is Java's default,
 * half-even on the double's exact value (2332.25 with "0.0" is "2332.2").
 */
import { IllegalArgument } from '../errors'

export type DecimalFormat = (n: number) => string

interface Pattern {
  prefix: string
  suffix: string
  minInt: number
  minFrac: number
  maxFrac: number
  /** Digits per group (0: no grouping). */
  group: number
  scale: number
}

export function decimalFormat(pattern: string): DecimalFormat {
  const p = parsePattern(pattern)
  return (n) => {
    if (Number.isNaN(n)) return 'NaN'
    const negative = n < 0 || Object.is(n, -0)
    if (!Number.isFinite(n)) return `${negative ? '-' : ''}${p.prefix}∞${p.suffix}`
    const [int, frac] = roundHalfEven(Math.abs(n) * p.scale, p.maxFrac)
    let digits = int.replace(/^0+/, '').padStart(p.minInt, '0')
    if (p.group > 0) digits = digits.replace(new RegExp(`\\B(?=(\\d{${p.group}})+$)`, 'g'), ',')
    const fraction = frac.replace(/0+$/, '').padEnd(p.minFrac, '0')
    const body = fraction === '' ? digits || '0' : `${digits}.${fraction}`
    return `${negative ? '-' : ''}${p.prefix}${body}${p.suffix}`
  }
}

function parsePattern(pattern: string): Pattern {
  // The negative subpattern (after `;`) only changes the sign's text, which stays `-` here.
  const positive = pattern.split(';')[0]
  const m = /^([^#0,.]*)([#0,.]+)(.*)$/.exec(positive)
  if (!m || /E/.test(m[2]) || m[2].split('.').length > 2) throw new IllegalArgument(`Malformed pattern "${pattern}"`)
  const [intPart, fracPart = ''] = m[2].split('.')
  const lastComma = intPart.lastIndexOf(',')
  const unquote = (s: string) => s.replace(/'([^']*)'/g, '$1')
  const affixes = m[1] + m[3]
  return {
    prefix: unquote(m[1]),
    suffix: unquote(m[3]),
    minInt: (intPart.match(/0/g) ?? []).length,
    minFrac: (fracPart.match(/0/g) ?? []).length,
    maxFrac: fracPart.length,
    group: lastComma < 0 ? 0 : intPart.length - lastComma - 1,
    scale: affixes.includes('%') ? 100 : affixes.includes('‰') ? 1000 : 1,
  }
}

/** The integer and fraction digits of a non-negative double rounded half-even to `places` decimals. */
function roundHalfEven(x: number, places: number): [string, string] {
  // toFixed gives the exact decimal expansion up to 100 places, enough to see a true tie.
  if (x >= 1e21) return [BigInt(x).toString(), '0'.repeat(places)]
  const [int, frac] = x.toFixed(100).split('.')
  const kept = int + frac.slice(0, places)
  const rest = frac.slice(places)
  const half = rest[0] > '5' || (rest[0] === '5' && (/[1-9]/.test(rest.slice(1)) || Number(kept[kept.length - 1]) % 2 === 1))
  const rounded = half ? (BigInt(kept) + 1n).toString().padStart(kept.length, '0') : kept
  const cut = rounded.length - places
  return [rounded.slice(0, cut), rounded.slice(cut)]
}

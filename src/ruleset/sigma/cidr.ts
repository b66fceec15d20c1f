/**
 * `cidr`: on a field mapped as `ip` OpenSearch takes the network in a term query; on keyword
 * fields an IPv4 network is expanded into dotted prefixes (pySigma's expansion). IPv6 text has
 * several spellings of one address, so prefixes cannot express it: on other fields an IPv6
 * network becomes the private `_cidr` node, which parses each value as an address.
 */
import { SigmaInvalid } from './errors'
import { cidr, type Query, or, term, wildcard } from './dsl'

export interface Network {
  version: 4 | 6
  text: string
  groups: number[]
  prefix: number
}

function parseV4(text: string): number[] | undefined {
  const parts = text.split('.')
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) < 256)) return undefined
  return parts.map(Number)
}

/** Eight 16-bit groups, or undefined. Accepts `::` and a trailing dotted IPv4. */
function parseV6(text: string): number[] | undefined {
  const colon = text.lastIndexOf(':')
  if (text.includes('.')) {
    // `::ffff:1.2.3.4`: the dotted tail stands for the last two groups.
    const bytes = parseV4(text.slice(colon + 1))
    if (!bytes || colon < 0) return undefined
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16)
    text = `${text.slice(0, colon + 1)}${hex(bytes[0], bytes[1])}:${hex(bytes[2], bytes[3])}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const group = (g: string) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)
  const split = (h: string) => (h === '' ? [] : h.split(':').map(group))
  const left = split(halves[0])
  const right = halves.length === 2 ? split(halves[1]) : []
  const known = left.length + right.length
  if (halves.length === 1 ? known !== 8 : known > 7) return undefined
  const groups = [...left, ...Array(8 - known).fill(0), ...right]
  return groups.some(Number.isNaN) ? undefined : groups
}

export function parseNetwork(value: unknown): Network {
  const text = String(value)
  const m = /^([^/]+)(?:\/(\d{1,3}))?$/.exec(text)
  const v4 = m ? parseV4(m[1]) : undefined
  const v6 = m && !v4 ? parseV6(m[1]) : undefined
  if (!m || (!v4 && !v6)) throw new SigmaInvalid("modifier 'cidr'", `'${text}' is not an IP network`)
  const version = v4 ? 4 : 6
  const bits = version === 4 ? 8 : 16
  const groups = (v4 ?? v6)!
  const width = groups.length * bits
  const prefix = m[2] === undefined ? width : Number(m[2])
  if (prefix > width) throw new SigmaInvalid("modifier 'cidr'", `prefix of '${text}' is longer than ${width} bits`)
  groups.forEach((g, i) => {
    const keep = Math.min(bits, Math.max(0, prefix - i * bits))
    if ((g & ((1 << (bits - keep)) - 1)) !== 0) throw new SigmaInvalid("modifier 'cidr'", `'${text}' has host bits set`)
  })
  return { version, text: `${m[1]}/${prefix}`, groups, prefix }
}

export function cidrQuery(field: string, net: Network, ipField: boolean): Query {
  if (ipField) return term(field, net.text)
  if (net.version === 6) return cidr(field, net.text)
  const whole = Math.floor(net.prefix / 8)
  const rest = net.prefix % 8
  const heads: number[][] =
    rest === 0
      ? [net.groups.slice(0, whole)]
      : Array.from({ length: 1 << (8 - rest) }, (_, k) => [...net.groups.slice(0, whole), net.groups[whole] + k])
  return or(
    heads.map((h) =>
      h.length === 4 ? term(field, h.join('.')) : h.length === 0 ? wildcard(field, '*') : wildcard(field, `${h.join('.')}.*`),
    ),
  )
}

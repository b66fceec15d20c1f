/**
 * IoC types as the peer names them (`ipv4-addr`, `ipv6-addr`, `domain-name`, `hashes`) plus `url`,
 * which the CTI feed carries, and the key each value is indexed and probed under. Feed types
 * (`ip`, `ip:port`, `domain`, `md5_hash`, ...) map onto them; the address family of an `ip` comes
 * from its value, since feeds label both families alike.
 */
export const IOC_TYPES = ['ipv4-addr', 'ipv6-addr', 'domain-name', 'hashes', 'url'] as const
export type IocType = (typeof IOC_TYPES)[number]

const FEED_TYPES: Record<string, 'ip' | 'domain-name' | 'hashes' | 'url'> = {
  ip: 'ip',
  'ip:port': 'ip',
  ipv4: 'ip',
  ipv6: 'ip',
  'ipv4-addr': 'ip',
  'ipv6-addr': 'ip',
  cidr: 'ip',
  domain: 'domain-name',
  'domain-name': 'domain-name',
  hostname: 'domain-name',
  fqdn: 'domain-name',
  url: 'url',
  uri: 'url',
  hash: 'hashes',
  hashes: 'hashes',
  md5: 'hashes',
  sha1: 'hashes',
  sha256: 'hashes',
  md5_hash: 'hashes',
  sha1_hash: 'hashes',
  sha256_hash: 'hashes',
  'file-hash': 'hashes',
}

/** The feed types an IoC type is stored under (addresses: both families' types alike). */
export function feedTypesOf(type: IocType): string[] {
  const kind = type === 'ipv4-addr' || type === 'ipv6-addr' ? 'ip' : type
  return Object.keys(FEED_TYPES).filter((t) => FEED_TYPES[t] === kind)
}

export const isIocType = (t: string): t is IocType => (IOC_TYPES as readonly string[]).includes(t)

/** IPv4 dotted quad as an unsigned 32-bit number (by character codes: it runs for every event value). */
export function parseIpv4(s: string): number | undefined {
  const len = s.length
  if (len < 7 || len > 15) return undefined
  let n = 0
  let part = 0
  let digits = 0
  let dots = 0
  for (let i = 0; i < len; i++) {
    const c = s.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      part = part * 10 + (c - 48)
      if (++digits > 3 || part > 255) return undefined
    } else if (c === 46) {
      if (digits === 0 || ++dots > 3) return undefined
      n = n * 256 + part
      part = 0
      digits = 0
    } else return undefined
  }
  if (dots !== 3 || digits === 0) return undefined
  return n * 256 + part
}

/** IPv6 (with `::` and an embedded IPv4 tail) as 32 hex digits. */
export function parseIpv6(s: string): string | undefined {
  if (!s.includes(':')) return undefined
  let text = s.toLowerCase()
  const zone = text.indexOf('%')
  if (zone >= 0) text = text.slice(0, zone)
  const tail = text.lastIndexOf(':')
  const last = text.slice(tail + 1)
  if (last.includes('.')) {
    const v4 = parseIpv4(last)
    if (v4 === undefined) return undefined
    text = `${text.slice(0, tail + 1)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return undefined
  const group = (h: string) => (h === '' ? [] : h.split(':'))
  const head = group(halves[0])
  const rest = halves.length === 2 ? group(halves[1]) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  let hex = ''
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return undefined
    hex += g.padStart(4, '0')
  }
  return hex
}

/** An address or network: family, address (number for IPv4, hex for IPv6) and prefix length. */
export type IpKey = { family: 4; addr: number; bits: number } | { family: 6; addr: string; bits: number }

/** `a.b.c.d`, `a.b.c.d:port`, `a.b.c.d/len`, `v6`, `[v6]:port`, `v6/len`. */
export function parseIp(value: string): IpKey | undefined {
  let s = value.trim()
  let bits: number | undefined
  const slash = s.indexOf('/')
  if (slash >= 0) {
    const len = s.slice(slash + 1)
    if (!/^\d{1,3}$/.test(len)) return undefined
    bits = Number(len)
    s = s.slice(0, slash)
  }
  if (s.startsWith('[')) {
    const end = s.indexOf(']')
    if (end < 0) return undefined
    s = s.slice(1, end)
  } else if (/^[\d.]+:\d+$/.test(s)) s = s.slice(0, s.indexOf(':'))
  const v4 = parseIpv4(s)
  if (v4 !== undefined) {
    const b = bits ?? 32
    return b > 32 ? undefined : { family: 4, addr: maskV4(v4, b), bits: b }
  }
  const v6 = parseIpv6(s)
  if (v6 === undefined) return undefined
  const b = bits ?? 128
  return b > 128 ? undefined : { family: 6, addr: maskV6(v6, b), bits: b }
}

export const maskV4 = (addr: number, bits: number) => (bits === 0 ? 0 : (addr & (0xffffffff << (32 - bits))) >>> 0)

export function maskV6(hex: string, bits: number): string {
  if (bits >= 128) return hex
  const full = bits >> 2
  const rem = bits & 3
  let out = hex.slice(0, full)
  if (rem > 0) out += (parseInt(hex[full], 16) & (0xf << (4 - rem)) & 0xf).toString(16)
  return out.padEnd(32, '0')
}

/** A domain as compared: lower case, no trailing dot. */
export function normalizeDomain(value: string): string | undefined {
  const d = value.trim().toLowerCase().replace(/\.$/, '')
  return d.length > 0 && d.length <= 253 && /^[a-z0-9_*-]+(\.[a-z0-9_-]+)*$/.test(d) ? d.replace(/^\*\./, '') : undefined
}

/** A URL as compared: scheme and host lower case, the rest as given, no trailing slash of an empty path. */
export function normalizeUrl(value: string): string | undefined {
  const s = value.trim()
  const m = /^([a-z][a-z0-9+.-]*):\/\/([^/?#]*)(.*)$/i.exec(s)
  if (!m) return undefined
  const rest = m[3] === '/' ? '' : m[3]
  return `${m[1].toLowerCase()}://${m[2].toLowerCase()}${rest}`
}

export function normalizeHash(value: string): string | undefined {
  const h = value.trim().toLowerCase()
  return /^[0-9a-f]{32}$|^[0-9a-f]{40}$|^[0-9a-f]{64}$|^[0-9a-f]{128}$/.test(h) ? h : undefined
}

/** Where a value is looked up: each probe answers true to end the walk (a filter needs one hit, the index every one). */
export interface KeyProbe {
  /** An address, to test under every prefix length listed. */
  v4(addr: number): boolean
  v6(hex: string): boolean
  /** A domain (the value's, then each parent's: its key from `start`), a hash or a URL, exactly. */
  exact(type: 'domain-name' | 'hashes' | 'url', key: string, start: number): boolean
}

/**
 * The keys an event value is looked up under as `type`: an address (either family, whatever the
 * field's declared type), a host name and its parent domains, a hash or URL as normalized. The one
 * walk of the IoC index's lookups and of its shared filter's (ioc-filter.ts), so both ask the same;
 * true when a probe ended it.
 */
export function probeKeys(type: IocType, value: string, probe: KeyProbe): boolean {
  if (type === 'ipv4-addr' || type === 'ipv6-addr') {
    const s = value.trim()
    const v4 = parseIpv4(s)
    if (v4 !== undefined) return probe.v4(v4)
    const v6 = parseIpv6(s)
    return v6 !== undefined && probe.v6(v6)
  }
  if (type === 'domain-name') {
    const d = normalizeDomain(value)
    if (d === undefined) return false
    for (let start = 0; ;) {
      if (probe.exact(type, d, start)) return true
      const dot = d.indexOf('.', start)
      if (dot < 0) return false
      start = dot + 1
    }
  }
  const key = type === 'hashes' ? normalizeHash(value) : normalizeUrl(value)
  return key !== undefined && probe.exact(type, key, 0)
}

/** The peer's type of a feed IoC (`ip` values by their family), or undefined for a type or value not matched. */
export function iocTypeOf(feedType: string, value: string): IocType | undefined {
  const t = FEED_TYPES[feedType.trim().toLowerCase()]
  if (t === 'ip') {
    const ip = parseIp(value)
    return ip ? (ip.family === 4 ? 'ipv4-addr' : 'ipv6-addr') : undefined
  }
  if (t === 'domain-name') return normalizeDomain(value) ? t : undefined
  if (t === 'hashes') return normalizeHash(value) ? t : undefined
  if (t === 'url') return normalizeUrl(value) ? t : undefined
  return undefined
}
